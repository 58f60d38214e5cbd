// The share rules on real object shapes (test/fixtures/kubernetes/gpu-sharing/, SOURCES.md there):
// GFD's labels of a node in each MIG strategy and sharing mode, and KAI's and HAMi's pods as those
// schedulers leave them.
import { expect } from 'chai';
import { gpuAsk } from '../../../src/k8s/gpus/gpu-ask.js';
import { podGpuShare, type GpuShare } from '../../../src/k8s/gpus/pod-share.js';
import type { Pod, ResourceList } from '../../../src/k8s/objects/k8s-types.js';
import { nodeFixture, podFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

const fixture = (name: string): string => `gpu-sharing/${name}.json`;

function asking(limits: ResourceList): Pod {
  return { metadata: { name: 'p' }, spec: { containers: [{ name: 'main', resources: { limits } }] } };
}

const rows: { pod: Pod; podName: string; node: string; expected: GpuShare }[] = [
  { podName: 'a 1g.10gb slice', pod: asking({ 'nvidia.com/mig-1g.10gb': '1' }), node: 'node-mig-mixed-h100', expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'a 3g.40gb slice', pod: asking({ 'nvidia.com/mig-3g.40gb': '1' }), node: 'node-mig-mixed-h100', expected: { devices: 1, equivalents: 3 / 7, sharing: 'mig', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'one nvidia.com/gpu', pod: asking({ 'nvidia.com/gpu': '1' }), node: 'node-mig-single-a100', expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: 'NVIDIA-A100-SXM4-40GB' } },
  { podName: 'two nvidia.com/gpu', pod: asking({ 'nvidia.com/gpu': '2' }), node: 'node-time-slicing-a10g', expected: { devices: 2, equivalents: 2 / 4, sharing: 'time_slicing', model: 'NVIDIA-A10G' } },
  { podName: 'one nvidia.com/gpu.shared', pod: asking({ 'nvidia.com/gpu.shared': '1' }), node: 'node-time-slicing-renamed', expected: { devices: 1, equivalents: 1 / 4, sharing: 'time_slicing', model: 'NVIDIA-A10G' } },
  { podName: 'one nvidia.com/gpu', pod: asking({ 'nvidia.com/gpu': '1' }), node: 'node-mps-l4', expected: { devices: 1, equivalents: 1 / 4, sharing: 'mps', model: 'NVIDIA-L4' } },
  { podName: 'one nvidia.com/gpu', pod: asking({ 'nvidia.com/gpu': '1' }), node: 'node-whole-h100', expected: { devices: 1, equivalents: 1, sharing: 'exclusive', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'pod-kai-fraction', pod: podFixture(fixture('pod-kai-fraction')), node: 'node-whole-h100', expected: { devices: 1, equivalents: 0.5, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'pod-kai-fraction-multi', pod: podFixture(fixture('pod-kai-fraction-multi')), node: 'node-whole-h100', expected: { devices: 2, equivalents: 1, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'pod-kai-gpu-memory', pod: podFixture(fixture('pod-kai-gpu-memory')), node: 'node-whole-h100', expected: { devices: 1, equivalents: 2000 / 81559, sharing: 'fractional', model: 'NVIDIA-H100-80GB-HBM3' } },
  { podName: 'pod-hami-cores', pod: podFixture(fixture('pod-hami-cores')), node: 'node-hami-l40s', expected: { devices: 1, equivalents: 0.3, sharing: 'fractional', model: null } },
  { podName: 'pod-hami-mem-percentage', pod: podFixture(fixture('pod-hami-mem-percentage')), node: 'node-hami-l40s', expected: { devices: 1, equivalents: 0.5, sharing: 'fractional', model: null } },
];

describe('gpus: the share rules on real node labels and scheduler pods', () => {
  for (const row of rows) {
    it(`${row.podName} on ${row.node}: ${row.expected.equivalents.toFixed(4)} GPU, ${row.expected.sharing}`, () => {
      const share = podGpuShare(gpuAsk(row.pod), nodeFixture(fixture(row.node)).metadata?.labels);
      expect(share).to.deep.equal(row.expected);
    });
  }
});
