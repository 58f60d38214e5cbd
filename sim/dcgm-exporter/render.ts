// Renders one node's GPUs as dcgm-exporter's /metrics text: a `# HELP` and `# TYPE` per field, then
// one sample per GPU (and per MIG instance), with labels in the order the exporter's Go template
// writes them. The service's parser is tested against this, so the details follow the real output.
import { deviceValues, instanceValues, type FieldValue, type ResolvedValues } from './defaults.js';
import { DCGM_BLANK_SENTINEL, FIELDS, type FieldSpec } from './fields.js';
import type { SimClaimRef, SimGpu, SimMigInstance, SimNodeGpus, SimPodRef } from './types.js';

export interface PodLabelNames {
  pod: string;
  namespace: string;
  container: string;
}

export interface RenderOptions {
  /**
   * `v4` (default): `pci_bus_id` present, `hostname` lower-case, as dcgm-exporter 4.x.
   * `v3`: no `pci_bus_id`, `Hostname` capitalised, as 3.x and the captures in test/fixtures/exporters/dcgm.
   */
  labelStyle?: 'v4' | 'v3';
  /**
   * Pod attribution label names; default `pod`/`namespace`/`container` in both styles. The exporter's
   * `--use-old-namespace` flag spells them `pod_name`/`pod_namespace`/`container_name`.
   */
  podLabelNames?: PodLabelNames;
  /** Value of the `DCGM_FI_DRIVER_VERSION` label (default 550.127.05). */
  driverVersion?: string;
}

const DEFAULT_MODEL = 'NVIDIA H100 80GB HBM3';
/** The NVIDIA DRA driver's name; it names each node's pool after the node. */
const DRA_GPU_DRIVER = 'gpu.nvidia.com';
/** PCI bus ids of the eight GPUs of an HGX H100 board, so default ids look like a real node's. */
const HGX_BUS_IDS = ['18', '2A', '3A', '5D', '9A', 'AB', 'BA', 'DB'];

interface Series {
  /** The label set without braces, e.g. `gpu="0",UUID="GPU-…",…`. */
  labels: string;
  values: Partial<ResolvedValues>;
  instance: boolean;
}

export function renderDcgmMetrics(node: SimNodeGpus, options: RenderOptions = {}): string {
  const series = [...node.gpus].sort((a, b) => a.index - b.index).flatMap((gpu) => gpuSeries(gpu, node.hostname, options));
  let text = '';
  for (const field of FIELDS) {
    let samples = '';
    for (const s of series) {
      if (s.instance && !field.perInstance) continue;
      const value = s.values[field.name];
      // Absent or explicitly undefined: the exporter had no value for this entity, so no sample.
      if (value === undefined) continue;
      samples += `${field.name}{${s.labels}} ${formatValue(field, value)}\n`;
    }
    if (samples === '') continue;
    text += `# HELP ${field.name} ${field.help}\n# TYPE ${field.name} ${field.type}\n${samples}`;
  }
  return text;
}

/**
 * The GPU's own series, then one per MIG instance. A MIG-partitioned GPU's own series names no pod,
 * but it does carry the DRA claims of its instances: dcgm-exporter maps a DRA MIG device to its
 * parent's UUID (its ResourceSlice reader), so the parent's series is written once per claimed
 * instance with that instance's `dra_*` labels, and the instances' own series carry none.
 */
