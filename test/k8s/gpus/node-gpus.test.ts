// Which node labels the share rules read: a cache of nodes keeps these and drops the rest of GFD's.
import { expect } from 'chai';
import { isGpuShareLabel } from '../../../src/k8s/gpus/node-gpus.js';
import { nodeFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

describe('k8s/gpus: the node labels the share rules read', () => {
  const table: [string, boolean][] = [
    ['nvidia.com/gpu.product', true],
    ['nvidia.com/gpu.replicas', true],
    ['nvidia.com/gpu.memory', true],
    ['nvidia.com/gpu.sharing-strategy', true],
    ['nvidia.com/mig-1g.10gb.slices.ci', true],
    ['nvidia.com/mig-1g.10gb.slices.gi', true],
    ['nvidia.com/mig-3g.40gb.product', true],
    ['nvidia.com/mig-3g.40gb.replicas', true],
    ['nvidia.com/gpu.count', false],
    ['nvidia.com/cuda.driver.major', false],
    ['nvidia.com/mig-1g.10gb.count', false],
    ['nvidia.com/mig.strategy', false],
    ['example.com/gpu.product', false],
    ['node.kubernetes.io/instance-type', false],
  ];
  for (const [key, read] of table) it(`${read ? 'reads' : 'leaves'} ${key}`, () => expect(isGpuShareLabel(key)).to.equal(read));

  it("keeps what the rules need of a mixed MIG node's labels, a handful of GFD's many", () => {
    const labels = nodeFixture('gpu-sharing/node-mig-mixed-h100.json').metadata?.labels ?? {};
    const kept = Object.keys(labels).filter(isGpuShareLabel);
    expect(kept).to.include.members(['nvidia.com/gpu.product', 'nvidia.com/mig-1g.10gb.slices.ci', 'nvidia.com/mig-3g.40gb.slices.gi']);
    expect(kept.length).to.be.below(Object.keys(labels).length / 2);
  });
});
