// A node's physical GPUs counted once in every sharing mode, from the nodes of the fixtures (GFD's
// labels, the kubelet's capacity and allocatable, HAMi's register) and the DRA driver's slices, and
// its unhealthy GPUs from allocatable below capacity.
import { expect } from 'chai';
import { DEFAULT_GPU_RESOURCES } from '../../../src/k8s/objects/gpu-request.js';
import type { Node } from '../../../src/k8s/objects/k8s-types.js';
import type { ResourceSlice } from '../../../src/k8s/objects/dra-types.js';
import { sliceDevices } from '../../../src/k8s/gpus/dra-share.js';
import { devicePluginGpus, draGpus, HAMI_NODE_REGISTER } from '../../../src/k8s/gpus/physical-gpus.js';
import { nodeFixture, objectFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

const node = (file: string): Node => nodeFixture(`gpu-sharing/${file}`);
const counted = (n: Node) => devicePluginGpus(n, DEFAULT_GPU_RESOURCES);

/** The node with its allocatable GPU resources replaced. */
function withAllocatable(n: Node, allocatable: Record<string, string>): Node {
  return { ...n, status: { ...n.status, allocatable: { ...n.status?.allocatable, ...allocatable } } };
}

/** The node without GFD's gpu.count label: what the resources alone say. */
function withoutCount(n: Node): Node {
  const { 'nvidia.com/gpu.count': _count, ...labels } = n.metadata?.labels ?? {};
  return { ...n, metadata: { ...n.metadata, labels } };
}

const sliceOf = (file: string) => {
  const slice = objectFixture<ResourceSlice>(`gpu-sharing/${file}`, 'ResourceSlice');
  return [...sliceDevices(slice).values()].map((device) => ({ ...device, driver: slice.spec?.driver ?? '' }));
};

describe('k8s/gpus/physical-gpus', () => {
  it('counts every sharing mode\'s node by its physical GPUs, with its model and mode', () => {
    const rows = [
      'node-whole-h100.json', 'node-mig-mixed-h100.json', 'node-mig-single-a100.json', 'node-time-slicing-a10g.json',
      'node-time-slicing-renamed.json', 'node-mps-l4.json', 'node-hami-l40s.json',
    ].map((file) => [file, counted(node(file))]);
    expect(Object.fromEntries(rows)).to.deep.equal({
      'node-whole-h100.json': { gpus: 8, unhealthyGpus: 0, model: 'NVIDIA-H100-80GB-HBM3', sharing: 'exclusive' },
      // gpu.count 8: the mixed strategy's 32 1g.10gb and 8 3g.40gb instances are not GPUs.
      'node-mig-mixed-h100.json': { gpus: 8, unhealthyGpus: 0, model: 'NVIDIA-H100-80GB-HBM3', sharing: 'mig' },
      // The single strategy's gpu.count is 56 MIG devices of 1g.5gb, 1/7 of an A100 each.
      'node-mig-single-a100.json': { gpus: 8, unhealthyGpus: 0, model: 'NVIDIA-A100-SXM4-40GB', sharing: 'mig' },
      // 16 replicas of 4 GPUs.
      'node-time-slicing-a10g.json': { gpus: 4, unhealthyGpus: 0, model: 'NVIDIA-A10G', sharing: 'time_slicing' },
      'node-time-slicing-renamed.json': { gpus: 4, unhealthyGpus: 0, model: 'NVIDIA-A10G', sharing: 'time_slicing' },
      'node-mps-l4.json': { gpus: 4, unhealthyGpus: 0, model: 'NVIDIA-L4', sharing: 'mps' },
      // 20 vGPUs of 2 GPUs (deviceSplitCount 10), from HAMi's register; no GFD, so no model.
      'node-hami-l40s.json': { gpus: 2, unhealthyGpus: 0, model: null, sharing: 'fractional' },
    });
  });

  it('counts from the resources alone where GFD gives no count: replicas, MIG instances by their share', () => {
    expect(counted(withoutCount(node('node-time-slicing-a10g.json'))).gpus).to.equal(4);
    expect(counted(withoutCount(node('node-whole-h100.json'))).gpus).to.equal(8);
    // 32 × 1/7 + 8 × 3/7 = 8.
    expect(counted(withoutCount(node('node-mig-mixed-h100.json'))).gpus).to.be.closeTo(8, 1e-9);
    expect(counted(withoutCount(node('node-mig-single-a100.json'))).gpus).to.be.closeTo(8, 1e-9);
  });

  it('takes the devices missing from allocatable as unhealthy, in the same equivalents', () => {
    expect(counted(withAllocatable(node('node-whole-h100.json'), { 'nvidia.com/gpu': '7' })).unhealthyGpus).to.equal(1);
    // 4 replicas of one GPU gone: one GPU.
    expect(counted(withAllocatable(node('node-time-slicing-a10g.json'), { 'nvidia.com/gpu': '12' })).unhealthyGpus).to.equal(1);
    // One 3g.40gb instance: 3/7 of a GPU.
    expect(counted(withAllocatable(node('node-mig-mixed-h100.json'), { 'nvidia.com/mig-3g.40gb': '7' })).unhealthyGpus).to.be.closeTo(3 / 7, 1e-9);
    // A node whose allocatable is not reported yet has nothing unhealthy.
    const unreported = node('node-whole-h100.json');
    expect(counted({ ...unreported, status: { capacity: unreported.status?.capacity } }).unhealthyGpus).to.equal(0);
  });

  it('reads HAMi\'s unhealthy GPUs from its register, and ignores a register it cannot read', () => {
    const hami = node('node-hami-l40s.json');
    const register = JSON.parse(hami.metadata?.annotations?.[HAMI_NODE_REGISTER] ?? '[]') as Record<string, unknown>[];
    const sick = { ...hami, metadata: { ...hami.metadata, annotations: { [HAMI_NODE_REGISTER]: JSON.stringify([register[0], { ...register[1], health: false }]) } } };
    expect(counted(sick)).to.include({ gpus: 2, unhealthyGpus: 1 });
    // Unreadable: the 20 vGPUs are all the node says, counted as devices.
    const broken = { ...hami, metadata: { ...hami.metadata, annotations: { [HAMI_NODE_REGISTER]: '[{"id":' } } };
    expect(counted(broken).gpus).to.equal(20);
  });

  it('counts a CPU node as no GPUs', () => {
    expect(counted({ metadata: { name: 'cpu-1' }, status: { capacity: { cpu: '64' }, allocatable: { cpu: '63' } } })).to.deep.equal({
      gpus: 0, unhealthyGpus: 0, model: null, sharing: 'exclusive',
    });
  });

  it('counts DRA nodes by their gpu devices and the parents of their MIG devices, each once', () => {
    expect(draGpus(sliceOf('dra-resourceslice-gpu.json'))).to.deep.equal({ gpus: 2, unhealthyGpus: 0, model: 'NVIDIA-H100-80GB-HBM3', sharing: 'exclusive' });
    // Five MIG devices of one H100.
    expect(draGpus(sliceOf('dra-resourceslice-mig.json'))).to.deep.equal({ gpus: 1, unhealthyGpus: 0, model: 'NVIDIA-H100-80GB-HBM3', sharing: 'mig' });
    // Other drivers' devices (IMEX channels, NICs) are no GPUs.
    expect(draGpus(sliceOf('dra-resourceslice-gpu.json').map((device) => ({ ...device, driver: 'compute-domain.nvidia.com' }))).gpus).to.equal(0);
  });
});
