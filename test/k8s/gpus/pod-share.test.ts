// The share of a GPU one pod holds, per rule: whole GPUs, MIG instances (mixed and single strategy),
// time-sliced and MPS replicas, KAI fractions and HAMi vGPUs, from the pod and its node's GFD labels.
import { expect } from 'chai';
import { gpuAsk } from '../../../src/k8s/gpus/gpu-ask.js';
import { podGpuShare, type GpuShare } from '../../../src/k8s/gpus/pod-share.js';
import type { Pod, ResourceList, StringMap } from '../../../src/k8s/objects/k8s-types.js';

const H100 = { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3', 'nvidia.com/gpu.memory': '81559', 'nvidia.com/gpu.count': '8' };
const MIXED = {
  ...H100,
  'nvidia.com/mig.strategy': 'mixed',
  'nvidia.com/mig-1g.10gb.count': '7',
  'nvidia.com/mig-1g.10gb.slices.gi': '1',
  'nvidia.com/mig-1g.10gb.slices.ci': '1',
  'nvidia.com/mig-3g.40gb.slices.gi': '3',
  'nvidia.com/mig-3g.40gb.slices.ci': '3',
  'nvidia.com/mig-1c.3g.40gb.slices.gi': '3',
  'nvidia.com/mig-1c.3g.40gb.slices.ci': '1',
};
const SINGLE_A100 = {
  'nvidia.com/mig.strategy': 'single',
  'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb',
  'nvidia.com/gpu.memory': '4864',
  'nvidia.com/gpu.slices.gi': '1',
  'nvidia.com/gpu.slices.ci': '1',
};
const SINGLE_UNLABELLED_SLICES = { 'nvidia.com/mig.strategy': 'single', 'nvidia.com/gpu.product': 'NVIDIA-A30-MIG-2g.12gb' };
const A30_MIXED = { 'nvidia.com/gpu.product': 'NVIDIA-A30', 'nvidia.com/mig.strategy': 'mixed' };
const TIME_SLICED = {
  'nvidia.com/gpu.product': 'NVIDIA-A10G-SHARED',
  'nvidia.com/gpu.memory': '23028',
  'nvidia.com/gpu.replicas': '4',
  'nvidia.com/gpu.sharing-strategy': 'time-slicing',
};
const MPS = { 'nvidia.com/gpu.product': 'NVIDIA-L4-SHARED', 'nvidia.com/gpu.replicas': '2', 'nvidia.com/gpu.sharing-strategy': 'mps' };
const UNKNOWN_MIG = { 'nvidia.com/gpu.product': 'NVIDIA-X9-96GB', 'nvidia.com/mig.strategy': 'mixed' };

function pod(limits: ResourceList, annotations?: StringMap): Pod {
  return { metadata: { name: 'p', ...(annotations === undefined ? {} : { annotations }) }, spec: { containers: [{ name: 'c', resources: { limits } }] } };
}

interface Row {
  name: string;
  pod: Pod;
  node?: StringMap;
  expected: GpuShare;
}

const rows: Row[] = [
  { name: 'a whole GPU', pod: pod({ 'nvidia.com/gpu': '2' }), node: H100, expected: { devices: 2, equivalents: 2, sharing: 'exclusive', model: 'NVIDIA-H100-80GB-HBM3' } },
  { name: 'a whole GPU on an unlabelled node', pod: pod({ 'nvidia.com/gpu': '1' }), expected: { devices: 1, equivalents: 1, sharing: 'exclusive', model: null } },
  { name: 'a mixed-strategy 1g.10gb slice of an H100', pod: pod({ 'nvidia.com/mig-1g.10gb': '1' }), node: MIXED, expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { name: 'two 3g.40gb slices', pod: pod({ 'nvidia.com/mig-3g.40gb': '2' }), node: MIXED, expected: { devices: 2, equivalents: 6 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { name: 'a compute instance counts its compute slices, not its GPU instance’s', pod: pod({ 'nvidia.com/mig-1c.3g.40gb': '1' }), node: MIXED, expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { name: 'a MIG slice and a whole GPU add up', pod: pod({ 'nvidia.com/gpu': '1', 'nvidia.com/mig-3g.40gb': '1' }), node: MIXED, expected: { devices: 2, equivalents: 1 + 3 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { name: 'a single-strategy slice: nvidia.com/gpu names it through the product', pod: pod({ 'nvidia.com/gpu': '1' }), node: SINGLE_A100, expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: 'NVIDIA-A100-SXM4-40GB' } },
  { name: 'a single-strategy A30 slice without slice labels: from the profile and the product', pod: pod({ 'nvidia.com/gpu': '1' }), node: SINGLE_UNLABELLED_SLICES, expected: { devices: 1, equivalents: 2 / 4, sharing: 'mig', model: 'NVIDIA-A30' } },
  { name: 'an A30 has 4 slices', pod: pod({ 'nvidia.com/mig-1g.6gb': '1' }), node: A30_MIXED, expected: { devices: 1, equivalents: 1 / 4, sharing: 'mig', model: 'NVIDIA-A30' } },
  { name: 'an unscheduled MIG pod: the default 7 slices', pod: pod({ 'nvidia.com/mig-2g.20gb': '1' }), expected: { devices: 1, equivalents: 2 / 7, sharing: 'mig', model: null } },
  { name: 'a time-sliced replica of 4', pod: pod({ 'nvidia.com/gpu': '1' }), node: TIME_SLICED, expected: { devices: 1, equivalents: 1 / 4, sharing: 'time_slicing', model: 'NVIDIA-A10G' } },
  { name: 'two renamed (.shared) replicas of 4', pod: pod({ 'nvidia.com/gpu.shared': '2' }), node: TIME_SLICED, expected: { devices: 2, equivalents: 2 / 4, sharing: 'time_slicing', model: 'NVIDIA-A10G' } },
  { name: 'an MPS replica of 2', pod: pod({ 'nvidia.com/gpu': '1' }), node: MPS, expected: { devices: 1, equivalents: 1 / 2, sharing: 'mps', model: 'NVIDIA-L4' } },
  {
    name: 'a KAI half GPU, which requests no GPU resource',
    pod: pod({}, { 'gpu-fraction': '0.5' }),
    node: H100,
    expected: { devices: 1, equivalents: 0.5, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  },
  {
    name: 'a KAI fraction on two devices',
    pod: pod({}, { 'gpu-fraction': '0.25', 'gpu-fraction-num-devices': '2' }),
    node: H100,
    expected: { devices: 2, equivalents: 0.5, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  },
  {
    name: 'a KAI gpu-memory ask over the device memory',
    pod: pod({}, { 'gpu-memory': '20389.75' }),
    node: H100,
    expected: { devices: 1, equivalents: 0.25, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  },
  { name: 'a KAI gpu-memory ask where the device memory is unknown: the whole device', pod: pod({}, { 'gpu-memory': '2000' }), expected: { devices: 1, equivalents: 1, sharing: 'fractional', model: null } },
  {
    name: 'HAMi: 30 % of the cores of each of two vGPUs',
    pod: pod({ 'nvidia.com/gpu': '2', 'nvidia.com/gpucores': '30', 'nvidia.com/gpumem': '3000' }),
    node: H100,
    expected: { devices: 2, equivalents: 0.6, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  },
  {
    name: 'HAMi: memory only, over the device memory',
    pod: pod({ 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '11514' }),
    node: TIME_SLICED,
    expected: { devices: 1, equivalents: 0.5, sharing: 'fractional', model: 'NVIDIA-A10G' },
  },
  {
    name: 'HAMi: a memory percentage',
    pod: pod({ 'nvidia.com/gpu': '1', 'nvidia.com/gpumem-percentage': '50' }),
    node: H100,
    expected: { devices: 1, equivalents: 0.5, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' },
  },
  { name: 'a pod that asks for nothing', pod: pod({ cpu: '1' }), node: H100, expected: { devices: 0, equivalents: 0, sharing: 'exclusive', model: null } },
  { name: 'an invalid KAI fraction is no fraction', pod: pod({}, { 'gpu-fraction': '1.5' }), node: H100, expected: { devices: 0, equivalents: 0, sharing: 'exclusive', model: null } },
];

describe('gpus: the share a pod holds', () => {
  for (const row of rows) {
    it(`${row.name}: ${row.expected.equivalents.toFixed(4)} of ${row.expected.devices} devices, ${row.expected.sharing}`, () => {
      const share = podGpuShare(gpuAsk(row.pod), row.node);
      expect({ ...share, equivalents: Number(share.equivalents.toFixed(12)) }).to.deep.equal({
        ...row.expected,
        equivalents: Number(row.expected.equivalents.toFixed(12)),
      });
    });
  }

  it('a labelled product whose MIG total is unknown takes 7, and says so', () => {
    const unknown: string[] = [];
    const share = podGpuShare(gpuAsk(pod({ 'nvidia.com/mig-1g.12gb': '1' })), UNKNOWN_MIG, { onUnknownMigTotal: (product) => unknown.push(product) });
    expect(share.equivalents).to.equal(1 / 7);
    expect(unknown).to.deep.equal(['NVIDIA-X9-96GB']);
  });

  it('a configured MIG total is used for that product, and nothing is said', () => {
    const unknown: string[] = [];
    const settings = { migTotals: { 'NVIDIA-X9*': 8 }, onUnknownMigTotal: (product: string) => unknown.push(product) };
    expect(podGpuShare(gpuAsk(pod({ 'nvidia.com/mig-2g.24gb': '1' })), UNKNOWN_MIG, settings).equivalents).to.equal(2 / 8);
    expect(unknown).to.deep.equal([]);
  });
});
