// A GPU usage with only the figures a test sets, the others those of a workload with no sample.
import { emptyUsage, type GpuUsage } from '../../src/domain/gpu-usage.js';

export const usageOf = (partial: Partial<GpuUsage>): GpuUsage => ({ ...emptyUsage(), ...partial });
