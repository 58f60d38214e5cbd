// dcgm-exporter's text → one reading per GPU (or MIG instance) with the five API metrics
// (DECISIONS "Metrics") and its last XID error. Only the eight fields those need are looked at; every
// other series is parsed (the payload must be valid as a whole) and skipped.
import { METRIC_COUNT, METRIC_SLOT } from '../rings/metric-codec.js';
import { parseExposition } from './exposition-parser.js';

/** The dcgm-exporter fields the API metrics and the XID errors are derived from. */
export const READ_FIELDS = [
  'DCGM_FI_DEV_GPU_UTIL',
  'DCGM_FI_DEV_MEM_COPY_UTIL',
  'DCGM_FI_DEV_FB_USED',
  'DCGM_FI_DEV_FB_FREE',
  'DCGM_FI_DEV_GPU_TEMP',
  'DCGM_FI_DEV_POWER_USAGE',
  'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
  // Not an API metric and not kept in the rings: only its changes count (xid-watch.ts).
  'DCGM_FI_DEV_XID_ERRORS',
] as const;
const FIELD_INDEX = new Map<string, number>(READ_FIELDS.map((name, i) => [name, i]));
const [GPU_UTIL, MEM_COPY_UTIL, FB_USED, FB_FREE, GPU_TEMP, POWER_USAGE, GR_ENGINE_ACTIVE, XID_ERRORS] = [0, 1, 2, 3, 4, 5, 6, 7] as const;

// DCGM reports "no value" in-band: DCGM_INT32_BLANK is 0x7ffffff0 and the int64 and fp64 blanks
// (0x7ffffffffffffff0…, 2^47…) are larger still, each followed by NOT_FOUND, NOT_SUPPORTED and
// NOT_PERMISSIONED. No real reading of the fields used here (%, MiB, °C, W, a ratio) comes near
// 2^31, so anything from the smallest sentinel up is "missing".
const SMALLEST_BLANK = 0x7ffffff0;

/** Whether a DCGM value is a real reading: finite, and not one of the blank sentinels. */
export function isDcgmValue(value: number): boolean {
  return Number.isFinite(value) && value < SMALLEST_BLANK;
}

export interface PodRef {
  namespace: string;
  name: string;
}

export interface GpuReading {
  /** The GPU's UUID, `UUID/GPU_I_ID` for a MIG instance; `hostname/gpu` for exporters without UUIDs. */
  key: string;
  gpu: string | undefined;
  migInstance: string | undefined;
  hostname: string | undefined;
  modelName: string | undefined;
  /** The pod the exporter attributes this GPU to (its `pod`/`namespace` labels), if any. */
  pod: PodRef | undefined;
  /** The five metrics by METRIC_SLOT, in reported units; NaN where the exporter gave nothing usable. */
  values: Float64Array;
  /** DCGM_FI_DEV_XID_ERRORS: the code of the GPU's last XID error, 0 for none; NaN where not reported. */
  xid: number;
}

export interface DcgmPayload {
  readings: GpuReading[];
  /** Every sample line of the payload, used or not. */
  samples: number;
  /** Samples of a used field that named no GPU (no UUID and no gpu label): skipped. */
  unidentified: number;
}

interface Collected {
  reading: GpuReading;
  fields: Float64Array;
}

/** Parses a dcgm-exporter payload. Throws ExpositionParseError when the text is not valid exposition. */
export function readDcgmPayload(text: string): DcgmPayload {
  const byKey = new Map<string, Collected>();
  let unidentified = 0;
  const samples = parseExposition(text, (name, labels, value) => {
    const field = FIELD_INDEX.get(name);
    if (field === undefined) return;
    let uuid: string | undefined;
    let gpu: string | undefined;
    let instance: string | undefined;
    let hostname: string | undefined;
    let modelName: string | undefined;
    let pod: string | undefined;
    let namespace: string | undefined;
    for (let i = 0; i < labels.length; i += 2) {
      const label = labels[i];
      const text = labels[i + 1] ?? '';
      switch (label) {
        case 'UUID':
        case 'uuid':
          uuid = text;
          break;
        case 'gpu':
          gpu = text;
          break;
        case 'GPU_I_ID':
          instance = text;
          break;
        case 'Hostname':
        case 'hostname':
          hostname = text;
          break;
        case 'modelName':
          modelName = text;
          break;
        case 'pod':
        case 'pod_name':
          pod = text;
          break;
        case 'namespace':
        case 'pod_namespace':
          namespace = text;
          break;
      }
    }
    const base = uuid !== undefined && uuid !== '' ? uuid : gpu !== undefined && gpu !== '' ? `${hostname ?? ''}/${gpu}` : undefined;
    if (base === undefined) {
      unidentified += 1;
      return;
    }
    const key = instance !== undefined && instance !== '' ? `${base}/${instance}` : base;
    let collected = byKey.get(key);
    if (collected === undefined) {
      collected = {
        reading: {
          key,
          gpu,
          migInstance: instance || undefined,
          hostname,
          modelName,
          pod: undefined,
          values: new Float64Array(METRIC_COUNT),
          xid: NaN,
        },
        fields: new Float64Array(READ_FIELDS.length).fill(NaN),
      };
      byKey.set(key, collected);
    }
    // Older exporters write pod="" for an unassigned GPU: that is no pod.
    if (pod && namespace && collected.reading.pod === undefined) collected.reading.pod = { namespace, name: pod };
    if (isDcgmValue(value)) collected.fields[field] = value;
  });
  const readings: GpuReading[] = [];
  for (const { reading, fields } of byKey.values()) {
    deriveMetrics(fields, reading.values);
    reading.xid = fields[XID_ERRORS] ?? NaN;
    readings.push(reading);
  }
  return { readings, samples, unidentified };
}

function present(value: number | undefined): value is number {
  return value !== undefined && !Number.isNaN(value);
}

/** The API metrics from the DCGM fields (DECISIONS "Metrics"); NaN where no source field exists. */
function deriveMetrics(fields: Float64Array, into: Float64Array): void {
  const util = fields[GPU_UTIL];
  const engine = fields[GR_ENGINE_ACTIVE];
  const enginePercent = present(engine) ? engine * 100 : NaN;
  // MIG instances export no DCGM_FI_DEV_GPU_UTIL: the graphics engine activity is their utilization.
  into[METRIC_SLOT.gpu_utilization] = present(util) ? util : enginePercent;
  const used = fields[FB_USED];
  const free = fields[FB_FREE];
  into[METRIC_SLOT.memory_utilization] =
    present(used) && present(free) && used + free > 0 ? (used / (used + free)) * 100 : (fields[MEM_COPY_UTIL] ?? NaN);
  into[METRIC_SLOT.temperature] = fields[GPU_TEMP] ?? NaN;
  into[METRIC_SLOT.power_usage] = fields[POWER_USAGE] ?? NaN;
  into[METRIC_SLOT.gpu_usage] = present(engine) ? enginePercent : present(util) ? util : NaN;
}
