// Fault test on real processes (issue 16 item 7): two replicas on one PostgreSQL follow one simulated
// cluster while workloads come and go; the writer is killed with SIGKILL. Another replica must take
// the cluster over within 20 s, and the index must end up holding exactly what the cluster did:
// every workload, its status, times and GPU time, nothing lost, nothing twice, rollups that match the
// rows, and the same answers from every replica.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { aGpuPod, finished, running } from '../support/sim-cluster.js';
import { EventDriver, duplicateKeys, prepareCluster, rollupMismatches, truthMismatches } from '../support/event-driver.js';
import { answerDifferences, comparedPaths, currentWriter, startHaRig, waitReady, type HaRig } from '../support/replica-process.js';
import { waitFor } from '../support/wait-for.js';

const EVENTS_PER_SECOND = 40;
const TAKEOVER_LIMIT_MS = 20_000;

describe('ha: SIGKILL of the writer replica while events flow', function () {
  this.timeout(180_000);
  let rig: HaRig | undefined;

  before(async function () {
    rig = await startHaRig(this, { prepare: (sim) => prepareCluster(sim.api.store) });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && rig !== undefined) console.log(rig.logTails());
  });

  after(async () => {
    await rig?.close();
  });

  it('hands the cluster to the other replica within 20 s, and the index converges to the cluster\'s truth', async () => {
    if (rig === undefined) throw new Error('No rig');
    const { clusterId, sim, sql } = rig;
    const windowFrom = Date.now() - 60_000;
    const [a, b] = await Promise.all([rig.start('replica-a'), rig.start('replica-b')]);
    if (a === undefined || b === undefined) throw new Error('No replicas');
    await Promise.all([waitReady(a), waitReady(b)]);

    const driver = new EventDriver({ store: sim.api.store, eventsPerSecond: EVENTS_PER_SECOND, seed: 1 });
    driver.start();
    await sleep(6_000);
    const before = await waitFor(() => currentWriter([a, b], clusterId), { what: 'one writer of the cluster', timeoutMs: 10_000 });
    const killedAt = performance.now();
    before.replica.signal('SIGKILL');
    const survivor = before.replica === a ? b : a;
    const after = await waitFor(
      async () => {
        const status = await survivor.role(clusterId);
        return status?.role === 'writer' && (status.epoch ?? 0) > before.epoch ? status : undefined;
      },
      { what: `${survivor.instanceId} to take the cluster over`, timeoutMs: 30_000, intervalMs: 50 },
    );
    const takeoverMs = performance.now() - killedAt;
    const lease = (await sql('SELECT holder, epoch FROM writer_leases WHERE cluster_id = $1', [clusterId])).rows[0];
    console.log(`      takeover after SIGKILL: ${(takeoverMs / 1000).toFixed(2)} s (epoch ${before.epoch} → ${after.epoch})`);
    expect(takeoverMs).to.be.at.most(TAKEOVER_LIMIT_MS);
    expect(lease).to.deep.equal({ holder: survivor.instanceId, epoch: before.epoch + 1 });

    // Events keep coming for a while under the new writer; the killed pod comes back (as the kubelet
    // restarts it) and stands by.
    const restarted = await rig.start(before.replica.instanceId);
    await sleep(6_000);
    await driver.drain();
    console.log(`      events: ${driver.sent} at ${driver.rate().toFixed(1)}/s, ${driver.truth().length} workloads`);
    await waitReady(restarted);

    const truth = driver.truth();
    await waitFor(
      async () => {
        const problems = await truthMismatches(sql, clusterId, truth);
        if (problems.length > 0) throw new Error(`${problems.length} differences:\n${problems.slice(0, 15).join('\n')}`);
        return true;
      },
      { what: 'the index to hold the cluster\'s truth', timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(await duplicateKeys(sql)).to.deep.equal([]);
    expect(await rollupMismatches(sql)).to.deep.equal([]);
    expect((await restarted.role(clusterId))?.role).to.equal('standby');
    const paths = await comparedPaths(survivor, rig.admin, { from: windowFrom, to: Date.now() + 3_600_000, workloadIds: truth.slice(0, 3).map((w) => w.workloadId) });
    const differences = await answerDifferences([survivor, restarted], paths, rig.admin);
    expect(differences, differences.join("\n")).to.deep.equal([]);
  });

  // A standby keeps its caches warm and remembers, for a while, the last state of what was deleted
  // while it stood by: an object that finished and went between the old writer's last flush and the
  // takeover must get its finish, not a cancellation at the takeover time, nor go missing.
  it('keeps the finish of a workload that finished and was deleted while no replica wrote the cluster', async () => {
    if (rig === undefined) throw new Error('No rig');
    const { clusterId, sim, sql } = rig;
    const store = sim.api.store;
    const replicas = rig.running();
    const writer = await waitFor(() => currentWriter(replicas, clusterId), { what: 'one writer of the cluster', timeoutMs: 10_000 });
    const startedAt = Date.now() - 60_000;
    const ranBefore = store.create('pods', aGpuPod('llm-train', 'ran-before', { gpus: 2, node: 'h100-1' }));
    store.patchStatus('pods', ranBefore.metadata, running(startedAt));
    await waitFor(async () => (await sql("SELECT 1 FROM workloads WHERE workload_id = $1 AND status = 'running'", [ranBefore.metadata.uid])).rows.length === 1, {
      what: 'the running pod in the index', timeoutMs: 10_000,
    });
    writer.replica.signal('SIGKILL');
    // While nobody writes: one pod finishes and goes, another comes, runs, finishes and goes.
    store.patchStatus('pods', ranBefore.metadata, finished(startedAt, startedAt + 30_000, 0));
    store.delete('pods', ranBefore.metadata);
    const whole = store.create('pods', aGpuPod('llm-train', 'whole-life', { gpus: 1, node: 'h100-1' }));
    store.patchStatus('pods', whole.metadata, finished(startedAt, startedAt + 10_000, 0));
    store.delete('pods', whole.metadata);
    const others = replicas.filter((r) => r !== writer.replica);
    await waitFor(() => currentWriter(others, clusterId), { what: 'a new writer', timeoutMs: 30_000 });
    await waitFor(
      async () => {
        const { rows } = await sql('SELECT workload_id, status, completed_at FROM workloads WHERE workload_id = ANY($1) ORDER BY completed_at', [[ranBefore.metadata.uid, whole.metadata.uid]]);
        expect(rows, JSON.stringify(rows)).to.deep.equal([
          { workload_id: whole.metadata.uid, status: 'completed', completed_at: startedAt + 10_000 },
          { workload_id: ranBefore.metadata.uid, status: 'completed', completed_at: startedAt + 30_000 },
        ]);
        return true;
      },
      { what: 'both pods completed in the index', timeoutMs: 15_000 },
    );
  });
});
