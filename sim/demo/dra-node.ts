// The demo's Dynamic Resource Allocation node as NVIDIA's DRA driver (gpu.nvidia.com) publishes it:
// a Node with no nvidia.com/gpu and no GFD labels (no device plugin runs there), the chart's two GPU
// DeviceClasses, and one ResourceSlice whose pool is the node. Four whole H100s, and a fifth split by
// static MIG into four 1g.10gb and one 3g.40gb (its parent then is not announced, as the driver does).
// Shapes follow test/fixtures/kubernetes/gpu-sharing/ (dra-*.json); UUIDs are made up but stable.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube-api/resources.js';

export const DRA_NODE = 'gpu-east-dra-00';
export const DRA_DRIVER = 'gpu.nvidia.com';
const PRODUCT = 'NVIDIA H100 80GB HBM3';
const WHOLE_GPUS = 4;
/** The minor number of the GPU partitioned by MIG. */
const MIG_PARENT = 4;

/** A UUID-shaped id from `seed`, prefixed as NVML prefixes GPU and MIG UUIDs: the same every run. */
function stableUuid(prefix: 'GPU' | 'MIG', seed: string): string {
  const h = createHash('sha1').update(`${DRA_NODE}/${seed}`).digest('hex');
  return `${prefix}-${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const draNode = (createdAt: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: DRA_NODE, creationTimestamp: createdAt, labels: { 'node.kubernetes.io/instance-type': 'p5.48xlarge' } },
  status: { allocatable: { cpu: '192', memory: '2047Gi', pods: '110' } },
});

/** The classes the driver's Helm chart installs for GPUs and MIG devices, at `installedAt`. */
export const draDeviceClasses = (installedAt: string): KubeObject[] =>
  [
    { name: 'gpu.nvidia.com', type: 'gpu', extendedResourceName: 'nvidia.com/gpu' },
    { name: 'mig.nvidia.com', type: 'mig' },
  ].map(({ name, type, extendedResourceName }) => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceClass',
    metadata: { name, creationTimestamp: installedAt, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'nvidia-dra-driver-gpu', 'meta.helm.sh/release-namespace': 'nvidia-dra-driver-gpu' } },
    spec: {
      selectors: [{ cel: { expression: `device.driver == '${DRA_DRIVER}' && device.attributes['${DRA_DRIVER}'].type == '${type}'` } }],
      ...(extendedResourceName === undefined ? {} : { extendedResourceName }),
    },
  }));

const PCI_BUS_IDS = ['0000:18:00.0', '0000:2a:00.0', '0000:3a:00.0', '0000:5d:00.0', '0000:9a:00.0'];

/** The attributes every device of a GPU has, MIG devices their parent's. */
function gpuAttributes(minor: number): Record<string, Record<string, string>> {
  return {
    architecture: { string: 'Hopper' },
    brand: { string: 'Nvidia' },
    cudaComputeCapability: { version: '9.0.0' },
    cudaDriverVersion: { version: '13.0.0' },
    driverVersion: { version: '580.95.5' },
    productName: { string: PRODUCT },
    'resource.kubernetes.io/pciBusID': { string: PCI_BUS_IDS[minor] ?? '' },
    'resource.kubernetes.io/pcieRoot': { string: `pci0000:${(0x15 + minor * 0x10).toString(16)}` },
  };
}

function wholeGpu(minor: number): Record<string, unknown> {
  return {
    name: `gpu-${minor}`,
    attributes: { ...gpuAttributes(minor), type: { string: 'gpu' }, uuid: { string: stableUuid('GPU', `gpu-${minor}`) } },
    capacity: { memory: { value: '81559Mi' } },
  };
}

interface MigProfile {
  profile: string;
  /** The GPU instance profile id, part of the device's name. */
  giProfileId: number;
  memory: string;
  multiprocessors: number;
  engines: number;
  /** Memory slices it occupies, from its placement start. */
  slices: number;
}

const MIG_1G: MigProfile = { profile: '1g.10gb', giProfileId: 19, memory: '9984Mi', multiprocessors: 16, engines: 1, slices: 1 };
const MIG_3G: MigProfile = { profile: '3g.40gb', giProfileId: 9, memory: '40320Mi', multiprocessors: 60, engines: 3, slices: 4 };

interface MigPlacement {
  profile: MigProfile;
  start: number;
}

/** The name the driver gives a MIG device: `gpu-<parent minor>-mig-<profile without dots>-<GI profile id>-<placement start>`. */
const migDeviceName = ({ profile: p, start }: MigPlacement): string => `gpu-${MIG_PARENT}-mig-${p.profile.replace('.', '')}-${p.giProfileId}-${start}`;

/** Placements on the parent: 1g.10gb at memory slices 0 to 3, 3g.40gb over 4 to 7. */
const MIG_1G_PLACEMENTS: readonly MigPlacement[] = [0, 1, 2, 3].map((start) => ({ profile: MIG_1G, start }));
const MIG_3G_PLACEMENT: MigPlacement = { profile: MIG_3G, start: 4 };
const MIG_LAYOUT: readonly MigPlacement[] = [...MIG_1G_PLACEMENTS, MIG_3G_PLACEMENT];

/** The devices' names, for the claims allocated from them. */
export const DRA_DEVICES = {
  whole: Array.from({ length: WHOLE_GPUS }, (_, minor) => `gpu-${minor}`),
  mig1g10gb: MIG_1G_PLACEMENTS.map(migDeviceName),
  mig3g40gb: migDeviceName(MIG_3G_PLACEMENT),
} as const;

function migDevice(placement: MigPlacement): Record<string, unknown> {
  const { profile: p, start } = placement;
  const name = migDeviceName(placement);
  const memorySlices = Object.fromEntries(Array.from({ length: p.slices }, (_, i) => [`memorySlice${start + i}`, { value: '1' }]));
  return {
    name,
    attributes: {
      ...gpuAttributes(MIG_PARENT),
      parentUUID: { string: stableUuid('GPU', `gpu-${MIG_PARENT}`) },
      profile: { string: p.profile },
      type: { string: 'mig' },
      uuid: { string: stableUuid('MIG', name) },
    },
    capacity: {
      copyEngines: { value: String(p.engines) },
      decoders: { value: String(p.engines) },
      encoders: { value: '0' },
      jpegEngines: { value: String(p.engines) },
      memory: { value: p.memory },
      multiprocessors: { value: String(p.multiprocessors) },
      ofaEngines: { value: '0' },
      ...memorySlices,
    },
  };
}

/** The node's one slice; `node` is the stored Node, whose uid the slice's owner reference carries. */
export function draResourceSlice(node: KubeObject, publishedAt: string): KubeObject {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: {
      name: `${DRA_NODE}-${DRA_DRIVER}-q4w8n`,
      generateName: `${DRA_NODE}-${DRA_DRIVER}-`,
      creationTimestamp: publishedAt,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: DRA_NODE, uid: node.metadata.uid, controller: true }],
    },
    spec: {
      driver: DRA_DRIVER,
      nodeName: DRA_NODE,
      pool: { name: DRA_NODE, generation: 1, resourceSliceCount: 1 },
      devices: [...DRA_DEVICES.whole.map((_, minor) => wholeGpu(minor)), ...MIG_LAYOUT.map(migDevice)],
    },
  };
}
