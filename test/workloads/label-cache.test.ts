// The Namespace and Node cache under churn: it holds the live cluster and the deleted objects a
// cached workload still maps with, nothing more.
import { expect } from 'chai';
import type { Node } from '../../src/workloads/k8s-types.js';
import { LabelCache } from '../../src/workloads/label-cache.js';
import type { ResourceEvent } from '../../src/workloads/workload-sink.js';

const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
const aNodeNamed = (name: string, instanceType = 'p5.48xlarge'): Node => ({ metadata: { name, labels: { [INSTANCE_TYPE]: instanceType } } });
const liveNodes = (count: number): Node[] => Array.from({ length: count }, (_, i) => aNodeNamed(`live-${i}`));

describe('workloads/label-cache', () => {
  // What the indexer does with apply()'s answer: it maps again, at once, every workload in or on the
  // names returned, and each mapping looks its Node up. `inUse` names the nodes cached workloads run on.
  const applyAndRemap = (cache: LabelCache, event: ResourceEvent<Node>, inUse: ReadonlySet<string> = new Set()): void => {
    for (const name of cache.apply(event)) if (inUse.has(name)) cache.get(name);
  };
  const churn = (cache: LabelCache, cycles: number, inUse?: ReadonlySet<string>): number => {
    let largest = 0;
    for (let i = 0; i < cycles; i += 1) {
      applyAndRemap(cache, { type: 'ADDED', object: aNodeNamed(`spot-${i}`) }, inUse);
      applyAndRemap(cache, { type: 'DELETED', object: aNodeNamed(`spot-${i}`) }, inUse);
      largest = Math.max(largest, cache.size);
    }
    return largest;
  };

  it('after 10,000 node create/delete cycles holds the live nodes only (one deletion awaits the next event)', () => {
    const cache = new LabelCache();
    applyAndRemap(cache, { type: 'SYNC', items: liveNodes(50) });
    const largest = churn(cache, 10_000);
    expect(largest).to.equal(51);
    applyAndRemap(cache, { type: 'MODIFIED', object: aNodeNamed('live-0') });
    expect(cache.size).to.equal(50);
  });

  it('keeps a deleted node for as long as a workload maps with it, then forgets it', () => {
    const cache = new LabelCache();
    applyAndRemap(cache, { type: 'SYNC', items: [...liveNodes(3), aNodeNamed('gpu-a', 'p4d.24xlarge')] });
    const onGpuA = new Set(['gpu-a']);
    applyAndRemap(cache, { type: 'DELETED', object: aNodeNamed('gpu-a', 'p4d.24xlarge') }, onGpuA);
    expect(churn(cache, 1000, onGpuA)).to.be.at.most(3 + 3);
    expect(cache.get('gpu-a')?.metadata?.labels).to.deep.equal({ [INSTANCE_TYPE]: 'p4d.24xlarge' });

    churn(cache, 10); // the workload on gpu-a is gone
    expect(cache.get('gpu-a')).to.equal(undefined);
    expect(cache.size).to.be.at.most(3 + 1);
  });

  it('drops at a relist the names it no longer lists, unless a workload still maps with them', () => {
    const cache = new LabelCache();
    applyAndRemap(cache, { type: 'SYNC', items: [aNodeNamed('a'), aNodeNamed('b'), aNodeNamed('c', 'p5e.48xlarge')] });
    applyAndRemap(cache, { type: 'SYNC', items: [aNodeNamed('a')] }, new Set(['c']));
    applyAndRemap(cache, { type: 'MODIFIED', object: aNodeNamed('a') });
    expect(cache.size).to.equal(2);
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('c')?.metadata?.labels).to.deep.equal({ [INSTANCE_TYPE]: 'p5e.48xlarge' });
  });

  it('answers a relist with the names whose labels changed or are new: a deleted node listed again, unchanged, is neither', () => {
    const cache = new LabelCache();
    applyAndRemap(cache, { type: 'SYNC', items: [aNodeNamed('a'), aNodeNamed('b')] });
    applyAndRemap(cache, { type: 'DELETED', object: aNodeNamed('b') }, new Set(['b']));
    const changed = cache.apply({ type: 'SYNC', items: [aNodeNamed('a', 'p5e.48xlarge'), aNodeNamed('b'), aNodeNamed('c')] });
    expect([...changed].sort()).to.deep.equal(['a', 'c']);
    expect(cache.size).to.equal(3);
  });
});
