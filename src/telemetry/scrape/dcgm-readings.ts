// dcgm-exporter's text → one reading per GPU (or MIG instance) with the five API metrics
// (DECISIONS "Metrics"), its last XID error and whom the exporter attributes it to: a pod, or a
// Dynamic Resource Allocation claim. Only the eight fields those need are looked at; every other
// series is parsed (the payload must be valid as a whole) and skipped.
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

/** A ResourceClaim, as dcgm-exporter's `dra_claim_namespace`/`dra_claim_name` labels name it. */
export interface ClaimRef {
  namespace: string;
  name: string;
}

export interface GpuReading {
  /**
   * The GPU's UUID, `UUID/GPU_I_ID` for a MIG instance; `UUID/MIG-…` for a MIG device that only a DRA
   * label names (`dra_mig_device_uuid` on a series without GPU_I_ID); `hostname/gpu` for exporters
   * without UUIDs.
   */
  key: string;
  gpu: string | undefined;
  /** GPU_I_ID, or the DRA MIG device's UUID where only that names the instance; undefined for a whole GPU. */
  migInstance: string | undefined;
  hostname: string | undefined;
  modelName: string | undefined;
  /** The pod the exporter attributes this GPU to (its `pod`/`namespace` labels), if any. */
  pod: PodRef | undefined;
  /**
   * The claim the exporter attributes this GPU to (`dra_claim_*` labels), if any: a GPU allocated
   * through DRA, whose series may name no pod. The pod, when named too, is what attribution uses.
   */
  claim: ClaimRef | undefined;
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

/** The labels of one series that a reading needs, by what they mean (each exporter version's spellings folded). */
interface SeriesLabels {
  uuid: string | undefined;
  gpu: string | undefined;
  instance: string | undefined;
  hostname: string | undefined;
  modelName: string | undefined;
  pod: string | undefined;
  namespace: string | undefined;
  claimName: string | undefined;
  claimNamespace: string | undefined;
  migDevice: string | undefined;
}

const noLabels = (): SeriesLabels => ({
  uuid: undefined, gpu: undefined, instance: undefined, hostname: undefined, modelName: undefined,
  pod: undefined, namespace: undefined, claimName: undefined, claimNamespace: undefined, migDevice: undefined,
});

/** Refills `into` from one sample's labels (name, value, name, value…): one object per payload, not per sample. */
function readSeriesLabels(labels: readonly string[], into: SeriesLabels): void {
  // Field by field rather than Object.assign: this runs for every sample of a read field.
  into.uuid = into.gpu = into.instance = into.hostname = into.modelName = undefined;
  into.pod = into.namespace = into.claimName = into.claimNamespace = into.migDevice = undefined;
  for (let i = 0; i < labels.length; i += 2) {
    const text = labels[i + 1] ?? '';
    switch (labels[i]) {
      case 'UUID':
      case 'uuid':
        into.uuid = text;
        break;
      case 'gpu':
        into.gpu = text;
        break;
      case 'GPU_I_ID':
        into.instance = text;
        break;
      case 'Hostname':
      case 'hostname':
        into.hostname = text;
        break;
      case 'modelName':
        into.modelName = text;
        break;
      case 'pod':
      case 'pod_name':
        into.pod = text;
        break;
      case 'namespace':
      case 'pod_namespace':
        into.namespace = text;
        break;
      default:
        // The DRA labels behind one prefix test: the labels that fall through here on every series
        // (device, pci_bus_id, container, …) meet no more cases than before DRA was read.
        if (labels[i]?.startsWith('dra_') === true) readDraLabel(labels[i] as string, text, into);
    }
  }
}

function readDraLabel(label: string, text: string, into: SeriesLabels): void {
  switch (label) {
    case 'dra_claim_name':
      into.claimName = text;
      break;
    case 'dra_claim_namespace':
      into.claimNamespace = text;
      break;
    case 'dra_mig_device_uuid':
      into.migDevice = text;
      break;
  }
}

/**
 * The MIG instance a series is of, if any. GPU_I_ID keys an instance as it always has. dcgm-exporter
 * puts a DRA MIG device's labels on its parent's series (it maps DRA devices to the parent's UUID),
 * where only dra_mig_device_uuid tells the instances apart: without it every claimed instance of a
 * GPU would fold into one reading, attributed to whichever claim came first.
 */
function migInstanceOf(series: SeriesLabels): string | undefined {
  if (series.instance !== undefined && series.instance !== '') return series.instance;
  return series.migDevice !== undefined && series.migDevice !== '' ? series.migDevice : undefined;
}

/** Sets the reading's pod and claim from the first series that names them. */
function attribute(reading: GpuReading, series: SeriesLabels): void {
  const { pod, namespace, claimName } = series;
  // Older exporters write pod="" for an unassigned GPU: that is no pod.
  if (pod && namespace && reading.pod === undefined) reading.pod = { namespace, name: pod };
  // A claim lives in its pods' namespace: an exporter that wrote no claim namespace still names it.
  const claimNamespace = series.claimNamespace || namespace;
  if (claimName && claimNamespace && reading.claim === undefined) reading.claim = { namespace: claimNamespace, name: claimName };
}

/** Parses a dcgm-exporter payload. Throws ExpositionParseError when the text is not valid exposition. */
export function readDcgmPayload(text: string): DcgmPayload {
  const byKey = new Map<string, Collected>();
  const series = noLabels();
  let unidentified = 0;
  const samples = parseExposition(text, (name, labels, value) => {
    const field = FIELD_INDEX.get(name);
    if (field === undefined) return;
    readSeriesLabels(labels, series);
    const { uuid, gpu, hostname } = series;
    const base = uuid !== undefined && uuid !== '' ? uuid : gpu !== undefined && gpu !== '' ? `${hostname ?? ''}/${gpu}` : undefined;
    if (base === undefined) {
      unidentified += 1;
      return;
    }
    const mig = migInstanceOf(series);
    const key = mig !== undefined ? `${base}/${mig}` : base;
    let collected = byKey.get(key);
    if (collected === undefined) {
      collected = {
        reading: {
          key, gpu, migInstance: mig, hostname, modelName: series.modelName, pod: undefined, claim: undefined,
          values: new Float64Array(METRIC_COUNT), xid: NaN,
        },
        fields: new Float64Array(READ_FIELDS.length).fill(NaN),
      };
      byKey.set(key, collected);
    }
    attribute(collected.reading, series);
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
