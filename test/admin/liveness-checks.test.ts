// What the liveness checks let pass: a loop stopped on purpose (the shutdown), a writer with nothing
// to write however long it has been, a writer's cluster that is gone. The failing paths are tested
// through the admin port (liveness.test.ts).
import { expect } from 'chai';
import sinon from 'sinon';
import { indexWriterCheck, samplerCheck } from '../../src/admin/liveness-checks.js';
import { Sampler } from '../../src/telemetry/scrape/sampler.js';
import { ClusterIndexers } from '../../src/workloads/indexing/cluster-indexers.js';
import { DEFAULT_LABEL_KEYS } from '../../src/workloads/attribution/label-keys.js';
import { DEFAULT_GPU_RESOURCES } from '../../src/k8s/objects/gpu-request.js';
import { failIndexWrites } from '../support/backend.js';
import { FixedClock } from '../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../support/test-index.js';
import { aPod, ms, T0 } from '../workloads/fixtures.js';

const silent = { info() {}, warn() {}, debug() {}, error() {} };

describe('admin/liveness-checks', () => {
  const checksClock = new FixedClock(0);

  it('lets a sampler stopped on purpose pass, however long it has not ticked', async () => {
    const sampler = new Sampler({
      intervalMs: 1_000,
      concurrency: 1,
      clock: { now: () => Date.now() },
      delay: (_ms, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
      scrape: () => Promise.reject(new Error('no exporter')),
      targets: () => [],
      ingest: () => ({ samples: 0, gpus: 0, dropped: [] }),
      observer: { scraped() {}, failed() {} },
      logger: silent,
    });
    sampler.start();
    const check = samplerCheck(sampler, { intervalMs: 1_000, now: () => checksClock.now() });
    checksClock.advance(3_001);
    expect(check.problem()).to.equal('no scrape tick for 3 s (limit 3 s: 3 scrape intervals)');
    await sampler.stop();
    checksClock.advance(60_000);
    expect(check.problem()).to.equal(null);
  });

  describe('index writer', () => {
    let t: TestIndex;
    const clock = new FixedClock(ms(T0));
    beforeEach(async () => {
      t = await openTestIndex({ clock });
    });
    afterEach(async () => {
      sinon.restore();
      await t.close();
    });

    it('lets a writer with nothing waiting pass, and forgets a cluster let go', async () => {
      const store = await t.writer('east');
      const indexers = new ClusterIndexers(store, { defaultOrganizationId: 'acme', keys: DEFAULT_LABEL_KEYS, gpuResources: DEFAULT_GPU_RESOURCES, clock, logger: silent, yieldToLoop: () => Promise.resolve() });
      const check = indexWriterCheck(() => indexers.writerProgress(), { flushIntervalMs: 200, now: () => checksClock.now() });
      const east = indexers.attach({ clusterId: 'east' });
      expect(check.problem()).to.equal(null);
      checksClock.advance(600_000); // no flush at all for 10 minutes, but nothing waits
      expect(check.problem()).to.equal(null);
      await indexers.flushAll(); // the flush loop runs; with nothing to write it still counts
      expect(check.problem()).to.equal(null);
      failIndexWrites(store);
      east.onEvent('pods', { type: 'ADDED', object: aPod({ metadata: { uid: 'p-1', resourceVersion: '1' } }) }, undefined);
      await indexers.flushAll();
      checksClock.advance(30_001);
      expect(check.problem()).to.equal('cluster east: 2 changes waiting, nothing written for 30 s (limit 30 s)');
      await east.detach(); // its last write fails too: dropped, and the cluster is no longer a writer
      expect(check.problem()).to.equal(null);
    });
  });
});
