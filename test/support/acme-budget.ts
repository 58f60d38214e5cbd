// A monthly budget of acme with one pool and two teams, for tests of what reads budgets (capacity
// gauges, kubectl gpucap capacity).
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';

export const ACME_BUDGET: CapacityBudget = {
  organizationId: 'acme',
  period: 'month',
  allocatedGpuHours: 1000,
  pools: [{ poolId: 'h100', name: 'H100', allocatedGpuHours: 600, instanceTypes: ['p5.48xlarge'] }],
  initiatives: [
    { initiativeId: 'llm', name: 'LLM', allocatedGpuHours: 700, namespaces: [] },
    { initiativeId: 'vision', name: 'Vision', allocatedGpuHours: 100, namespaces: [] },
  ],
};
