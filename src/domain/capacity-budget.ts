// An organization's GPU-hour budget as the capacity ConfigMaps give it (docs/capacity.md): what the
// capacity flow parses and computes with, and what the read side is given by its BudgetSource port.

export type BudgetPeriod = 'month' | 'quarter' | 'year' | 'total';

export interface CapacityBudget {
  organizationId: string;
  period: BudgetPeriod;
  allocatedGpuHours: number;
  pools: { poolId: string; name: string; allocatedGpuHours: number; instanceTypes: string[] }[];
  initiatives: { initiativeId: string; name: string; allocatedGpuHours: number; namespaces: string[] }[];
}
