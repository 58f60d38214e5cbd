// The reflector against the simulated API on loopback: initial sync, live events, bookmarks, and the
// fault matrix. After every fault the consumer's Map must equal the store exactly, with no event
// applied twice, and the recovery must be counted.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Reflector } from '../../src/k8s/reflector.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { pod } from '../sim/sim-client.js';
import { eachDecoder } from './decoders.js';
import { eventually, startReflector, storeSnapshot, type MapConsumer } from './reflector-harness.js';

describe('Reflector against the simulated Kubernetes API', () => {
  eachDecoder((decoder) => {
    let sim: KubeApi;
    let reflector: Reflector<KubeObject> | undefined;
    beforeEach(async () => {
      sim = await startKubeApi({ bookmarkIntervalMs: 50 });
    });
    afterEach(async () => {
      await reflector?.stop();
      reflector = undefined;
      await sim.close();
    });

    function start(options: Parameters<typeof startReflector>[1] = {}): MapConsumer {
      const started = startReflector(sim, { decoder: decoder(), ...options });
      reflector = started.reflector;
      return started.consumer;
    }

    async function converged(consumer: MapConsumer, timeoutMs = 5000): Promise<void> {
      await eventually(() => expect(consumer.snapshot()).to.deep.equal(storeSnapshot(sim)), timeoutMs);
      expect(consumer.doubles).to.deep.equal([]);
    }

    /** Creates, modifies and deletes pods so a missed or doubled event would show in the Map. */
    function churn(tag: string): void {
      sim.store.create('pods', pod('ml', `${tag}-a`));
      sim.store.create('pods', pod('ml', `${tag}-b`));
      sim.store.patchStatus('pods', { namespace: 'ml', name: `${tag}-a` }, { phase: 'Running' });
      sim.store.delete('pods', { namespace: 'ml', name: `${tag}-b` });
    }

    it('syncs 1,234 pods through paginated LISTs and delivers them as one snapshot without managedFields', async () => {
      for (let i = 0; i < 1234; i++) {
        sim.store.create('pods', { ...pod(`ns-${i % 7}`, `p-${i}`), metadata: { namespace: `ns-${i % 7}`, name: `p-${i}`, managedFields: [{ manager: 'kubectl' }] } });
      }
      const consumer = start({ pageSize: 100 });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      const syncs = consumer.events.filter((e) => e.type === 'SYNC');
      expect(syncs).to.have.length(1);
      const listedAt = String(sim.store.resourceVersion);
      expect(syncs[0]).to.include({ resourceVersion: listedAt });
      expect(consumer.objects.size).to.equal(1234);
      expect([...consumer.objects.values()].some((o) => 'managedFields' in o.metadata)).to.equal(false);
      expect(sim.faults.requestCount('/api/v1/pods', { watch: false })).to.equal(13);
      expect(reflector?.status()).to.include({ synced: true, lastResourceVersion: listedAt, relists: 0, restarts: 0 });
    });

    it('delivers a LIST page by page when asked, then one SYNC that completes it, holding no page itself', async () => {
      for (let i = 0; i < 1234; i++) sim.store.create('pods', pod(`ns-${i % 7}`, `p-${i}`));
      const firsts: boolean[] = [];
      const consumer = start({
        pageSize: 100,
        pages: true,
        onEvent: (event) => {
          if (event.type === 'PAGE') firsts.push(event.first);
          if (event.type === 'SYNC') expect(event).to.include({ paged: true }).and.have.property('items').that.is.empty;
          consumer.apply(event);
        },
      });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      expect(firsts).to.deep.equal([true, ...Array<boolean>(12).fill(false)]);
      expect(consumer.count('SYNC')).to.equal(1);
      expect(consumer.objects.size).to.equal(1234);
      expect(consumer.snapshot()).to.deep.equal(storeSnapshot(sim));
    });

    it('relists from the first page when a paged LIST fails part way, and what the failed pages held is void', async () => {
      for (let i = 0; i < 250; i++) sim.store.create('pods', pod('ml', `p-${i}`));
      let pages = 0;
      const consumer = start({
        pageSize: 100,
        pages: true,
        onEvent: (event) => {
          consumer.apply(event);
          if (event.type !== 'PAGE' || (pages += 1) !== 2) return;
          // The third page fails; meanwhile, pods the first pages held are deleted.
          sim.faults.failNext(500, { watch: false });
          for (let i = 0; i < 10; i++) sim.store.delete('pods', { namespace: 'ml', name: `p-${i}` });
        },
      });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      expect(consumer.count('SYNC')).to.equal(1);
      expect(consumer.pages).to.equal(2 + 3);
      expect(consumer.snapshot()).to.deep.equal(storeSnapshot(sim));
      expect(reflector?.status()).to.include({ restarts: 1, relists: 0 });
    });

    it('delivers live ADDED, MODIFIED and DELETED in order with their resourceVersions', async () => {
      const consumer = start();
      await eventually(() => expect(reflector?.status().watchAgeMs).to.be.a('number'));
      const base = sim.store.resourceVersion;
      sim.store.create('pods', { ...pod('ml', 'p'), metadata: { namespace: 'ml', name: 'p', managedFields: [{ manager: 'x' }] } });
      sim.store.patchStatus('pods', { namespace: 'ml', name: 'p' }, { phase: 'Running' });
      sim.store.delete('pods', { namespace: 'ml', name: 'p' });
      await eventually(() => expect(consumer.events).to.have.length(4));
      const live = consumer.events.slice(1).map((e) => (e.type === 'SYNC' || e.type === 'PAGE' ? e.type : `${e.type} ${e.object.metadata.name} ${e.resourceVersion}`));
      expect(live).to.deep.equal([`ADDED p ${base + 1}`, `MODIFIED p ${base + 2}`, `DELETED p ${base + 3}`]);
      const added = consumer.events[1];
      expect(added?.type === 'ADDED' && 'managedFields' in added.object.metadata).to.equal(false);
      expect(reflector?.status()).to.include({ events: 3, lastResourceVersion: String(base + 3) });
    });

    it('advances the resourceVersion on bookmarks while its own resource is quiet', async () => {
      start();
      await eventually(() => expect(reflector?.synced).to.equal(true));
      sim.store.create('nodes', { metadata: { name: 'n1' } });
      sim.store.create('nodes', { metadata: { name: 'n2' } });
      await eventually(() => expect(reflector?.status().lastResourceVersion).to.equal(String(sim.store.resourceVersion)));
      expect(reflector?.status().events).to.equal(0);
    });

    it('watches only the selected labels when given a label selector', async () => {
      sim.store.create('pods', pod('ml', 'gpu-1', { gpu: 'yes' }));
      sim.store.create('pods', pod('ml', 'cpu-1', { gpu: 'no' }));
      const consumer = start({ labelSelector: 'gpu=yes' });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      sim.store.create('pods', pod('ml', 'gpu-2', { gpu: 'yes' }));
      sim.store.create('pods', pod('ml', 'cpu-2', { gpu: 'no' }));
      await eventually(() => expect([...consumer.objects.keys()].sort()).to.deep.equal(['ml/gpu-1', 'ml/gpu-2']));
    });

    it('re-watches from the last resourceVersion without relisting when the server ends the stream', async () => {
      const consumer = start({ watchTimeoutSeconds: { min: 1, max: 1 } });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      churn('before');
      await eventually(() => expect(reflector?.status().restarts).to.be.at.least(1), 4000);
      churn('after');
      await converged(consumer);
      expect(reflector?.status()).to.include({ relists: 0 });
      expect(sim.faults.requestCount('/api/v1/pods', { watch: false })).to.equal(1);
      expect(consumer.count('SYNC')).to.equal(1);
    });

    const faults: { name: string; inject: (sim: KubeApi) => void | Promise<void>; lastStatus?: number }[] = [
      { name: 'a dropped watch stream', inject: (s) => void s.faults.dropWatches() },
      {
        name: 'a 500 on the next watches',
        inject: (s) => {
          s.faults.failNext(500, { watch: true, count: 2 });
          s.faults.dropWatches();
        },
        lastStatus: 500,
      },
      {
        name: 'a 401 on the next watch, then success',
        inject: (s) => {
          s.faults.failNext(401, { watch: true });
          s.faults.dropWatches();
        },
        lastStatus: 401,
      },
      {
        name: 'a 429 on the next watches',
        inject: (s) => {
          s.faults.failNext(429, { watch: true, count: 3 });
          s.faults.dropWatches();
        },
        lastStatus: 429,
      },
      { name: 'a server restart', inject: (s) => s.faults.restart(300) },
    ];
    for (const fault of faults) {
      it(`converges to exactly the store after ${fault.name}, with the restart counted`, async () => {
        for (let i = 0; i < 30; i++) sim.store.create('pods', pod('ml', `seed-${i}`));
        const consumer = start();
        await eventually(() => expect(reflector?.synced).to.equal(true));
        churn('before');
        await converged(consumer);
        const injected = fault.inject(sim);
        churn('during');
        await injected;
        churn('after');
        await converged(consumer);
        const status = reflector?.status();
        expect(status?.restarts).to.be.at.least(1);
        expect(status?.relists).to.equal(0);
        expect(consumer.count('SYNC')).to.equal(1);
        if (fault.lastStatus !== undefined) expect(status?.lastError?.statusCode).to.equal(fault.lastStatus);
      });
    }

    it('retries a LIST that failed with 500 after backoff and becomes synced', async () => {
      sim.store.create('pods', pod('ml', 'a'));
      sim.faults.failNext(500, { watch: false, count: 2 });
      const consumer = start();
      await eventually(() => expect(reflector?.synced).to.equal(true));
      await converged(consumer);
      expect(reflector?.status()).to.deep.include({ restarts: 2, relists: 0 });
      expect(reflector?.status().lastError).to.include({ statusCode: 500, code: 'KUBE_HTTP_STATUS' });
    });

    it('restarts a watch that hangs without answering once the stall watchdog fires', async () => {
      // Seeded so the list's resourceVersion is not "0", which a watch would read as "any version".
      sim.store.create('pods', pod('ml', 'seed'));
      const consumer = start({ stallTimeoutMs: 300 });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      sim.faults.hang({ watch: true, count: 1 });
      sim.faults.dropWatches();
      churn('during');
      await eventually(() => expect(reflector?.status().lastError?.code).to.equal('KUBE_STALLED'), 3000);
      churn('after');
      await converged(consumer);
      expect(reflector?.status().restarts).to.be.at.least(2);
      expect(reflector?.status().relists).to.equal(0);
    });

    it('relists after compaction answers the re-watch with 410, and objects deleted meanwhile disappear', async () => {
      for (let i = 0; i < 10; i++) sim.store.create('pods', pod('ml', `seed-${i}`));
      const consumer = start({ stallTimeoutMs: 300 });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      // Hold the next watch so the reflector is away while pods are deleted and history is compacted.
      sim.faults.hang({ watch: true, count: 1 });
      sim.faults.dropWatches();
      for (let i = 0; i < 5; i++) sim.store.delete('pods', { namespace: 'ml', name: `seed-${i}` });
      sim.store.create('pods', pod('ml', 'born-while-away'));
      sim.faults.expireVersions();
      await eventually(() => expect(consumer.count('SYNC')).to.equal(2), 3000);
      await converged(consumer);
      expect(consumer.objects.has('ml/seed-0')).to.equal(false);
      expect(consumer.objects.has('ml/born-while-away')).to.equal(true);
      expect(reflector?.status().relists).to.equal(1);
      churn('after');
      await converged(consumer);
    });

    it('redelivers an event the consumer threw on, after backoff, without losing later ones', async () => {
      sim.store.create('pods', pod('ml', 'seed'));
      let thrown = 0;
      const seen: string[] = [];
      const consumer = start({
        onEvent: (event) => {
          if (event.type === 'ADDED' && event.object.metadata.name === 'boom' && thrown++ === 0) throw new Error('Consumer is full');
          if (event.type !== 'SYNC' && event.type !== 'PAGE') seen.push(`${event.type} ${event.object.metadata.name}`);
          consumer.apply(event);
        },
      });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      sim.store.create('pods', pod('ml', 'boom'));
      sim.store.create('pods', pod('ml', 'next'));
      await converged(consumer);
      expect(seen).to.deep.equal(['ADDED boom', 'ADDED next']);
      expect(reflector?.status().lastError?.message).to.equal('Consumer is full');
    });

    it('stop() resolves promptly, also during backoff, and nothing is delivered afterwards', async () => {
      const consumer = start({ backoff: { baseMs: 5000, maxMs: 5000 } });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      sim.faults.failNext(500, { watch: true });
      sim.faults.dropWatches();
      // The dropped stream or the 500 that follows puts the reflector into its 5 s backoff.
      await eventually(() => expect(reflector?.status().lastError).to.not.equal(undefined));
      const started = Date.now();
      await reflector?.stop();
      expect(Date.now() - started).to.be.below(500);
      const delivered = consumer.events.length;
      churn('late');
      await sleep(150);
      expect(consumer.events).to.have.length(delivered);
      expect(reflector?.status().watchAgeMs).to.equal(undefined);
    });

    it('stop() resolves while a watch request hangs before any response', async () => {
      start({ stallTimeoutMs: 60_000 });
      await eventually(() => expect(reflector?.synced).to.equal(true));
      // Synced comes before the watch that follows the LIST reaches the server: a hang set before it
      // arrived would hold that first watch, and no second one would ever come.
      await eventually(() => expect(sim.faults.requestCount('/api/v1/pods', { watch: true })).to.equal(1));
      sim.faults.hang({ watch: true });
      sim.faults.dropWatches();
      await eventually(() => expect(sim.faults.requestCount('/api/v1/pods', { watch: true })).to.equal(2));
      const started = Date.now();
      await reflector?.stop();
      expect(Date.now() - started).to.be.below(500);
    });
  });
});
