// What the usage figures read for workloads none of whose GPUs was sampled (docs/api.md "GPU usage"):
// null, never 0, with coverage 0. In a workload or a group, and in the statistics' summary.
export const NO_USAGE = { idle_gpu_hours: null, gpu_efficiency: null, utilization_coverage: 0, energy_kwh: null, energy_coverage: 0 };
export const NO_USAGE_TOTALS = { total_idle_gpu_hours: null, gpu_efficiency: null, utilization_coverage: 0, total_energy_kwh: null, energy_coverage: 0 };
