// The Namespace and Node cache under churn: it holds the live cluster and the deleted objects a
// cached workload still maps with, nothing more; and a workload on a node deleted under it keeps the
// node's instance type in the index.
import { expect } from 'chai';
import sinon from 'sinon';
import type { WorkloadView } from '../../../src/domain/workload.js';
import { WorkloadIndexer } from '../../../src/workloads/indexing/indexer.js';
import type { Job, Namespace, Node, Pod } from '../../../src/k8s/objects/k8s-types.js';
import { LabelCache } from '../../../src/workloads/caches/label-cache.js';
import type { WholeEvent } from '../../../src/k8s/objects/resource-event.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aJob, aJobPod, aPod, gpuContainer, ms, T0, terminated } from '../fixtures.js';

const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
const aNodeNamed = (name: string, instanceType = 'p5.48xlarge'): Node => ({ metadata: { name, labels: { [INSTANCE_TYPE]: instanceType } } });
const liveNodes = (count: number): Node[] => Array.from({ length: count }, (_, i) => aNodeNamed(`live-${i}`));

describe('workloads/label-cache', () => {
  // What the indexer does with apply()'s answer: it maps again, at once, every workload in or on the
  // names returned, and each mapping looks its Node up. `inUse` names the nodes cached workloads run on.
  const applyAndRemap = (cache: LabelCache, event: WholeEvent<Node>, inUse: ReadonlySet<string> = new Set()): void => {
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

  it('answers the name of a Namespace whose kept annotation changed, as for a label', () => {
    const cache = new LabelCache();
    const team = (annotations?: Record<string, string>): Namespace => ({ metadata: { name: 'team-a', labels: { 'gpucap.io/initiative': 'vision' }, ...(annotations === undefined ? {} : { annotations }) } });
    cache.apply({ type: 'SYNC', items: [team()] });
    expect([...cache.apply({ type: 'MODIFIED', object: team({ 'gpucap.io/allowed-initiatives': 'llm' }) })]).to.deep.equal(['team-a']);
    expect([...cache.apply({ type: 'MODIFIED', object: team({ 'gpucap.io/allowed-initiatives': 'llm' }) })]).to.deep.equal([]);
    expect([...cache.apply({ type: 'SYNC', items: [team({ 'gpucap.io/allowed-initiatives': 'llm,speech' })] })]).to.deep.equal(['team-a']);
    expect([...cache.apply({ type: 'MODIFIED', object: team() })]).to.deep.equal(['team-a']);
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

describe('workloads/label-cache through the indexer: attribution from deleted Nodes and Namespaces', () => {
  let t: TestIndex;
  let clock: FixedClock;
  let indexer: WorkloadIndexer;
  const AT = (hhmm: string): string => `2026-11-20T${hhmm}:00Z`;
  const view = async (id: string): Promise<WorkloadView | undefined> => t.index.get(id, ms(AT('20:00')));
  const nodeEvent = (type: 'ADDED' | 'DELETED', name: string) => indexer.onNodeEvent({ type, object: aNodeNamed(name) });
  const autoscale = (cycles: number) => {
    for (let i = 0; i < cycles; i += 1) {
      nodeEvent('ADDED', `spot-${i}`);
      nodeEvent('DELETED', `spot-${i}`);
    }
  };
  const running = { phase: 'Running', startTime: AT('10:00') };
  const onGpuA = { containers: [gpuContainer(1)], nodeName: 'gpu-a' };
  const complete = { type: 'Complete', status: 'True', lastTransitionTime: AT('11:00') };
  const finishedJob: Job = aJob({ metadata: { uid: 'job-1' }, status: { startTime: AT('10:00'), conditions: [complete] } });
  const finishedPod: Pod = aJobPod('job-1', { spec: onGpuA, status: { phase: 'Succeeded', startTime: AT('10:00'), containerStatuses: [terminated(0, AT('11:00'))] } });

  beforeEach(async () => {
    clock = new FixedClock(ms(T0));
    t = await openTestIndex({ clock });
    const logger = { debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy() };
    indexer = new WorkloadIndexer(await t.writer('local'), { clusterId: 'local', defaultOrganizationId: 'default-org', clock, logger });
    indexer.onNodeEvent({ type: 'SYNC', items: [aNodeNamed('gpu-a')] });
  });
  afterEach(() => t.close());

  it('a pod running on a node deleted under it, deleted itself after more node churn, keeps the instance type', async () => {
    indexer.onPodEvent({ type: 'ADDED', object: aPod({ metadata: { uid: 'pod-1' }, spec: onGpuA, status: running }) });
    await indexer.flush();
    clock.set(AT('11:00'));
    nodeEvent('DELETED', 'gpu-a');
    autoscale(20);
    indexer.onPodEvent({ type: 'DELETED', object: aPod({ metadata: { uid: 'pod-1', resourceVersion: '8' }, spec: onGpuA, status: running }) });
    await indexer.flush();
    expect(await view('pod-1')).to.deep.include({ status: 'cancelled', instanceType: 'p5.48xlarge', gpuHoursUsed: 1 });
  });

  it('a finished Job outliving its node and its pod keeps the instance type through later relists', async () => {
    indexer.onJobEvent({ type: 'ADDED', object: finishedJob });
    indexer.onPodEvent({ type: 'ADDED', object: finishedPod });
    await indexer.flush();
    nodeEvent('DELETED', 'gpu-a');
    indexer.onPodEvent({ type: 'DELETED', object: finishedPod }); // pod garbage collection: its node is gone
    autoscale(20);
    indexer.onNodeEvent({ type: 'SYNC', items: [] });
    indexer.onJobEvent({ type: 'SYNC', items: [finishedJob] });
    indexer.onPodEvent({ type: 'SYNC', items: [] });
    autoscale(20);
    indexer.onPodEvent({ type: 'SYNC', items: [] });
    await indexer.flush();
    expect(await view('job-1')).to.deep.include({ status: 'completed', instanceType: 'p5.48xlarge', gpuHoursUsed: 1 });
  });

  it('a pod in a Namespace whose deletion is seen first keeps the Namespace\'s organization and initiative', async () => {
    const team = (name: string): Namespace => ({ metadata: { name, labels: { 'gpucap.io/organization': 'research', 'gpucap.io/initiative': 'vision' } } });
    indexer.onNamespaceEvent({ type: 'SYNC', items: [team('team-a')] });
    indexer.onPodEvent({ type: 'ADDED', object: aPod({ metadata: { uid: 'pod-1' }, spec: onGpuA, status: running }) });
    indexer.onNamespaceEvent({ type: 'DELETED', object: team('team-a') });
    for (let i = 0; i < 20; i += 1) {
      indexer.onNamespaceEvent({ type: 'ADDED', object: team(`ci-${i}`) });
      indexer.onNamespaceEvent({ type: 'DELETED', object: team(`ci-${i}`) });
    }
    indexer.onPodEvent({ type: 'DELETED', object: aPod({ metadata: { uid: 'pod-1', resourceVersion: '8' }, spec: onGpuA, status: running }) });
    await indexer.flush();
    expect(await view('pod-1')).to.deep.include({ status: 'cancelled', organizationId: 'research', initiativeId: 'vision' });
  });

  it('forgets a deleted node once the last workload on it is gone: the Job keeps its instance type, a pod seen on the node later has none', async () => {
    indexer.onJobEvent({ type: 'ADDED', object: finishedJob });
    indexer.onPodEvent({ type: 'ADDED', object: finishedPod });
    nodeEvent('DELETED', 'gpu-a');
    indexer.onPodEvent({ type: 'DELETED', object: finishedPod });
    indexer.onJobEvent({ type: 'DELETED', object: finishedJob });
    autoscale(20);
    indexer.onPodEvent({ type: 'ADDED', object: aPod({ metadata: { uid: 'late' }, spec: onGpuA, status: running }) });
    await indexer.flush();
    expect(await view('job-1')).to.deep.include({ status: 'completed', instanceType: 'p5.48xlarge' });
    expect(await view('late')).to.deep.include({ status: 'running', instanceType: 'unknown' });
  });
});