function gpuSeries(gpu: SimGpu, hostname: string, options: RenderOptions): Series[] {
  const v3 = options.labelStyle === 'v3';
  const identity = [
    label('gpu', String(gpu.index)),
    label('UUID', gpu.uuid),
    ...(v3 ? [] : [label('pci_bus_id', gpu.pciBusId ?? defaultBusId(gpu.index))]),
    label('device', `nvidia${gpu.index}`),
    label('modelName', gpu.modelName ?? DEFAULT_MODEL),
  ].join(',');
  const host = `${label(v3 ? 'Hostname' : 'hostname', hostname)},${label('DCGM_FI_DRIVER_VERSION', options.driverVersion ?? '550.127.05')}`;
  const names = options.podLabelNames ?? { pod: 'pod', namespace: 'namespace', container: 'container' };
  const mig = gpu.mig ?? [];
  const values = deviceValues(gpu.uuid, gpu.values ?? {}, { migEnabled: mig.length > 0 });
  const claimed = mig.filter((m) => m.claim !== undefined);
  const devices: Series[] =
    mig.length === 0
      ? [{ labels: `${identity},${host}${attributeLabels(gpu.pod, draLabels(gpu.claim, { pool: hostname, device: `gpu-${gpu.index}` }), names)}`, values, instance: false }]
      : claimed.length === 0
        ? [{ labels: `${identity},${host}`, values, instance: false }]
        : claimed.map((m) => ({ labels: `${identity},${host}${attributeLabels(m.pod, migDraLabels(gpu, m, hostname), names)}`, values, instance: false }));
  const instances = mig.map(
    (m): Series => ({
      labels: `${identity},${label('GPU_I_PROFILE', m.profile)},${label('GPU_I_ID', String(m.instanceId))},${host}${attributeLabels(m.pod, [], names)}`,
      values: instanceValues(`${gpu.uuid}/${m.instanceId}`, m.values ?? {}, { profile: m.profile }),
      instance: true,
    }),
  );
  return [...devices, ...instances];
}

/** The `dra_*` labels of a claimed device; none without a claim. */
function draLabels(claim: SimClaimRef | undefined, at: { pool: string; device: string }): [string, string][] {
  if (claim === undefined) return [];
  return [
    ['dra_claim_name', claim.name],
    ['dra_claim_namespace', claim.namespace],
    ['dra_driver_name', DRA_GPU_DRIVER],
    ['dra_pool_name', at.pool],
    ['dra_device_name', claim.device ?? at.device],
  ];
}

function migDraLabels(gpu: SimGpu, instance: SimMigInstance, hostname: string): [string, string][] {
  const device = `gpu-${gpu.index}-mig-${instance.profile.replace(/\./g, '')}-${instance.instanceId}`;
  return [
    ...draLabels(instance.claim, { pool: hostname, device }),
    ['dra_mig_profile', instance.profile],
    ['dra_mig_device_uuid', instance.uuid ?? defaultMigUuid(gpu.uuid, instance.instanceId)],
  ];
}

/**
 * The exporter keeps pod and DRA attribution in one Go map and its template ranges over it in sorted
 * key order, so the real output reads `container,dra_claim_name,…,namespace,pod` (see the A10G line of
 * the Datadog fixture for the pod labels).
 */
function attributeLabels(pod: SimPodRef | undefined, dra: [string, string][], names: PodLabelNames): string {
  const pairs: [string, string][] = [...dra];
  if (pod !== undefined) {
    pairs.push([names.pod, pod.pod], [names.namespace, pod.namespace]);
    if (pod.container !== undefined) pairs.push([names.container, pod.container]);
  }
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.map(([name, value]) => `,${label(name, value)}`).join('');
}

/** A stand-in MIG UUID: the GPU's UUID with the instance id in its last group, so each instance has its own. */
function defaultMigUuid(gpuUuid: string, instanceId: number): string {
  const body = gpuUuid.replace(/^GPU-/, '');
  const suffix = instanceId.toString(16).padStart(4, '0');
  return `MIG-${body.length > 4 ? body.slice(0, -4) : body}${suffix}`;
}

function defaultBusId(index: number): string {
  const bus = HGX_BUS_IDS[index] ?? (0x10 + index).toString(16).toUpperCase().padStart(2, '0');
  return `00000000:${bus}:00.0`;
}

function label(name: string, value: string): string {
  return `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** Go's `%d` for DCGM int64 fields and `%f` (six decimals) for doubles, as the exporter formats them. */
function formatValue(field: FieldSpec, value: FieldValue): string {
  if (value === 'blank') return DCGM_BLANK_SENTINEL;
  return field.double ? value.toFixed(6) : String(Math.round(value));
}
