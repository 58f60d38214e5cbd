// What /readyz says about the watched clusters: the service waits for every informer of every cluster
// it can reach, stops waiting for a cluster that never answered (it shows as degraded instead), and
// never waits for a remote kubeconfig that was rejected.
import { expect } from 'chai';
import { pino } from 'pino';
import { ClusterReadiness } from '../../src/admin/cluster-readiness.js';
import { ReadinessTracker } from '../../src/admin/readiness.js';
import { CORE_RESOURCES, type ClusterStatus, type InformerStatus, type WatchedResource } from '../../src/domain/cluster-status.js';
import { FixedClock } from '../support/fixed-clock.js';

const START = Date.parse('2026-05-01T10:00:00Z');
const UNREACHABLE_AFTER_MS = 60_000;

type InformerState = 'synced' | 'syncing' | 'failing' | 'synced-failing' | 'not-started';

function anInformer(resource: WatchedResource, state: InformerState, namespace?: string): InformerStatus {
  const synced = state === 'synced' || state === 'synced-failing';
  const failing = state === 'failing' || state === 'synced-failing';
  return {
    resource,
    ...(namespace === undefined ? {} : { namespace }),
    synced,
    failing,
    ...(failing ? { lastError: { message: 'connect ECONNREFUSED 10.0.0.7:6443', at: START } } : {}),
    relists: 0,
    restarts: failing ? 3 : 0,
    events: { added: 0, modified: 0, deleted: 0 },
    started: state !== 'not-started',
  };
}

/** A cluster without DRA whose informers are in the given states (the rest synced). */
function aCluster(clusterId: string, states: Partial<Record<WatchedResource, InformerState>> = {}): ClusterStatus {
  return {
    clusterId,
    origin: `/etc/clusters/${clusterId}.kubeconfig`,
    since: START,
    informers: CORE_RESOURCES.map((resource) => anInformer(resource, states[resource] ?? 'synced')),
  };
}

/** Namespaces and Nodes failing since the start; Jobs and Pods wait behind them. */
const unreachableStates: Partial<Record<WatchedResource, InformerState>> = { namespaces: 'failing', nodes: 'failing', jobs: 'not-started', pods: 'not-started' };

