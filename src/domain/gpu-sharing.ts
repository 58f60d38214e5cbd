// How a workload's GPUs were shared, and so how its GPU-hours were counted (docs/workloads.md,
// "How GPUs are counted"): the API's `gpu_sharing`.
export const GPU_SHARING = ['exclusive', 'mig', 'time_slicing', 'mps', 'fractional'] as const;
export type GpuSharing = (typeof GPU_SHARING)[number];

export function isGpuSharing(value: unknown): value is GpuSharing {
  return (GPU_SHARING as readonly unknown[]).includes(value);
}

/** What GPU-hours count: whole-GPU equivalents (a 1g.10gb slice of an H100 is 1/7), or devices (it is 1). */
export type GpuHoursBasis = 'equivalents' | 'devices';
