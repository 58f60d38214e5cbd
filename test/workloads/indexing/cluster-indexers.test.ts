// The indexers of all clusters, written on the service's flush interval: a large batch (the LIST of
// a big cluster) is written in steps with the event loop free in between, so probes and requests
// are answered while it is written, and a failing write is counted and kept (dropped only when the
// cluster is let go, and logged as such).
import { expect } from 'chai';
import sinon from 'sinon';
import { ClusterIndexers } from '../../../src/workloads/indexing/cluster-indexers.js';
import { DEFAULT_LABEL_KEYS } from '../../../src/workloads/attribution/label-keys.js';
import { DEFAULT_GPU_RESOURCES } from '../../../src/k8s/objects/gpu-request.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { failIndexWrites } from '../../support/backend.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type ClusterWriter, type TestIndex } from '../../support/test-index.js';
import { aPod, ms, T0 } from '../fixtures.js';

const pods = (count: number, prefix = 'p'): Pod[] =>
  Array.from({ length: count }, (_, i) => aPod({ metadata: { uid: `${prefix}-${i}`, name: `${prefix}-${i}`, resourceVersion: '1' }, status: { phase: 'Running', startTime: T0 } }));

describe('workloads/cluster-indexers', () => {
  let t: TestIndex;
  /** Cluster east's writer, the one every indexer here writes through. */
  let store: ClusterWriter;
  const clock = new FixedClock(ms(T0));
  const logger = () => ({ debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy(), error: sinon.spy() });
  beforeEach(async () => {
    t = await openTestIndex({ clock });
    store = await t.writer('east');
  });
  afterEach(() => t.close());

  const indexers = (options: { stepItems: number; yieldToLoop: () => Promise<void>; log?: ReturnType<typeof logger> }) =>
    new ClusterIndexers(store, { defaultOrganizationId: 'acme', keys: DEFAULT_LABEL_KEYS, gpuResources: DEFAULT_GPU_RESOURCES, clock, logger: options.log ?? logger(), ...options });

  it('writes a large batch in steps of stepItems, yielding to the event loop between steps', async () => {
    let yields = 0;
    const rowsSeenAtYield: number[] = [];
    const all = indexers({ stepItems: 500, yieldToLoop: async () => { yields += 1; rowsSeenAtYield.push(await t.countRows()); await new Promise((resolve) => setImmediate(resolve)); } });
    const cluster = all.attach({ clusterId: 'east' });
    cluster.onEvent('pods', { type: 'SYNC', items: pods(1200) }, undefined);
    await all.flushAll();
    expect(await t.countRows()).to.equal(1200);
    // 1,200 rows and 1,200 intervals in steps of 500 items: four yields, rows visible as they are
    // written. A sink that writes each row with its intervals takes 250 of each per step.
    expect(yields).to.equal(4);
    expect(rowsSeenAtYield).to.deep.equal(store.writeWorkloads === undefined ? [500, 1000, 1200, 1200] : [250, 500, 750, 1000]);
    expect(all.counters()).to.deep.equal([{ clusterId: 'east', events: 1, rowsWritten: 1200, intervalsWritten: 1200, cancelledByReconcile: 0, flushErrors: 0, pending: 0 }]);
  });

  describe('with a backlog', () => {
    // Events arrive while a batch is written (here, at the batch's first yield); the writes take
    // `writeMs` of the clock. Behind by a flush interval or more, the same flush writes them too.
    const flushWithArrivals = async (writeMs: number, signal?: AbortSignal) => {
      let arrived = false;
      const all = new ClusterIndexers(store, {
        defaultOrganizationId: 'acme', keys: DEFAULT_LABEL_KEYS, gpuResources: DEFAULT_GPU_RESOURCES, clock, logger: logger(), stepItems: 500, backlogAfterMs: 200,
        yieldToLoop: async () => {
          clock.advance(writeMs);
          if (!arrived) cluster.onEvent('pods', { type: 'SYNC', items: [...pods(600), ...pods(10, 'late')] }, undefined);
          arrived = true;
        },
      });
      const cluster = all.attach({ clusterId: 'east' });
      cluster.onEvent('pods', { type: 'SYNC', items: pods(600) }, undefined);
      await all.flushAll(signal);
      return all;
    };

    it('goes on with what arrived meanwhile once the writes took a flush interval', async () => {
      const all = await flushWithArrivals(250);
      expect(await t.countRows()).to.equal(610);
      expect(all.counters()[0]).to.include({ pending: 0 });
    });

    it('leaves it for the next flush when the writes were quicker than the interval', async () => {
      const all = await flushWithArrivals(10);
      expect(await t.countRows()).to.equal(600);
      expect(all.counters()[0]?.pending).to.be.greaterThan(0);
    });

    it('stops between two batches once the flush loop is stopped', async () => {
      const stopped = new AbortController();
      stopped.abort();
      const all = await flushWithArrivals(250, stopped.signal);
      expect(await t.countRows()).to.equal(600);
      expect(all.counters()[0]?.pending).to.be.greaterThan(0);
    });
  });

  it('counts a failed write, keeps its rows, and writes them at the next flush', async () => {
    const log = logger();
    const all = indexers({ stepItems: 500, yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)), log });
    const cluster = all.attach({ clusterId: 'east' });
    cluster.onEvent('pods', { type: 'SYNC', items: pods(3) }, undefined);
    const upsert = failIndexWrites(store);
    await all.flushAll();
    expect(all.counters()[0]).to.include({ flushErrors: 1, pending: 6 });
    expect(log.error.firstCall.args[1]).to.equal('Index write failed; retrying at the next flush');
    upsert.restore();
    await all.flushAll();
    expect(await t.countRows()).to.equal(3);
    expect(all.counters()[0]).to.include({ flushErrors: 1, pending: 0 });
  });

  it('counts and logs a failed last write of a detached cluster as dropped, not as retried', async () => {
    const log = logger();
    const all = indexers({ stepItems: 500, yieldToLoop: () => Promise.resolve(), log });
    const cluster = all.attach({ clusterId: 'east' });
    cluster.onEvent('pods', { type: 'SYNC', items: pods(2) }, undefined);
    failIndexWrites(store);
    await cluster.detach();
    expect(log.error.callCount).to.equal(1);
    expect(log.error.firstCall.args[0]).to.include({ cluster: 'east', dropped: 4 });
    expect(log.error.firstCall.args[1]).to.equal('Index write failed as the cluster was let go; its queued changes are dropped');
    expect(all.counters()).to.deep.equal([]); // no flush will come for it
    sinon.restore();
    expect(await t.countRows()).to.equal(0);
  });

  it('moves a cluster\'s write count with every flush that succeeds, empty ones too, and holds it while writes fail', async () => {
    const all = indexers({ stepItems: 500, yieldToLoop: () => new Promise((resolve) => setImmediate(resolve)) });
    const cluster = all.attach({ clusterId: 'east' });
    expect(all.writerProgress()).to.deep.equal([{ clusterId: 'east', pending: 0, progress: 0 }]);
    await all.flushAll();
    expect(all.writerProgress()).to.deep.equal([{ clusterId: 'east', pending: 0, progress: 1 }]);
    cluster.onEvent('pods', { type: 'SYNC', items: pods(3) }, undefined);
    const upsert = failIndexWrites(store);
    await all.flushAll();
    await all.flushAll();
    expect(all.writerProgress()).to.deep.equal([{ clusterId: 'east', pending: 6, progress: 1 }]);
    upsert.restore();
    await all.flushAll();
    expect(all.writerProgress()).to.deep.equal([{ clusterId: 'east', pending: 0, progress: 2 }]);
  });

  it('writes what a cluster still had queued when it is detached', async () => {
    const all = indexers({ stepItems: 500, yieldToLoop: () => Promise.resolve() });
    const cluster = all.attach({ clusterId: 'east' });
    cluster.onEvent('pods', { type: 'SYNC', items: pods(2) }, undefined);
    await cluster.detach();
    expect(await t.countRows()).to.equal(2);
    expect(all.counters()).to.deep.equal([]);
  });
});