describe('ClusterReadiness', () => {
  let clock: FixedClock;
  let readiness: ReadinessTracker;
  let clusters: ClusterReadiness;

  beforeEach(() => {
    clock = new FixedClock(START);
    readiness = new ReadinessTracker(pino({ level: 'silent' }));
    clusters = new ClusterReadiness(readiness, { clock, unreachableAfterMs: UNREACHABLE_AFTER_MS });
  });

  it('is ready once every informer of every cluster has synced', () => {
    clusters.update([aCluster('gpu-west'), aCluster('gpu-east')], []);
    expect(readiness.report()).to.include({ ready: true, degraded: false });
    expect(Object.keys(readiness.report().conditions).sort()).to.deep.equal([
      'cluster/gpu-east/jobs',
      'cluster/gpu-east/namespaces',
      'cluster/gpu-east/nodes',
      'cluster/gpu-east/pods',
      'cluster/gpu-west/jobs',
      'cluster/gpu-west/namespaces',
      'cluster/gpu-west/nodes',
      'cluster/gpu-west/pods',
    ]);
  });

  it('is not ready while one informer has not synced yet', () => {
    clusters.update([aCluster('gpu-west'), aCluster('gpu-east', { pods: 'syncing' })], []);
    expect(readiness.report()).to.include({ ready: false, degraded: false });
    expect(readiness.report().conditions['cluster/gpu-east/pods']).to.deep.equal({ ready: false, failure: null, waived: false });
  });

  it('becomes ready when the last informer syncs', () => {
    clusters.update([aCluster('gpu-west', { pods: 'syncing' })], []);
    clusters.update([aCluster('gpu-west')], []);
    expect(readiness.isReady()).to.equal(true);
  });

  it('waits, after the informers synced, until what they listed is written to the index', () => {
    let written = false;
    const waiting = new ClusterReadiness(readiness, { clock, unreachableAfterMs: UNREACHABLE_AFTER_MS, indexed: (id) => id === 'gpu-east' || written });
    waiting.update([aCluster('gpu-west'), aCluster('gpu-east')], []);
    expect(readiness.report().ready).to.equal(false);
    expect(readiness.report().conditions['cluster/gpu-west/pods']).to.include({ ready: false });
    expect(readiness.report().conditions['cluster/gpu-east/pods']).to.include({ ready: true });
    written = true;
    waiting.update([aCluster('gpu-west'), aCluster('gpu-east')], []);
    expect(readiness.report().ready).to.equal(true);
  });

  it('names one condition per namespace when informers watch single namespaces', () => {
    const cluster = aCluster('gpu-west');
    cluster.informers = [anInformer('pods', 'synced', 'research'), anInformer('pods', 'syncing', 'vision')];
    clusters.update([cluster], []);
    expect(readiness.report().conditions).to.have.keys('cluster/gpu-west/pods/research', 'cluster/gpu-west/pods/vision');
    expect(readiness.isReady()).to.equal(false);
  });

  it('is degraded while an informer fails, naming the cluster, the resource and the error', () => {
    clusters.update([aCluster('gpu-west', { pods: 'failing' })], []);
    expect(readiness.report()).to.include({ ready: false, degraded: true });
    expect(readiness.report().conditions['cluster/gpu-west/pods']?.failure).to.equal('cluster "gpu-west" pods: connect ECONNREFUSED 10.0.0.7:6443');
  });

  it('says "failing" for a failing informer that has no error recorded', () => {
    const cluster = aCluster('gpu-west');
    cluster.informers = [{ ...anInformer('nodes', 'failing'), lastError: undefined }];
    clusters.update([cluster], []);
    expect(readiness.report().conditions['cluster/gpu-west/nodes']?.failure).to.equal('cluster "gpu-west" nodes: failing');
  });

  it('is no longer degraded once the failing informer recovers', () => {
    clusters.update([aCluster('gpu-west', { pods: 'synced-failing' })], []);
    clusters.update([aCluster('gpu-west')], []);
    expect(readiness.report()).to.include({ ready: true, degraded: false });
  });

  it('keeps waiting for a cluster that fails without syncing, until unreachableAfterMs has passed', () => {
    clusters.update([aCluster('gpu-west'), aCluster('gpu-lab', unreachableStates)], []);
    clock.advance(UNREACHABLE_AFTER_MS - 1);
    clusters.update([aCluster('gpu-west'), aCluster('gpu-lab', unreachableStates)], []);
    expect(readiness.report()).to.include({ ready: false, degraded: true });
  });

  it('stops waiting for a cluster that failed without syncing for unreachableAfterMs, and shows it degraded', () => {
    clock.advance(UNREACHABLE_AFTER_MS);
    clusters.update([aCluster('gpu-west'), aCluster('gpu-lab', unreachableStates)], []);
    const report = readiness.report();
    expect(report).to.include({ ready: true, degraded: true });
    expect(report.conditions['cluster/gpu-lab/namespaces']).to.deep.equal({
      ready: false,
      waived: true,
      failure: 'cluster "gpu-lab" namespaces: connect ECONNREFUSED 10.0.0.7:6443',
    });
  });

  it('waives the informers of an unreachable cluster that never started, behind its failing ones', () => {
    clock.advance(UNREACHABLE_AFTER_MS);
    clusters.update([aCluster('gpu-lab', unreachableStates)], []);
    expect(readiness.report().conditions['cluster/gpu-lab/pods']).to.deep.equal({ ready: false, waived: true, failure: null });
    expect(readiness.report().conditions['cluster/gpu-lab/jobs']).to.include({ waived: true });
  });

  it('does not waive a cluster that is slow to sync but not failing', () => {
    clock.advance(UNREACHABLE_AFTER_MS * 10);
    clusters.update([aCluster('gpu-slow', { pods: 'syncing' })], []);
    expect(readiness.report()).to.include({ ready: false, degraded: false });
  });

  it('ends the waiver when the unreachable cluster syncs', () => {
    clock.advance(UNREACHABLE_AFTER_MS);
    clusters.update([aCluster('gpu-lab', unreachableStates)], []);
    clusters.update([aCluster('gpu-lab')], []);
    expect(readiness.report().conditions['cluster/gpu-lab/namespaces']).to.deep.equal({ ready: true, waived: false, failure: null });
    expect(readiness.report()).to.include({ ready: true, degraded: false });
  });

  it('stays ready, degraded, when a cluster that synced starts failing', () => {
    clusters.update([aCluster('gpu-west')], []);
    clusters.update([aCluster('gpu-west', { namespaces: 'synced-failing', nodes: 'synced-failing', jobs: 'synced-failing', pods: 'synced-failing' })], []);
    const report = readiness.report();
    expect(report).to.include({ ready: true, degraded: true });
    expect(report.conditions['cluster/gpu-west/pods']).to.deep.equal({ ready: true, waived: false, failure: 'cluster "gpu-west" pods: connect ECONNREFUSED 10.0.0.7:6443' });
  });

  it('forgets the conditions of a cluster no longer watched, and stops waiting for it', () => {
    clusters.update([aCluster('gpu-west'), aCluster('gpu-old', { pods: 'failing' })], []);
    clusters.update([aCluster('gpu-west')], []);
    const report = readiness.report();
    expect(Object.keys(report.conditions).filter((name) => name.startsWith('cluster/gpu-old/'))).to.deep.equal([]);
    expect(report).to.include({ ready: true, degraded: false });
  });

  it('keeps conditions that are not about clusters when a cluster goes away', () => {
    readiness.require('index');
    readiness.markReady('index');
    clusters.update([aCluster('gpu-west')], []);
    clusters.update([], []);
    expect(readiness.names()).to.deep.equal(['index']);
  });

  it('shows a rejected remote kubeconfig as degraded without waiting for it', () => {
    clusters.update([aCluster('gpu-west')], [{ file: 'README', message: 'Kubeconfig "/etc/clusters/README" has no current-context' }]);
    const report = readiness.report();
    expect(report).to.include({ ready: true, degraded: true });
    expect(report.conditions['remote-kubeconfig/README']).to.deep.equal({ ready: true, waived: false, failure: 'Kubeconfig "/etc/clusters/README" has no current-context' });
  });

  it('forgets the problem of a remote kubeconfig once it is fixed or removed', () => {
    clusters.update([], [{ file: 'README', message: 'Kubeconfig "/etc/clusters/README" has no current-context' }]);
    clusters.update([], []);
    expect(readiness.report()).to.include({ ready: true, degraded: false });
    expect(readiness.names()).to.deep.equal([]);
  });
});

