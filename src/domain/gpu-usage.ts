// What a workload's GPUs did with the time it held them: the figures behind idle GPU-hours,
// efficiency and energy (docs/api.md "Workloads"). Every field is a whole number: a sample counts for
// the scrape interval (whole seconds), utilization and power are the rings' stored integers (0.01 %,
// 0.1 W), so sums are exact in any order, and a rollup row is exactly the sum of its workloads'.

export interface GpuUsage {
  /** GPU-seconds covered by a gpu_utilization sample. */
  utilSeconds: number;
  /** Σ utilization (0.01 % units) × seconds over those samples. */
  utilWeighted: number;
  /** GPU-seconds of the closed one-minute buckets whose mean utilization was below the idle threshold. */
  idleSeconds: number;
  /** GPU-seconds covered by a power_usage sample (never a MIG slice's: power belongs to the whole GPU). */
  powerSeconds: number;
  /** Σ power (0.1 W units) × seconds: energy in tenths of a joule. */
  energyDj: number;
  /** XID errors newly reported on its GPUs while attributed to it. */
  gpuErrors: number;
}

export const USAGE_FIELDS = [
  'utilSeconds',
  'utilWeighted',
  'idleSeconds',
  'powerSeconds',
  'energyDj',
  'gpuErrors',
] as const satisfies readonly (keyof GpuUsage)[];

export function emptyUsage(): GpuUsage {
  return { utilSeconds: 0, utilWeighted: 0, idleSeconds: 0, powerSeconds: 0, energyDj: 0, gpuErrors: 0 };
}

export function isEmptyUsage(usage: GpuUsage): boolean {
  return USAGE_FIELDS.every((field) => usage[field] === 0);
}

/** Adds `more` into `into`. */
export function addUsage(into: GpuUsage, more: GpuUsage): void {
  for (const field of USAGE_FIELDS) into[field] += more[field];
}

/** The figures the API shows from usage sums over workloads that used `gpuHours` GPU-hours (docs/api.md). */
export interface UsageFigures {
  /** GPU-hours of idle minutes; null when no utilization was sampled. */
  idleGpuHours: number | null;
  /** Utilization weighted by sampled GPU-time, 0..1; null when none was sampled. */
  gpuEfficiency: number | null;
  /** Sampled utilization time / GPU-time, 0..1. */
  utilizationCoverage: number;
  /** kWh drawn; null when no power was sampled. */
  energyKwh: number | null;
  /** Sampled power time / GPU-time, 0..1. */
  energyCoverage: number;
}

/** dJ (0.1 J) per kWh. */
const DJ_PER_KWH = 36_000_000;
/** Stored utilization units (0.01 %) per 1.0 of efficiency. */
const UTIL_UNITS = 10_000;

/** Share of `gpuHours` that `seconds` of samples cover, capped at 1 (samples can outlast the pods' recorded time by a scrape). */
function coverage(seconds: number, gpuHours: number): number {
  if (seconds <= 0) return 0;
  return gpuHours <= 0 ? 1 : Math.min(1, seconds / (gpuHours * 3600));
}

export function usageFigures(sums: Omit<GpuUsage, 'gpuErrors'>, gpuHours: number): UsageFigures {
  const sampled = sums.utilSeconds > 0;
  return {
    idleGpuHours: sampled ? sums.idleSeconds / 3600 : null,
    gpuEfficiency: sampled ? sums.utilWeighted / (sums.utilSeconds * UTIL_UNITS) : null,
    utilizationCoverage: coverage(sums.utilSeconds, gpuHours),
    energyKwh: sums.powerSeconds > 0 ? sums.energyDj / DJ_PER_KWH : null,
    energyCoverage: coverage(sums.powerSeconds, gpuHours),
  };
}
