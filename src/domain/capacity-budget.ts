// An organization's GPU-hour budget as the capacity ConfigMaps give it (docs/capacity.md): what the
// capacity flow parses and computes with, and what the read side is given by its BudgetSource port.

export type BudgetPeriod = 'month' | 'quarter' | 'year' | 'total';


export interface CapacityBudget {
  organizationId: string;
  period: BudgetPeriod;
  allocatedGpuHours: number;
  /** Money allocated per period, in the currency of the organization's prices; absent when the file states none. */
  allocatedCost?: number;
  pools: { poolId: string; name: string; allocatedGpuHours: number; allocatedCost?: number; instanceTypes: string[] }[];
  initiatives: { initiativeId: string; name: string; allocatedGpuHours: number; allocatedCost?: number; namespaces: string[] }[];
}