describe('ReadinessTracker waivers', () => {
  let readiness: ReadinessTracker;

  beforeEach(() => {
    readiness = new ReadinessTracker(pino({ level: 'silent' }));
  });

  it('stops waiting for a waived condition, which stays not ready', () => {
    readiness.require('cluster/gpu-lab/pods');
    readiness.waive('cluster/gpu-lab/pods');
    expect(readiness.isReady()).to.equal(true);
    expect(readiness.report().conditions['cluster/gpu-lab/pods']).to.deep.equal({ ready: false, failure: null, waived: true });
  });

  it('ends the waiver when the condition is met', () => {
    readiness.require('cluster/gpu-lab/pods');
    readiness.waive('cluster/gpu-lab/pods');
    readiness.markReady('cluster/gpu-lab/pods');
    expect(readiness.report().conditions['cluster/gpu-lab/pods']).to.deep.equal({ ready: true, failure: null, waived: false });
  });

  it('does not waive a condition already met', () => {
    readiness.require('index');
    readiness.markReady('index');
    readiness.waive('index');
    expect(readiness.report().conditions.index).to.deep.equal({ ready: true, failure: null, waived: false });
  });

  it('waits again for a waived condition that is forgotten and required anew', () => {
    readiness.require('cluster/gpu-lab/pods');
    readiness.waive('cluster/gpu-lab/pods');
    readiness.forget('cluster/gpu-lab/pods');
    expect(readiness.has('cluster/gpu-lab/pods')).to.equal(false);
    readiness.require('cluster/gpu-lab/pods');
    expect(readiness.isReady()).to.equal(false);
  });

  it('drops a forgotten failure from degraded', () => {
    readiness.require('cluster/gpu-lab/pods');
    readiness.setFailure('cluster/gpu-lab/pods', 'cluster "gpu-lab" pods: 401');
    expect(readiness.degraded()).to.equal(true);
    readiness.forget('cluster/gpu-lab/pods');
    expect(readiness.degraded()).to.equal(false);
  });
});
