// The field catalogue: Prometheus type and help text as dcgm-exporter's default-counters.csv and
// dcp-metrics-included.csv spell them, and how DCGM stores each value. Ordered by DCGM field id,
// because the exporter's template ranges over a map keyed by counter struct and Go sorts such keys
// field by field, so families come out in field-id order (as in the T4 sample in the fixtures).
import type { DcgmField } from './types.js';

export interface FieldSpec {
  name: DcgmField;
  /** DCGM field id; only documents the order. */
  id: number;
  type: 'gauge' | 'counter';
  help: string;
  /** DCGM_FT_DOUBLE fields print with Go's `%f` (six decimals); DCGM_FT_INT64 fields as integers. */
  double: boolean;
  /** Reported for a MIG GPU instance too. Utilisation, clocks, power and temperature are device-only. */
  perInstance: boolean;
}

export const FIELDS: readonly FieldSpec[] = [
  { name: 'DCGM_FI_DEV_SM_CLOCK', id: 100, type: 'gauge', help: 'SM clock frequency (in MHz).', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_MEM_CLOCK', id: 101, type: 'gauge', help: 'Memory clock frequency (in MHz).', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_MEMORY_TEMP', id: 140, type: 'gauge', help: 'Memory temperature (in C).', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_GPU_TEMP', id: 150, type: 'gauge', help: 'GPU temperature (in C).', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_POWER_USAGE', id: 155, type: 'gauge', help: 'Power draw (in W).', double: true, perInstance: false },
  {
    name: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
    id: 156,
    type: 'counter',
    help: 'Total energy consumption since boot (in mJ).',
    double: false,
    perInstance: false,
  },
  { name: 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER', id: 202, type: 'counter', help: 'Total number of PCIe retries.', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_GPU_UTIL', id: 203, type: 'gauge', help: 'GPU utilization (in %).', double: false, perInstance: false },
  { name: 'DCGM_FI_DEV_MEM_COPY_UTIL', id: 204, type: 'gauge', help: 'Memory utilization (in %).', double: false, perInstance: false },
  // The A100 MIG capture shows XID errors on the instance series as well.
  { name: 'DCGM_FI_DEV_XID_ERRORS', id: 230, type: 'gauge', help: 'Value of the last XID error encountered.', double: false, perInstance: true },
  { name: 'DCGM_FI_DEV_FB_FREE', id: 251, type: 'gauge', help: 'Framebuffer memory free (in MiB).', double: false, perInstance: true },
  { name: 'DCGM_FI_DEV_FB_USED', id: 252, type: 'gauge', help: 'Framebuffer memory used (in MiB).', double: false, perInstance: true },
  {
    name: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
    id: 1001,
    type: 'gauge',
    help: 'Ratio of time the graphics engine is active.',
    double: true,
    perInstance: true,
  },
  {
    name: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
    id: 1004,
    type: 'gauge',
    help: 'Ratio of cycles the tensor (HMMA) pipe is active.',
    double: true,
    perInstance: true,
  },
  // Help as in the A10G capture (dcp-metrics-included.csv has since dropped the "(in %)").
  {
    name: 'DCGM_FI_PROF_DRAM_ACTIVE',
    id: 1005,
    type: 'gauge',
    help: 'Ratio of cycles the device memory interface is active sending or receiving data (in %).',
    double: true,
    perInstance: true,
  },
];

/** DCGM_INT64_NOT_SUPPORTED (0x7ffffffffffffff2): one of the blank sentinels older exporters passed through. */
export const DCGM_BLANK_SENTINEL = '9223372036854775794';
