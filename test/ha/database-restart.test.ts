// Fault test on real processes (issue 16 item 7): PostgreSQL restarts under two replicas while
// workloads come and go and clients read. While it is down, every request must get an answer within
// the client's timeout: a 200, or a 503 with Retry-After; never a hang, a socket error or a 500. Once
// it is back, a replica must write the cluster again, and the index must hold what happened meanwhile.
// Twice: a fast shutdown (sessions ended cleanly), then an immediate one (a crash; recovery at start).
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { EventDriver, duplicateKeys, prepareCluster, rollupMismatches, truthMismatches } from '../support/event-driver.js';
import { answerDifferences, comparedPaths, currentWriter, startHaRig, waitReady, type HaRig, type Replica } from '../support/replica-process.js';
import { startLoad } from '../support/load-generator.js';
import { waitFor } from '../support/wait-for.js';

const EVENTS_PER_SECOND = 40;
const REQUESTS_PER_SECOND = 30;
/** "Within a few seconds": a request still unanswered by then is a hang. */
const CLIENT_TIMEOUT_MS = 5_000;
const DOWN_MS = 5_000;
const WRITER_BACK_LIMIT_MS = 15_000;

describe('ha: PostgreSQL restarts mid-stream', function () {
  this.timeout(240_000);
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

  it('answers 200 or 503 with Retry-After while it is down, writes again once it is up, and loses no event', async () => {
    if (rig === undefined) throw new Error('No rig');
    const { clusterId, sim, sql, postgres } = rig;
    const windowFrom = Date.now() - 60_000;
    const replicas = await Promise.all([rig.start('replica-a'), rig.start('replica-b')]);
    await Promise.all(replicas.map((r) => waitReady(r)));
    const driver = new EventDriver({ store: sim.api.store, eventsPerSecond: EVENTS_PER_SECOND, seed: 2 });
    driver.start();
    await sleep(4_000);

    // Reads of every kind, to both replicas in turn; gets of workloads already in the index.
    const known = driver.truth().map((w) => w.workloadId);
    const kinds = ['/v1/workloads?limit=20', '/v1/workloads/stats', 'get', '/v1/workloads?limit=20&status=running', '/v1/workloads/stats?group_by=initiative_id'];
    const targets = Array.from({ length: 1_000 }, (_, n) => {
      const kind = kinds[n % kinds.length] ?? '';
      return { baseUrl: (replicas[n % replicas.length] as Replica).url, path: kind === 'get' ? `/v1/workloads/${known[n % known.length] ?? ''}` : kind };
    });
    const load = startLoad({ rate: REQUESTS_PER_SECOND, targets, caller: rig.admin, timeoutMs: CLIENT_TIMEOUT_MS, accept: '200-or-503-retry-after' });
    await sleep(3_000);

    for (const mode of ['fast', 'immediate'] as const) {
      const before = await waitFor(() => currentWriter(replicas, clusterId), { what: 'one writer of the cluster', timeoutMs: 15_000 });
      await postgres.stopServer(mode);
      await sleep(DOWN_MS);
      await postgres.startServer();
      const upAt = performance.now();
      const after = await waitFor(
        async () => {
          const writer = await currentWriter(replicas, clusterId);
          const lease = (await sql('SELECT epoch FROM writer_leases WHERE cluster_id = $1', [clusterId]).catch(() => ({ rows: [] }))).rows[0];
          return writer !== undefined && writer.epoch > before.epoch && lease?.epoch === writer.epoch ? writer : undefined;
        },
        { what: `a writer again after the ${mode} restart`, timeoutMs: 30_000, intervalMs: 100 },
      );
      const backMs = performance.now() - upAt;
      console.log(`      ${mode} restart: ${after.replica.instanceId} writes again ${(backMs / 1000).toFixed(2)} s after the server is up (epoch ${before.epoch} → ${after.epoch})`);
      expect(backMs, `${mode}: a writer back within ${WRITER_BACK_LIMIT_MS} ms`).to.be.at.most(WRITER_BACK_LIMIT_MS);
      await sleep(4_000);
    }

    const report = await load.stop();
    await driver.drain();
    console.log(`      events: ${driver.sent} at ${driver.rate().toFixed(1)}/s, ${driver.truth().length} workloads`);
    console.log(`      requests: ${report.sent} at ${report.rate.toFixed(1)}/s, by status ${JSON.stringify(report.byStatus)}, 503 with Retry-After ${report.retryAfter503}, latency p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, max ${report.latencyMs.max} ms`);
    expect(report.failureKinds, JSON.stringify(report.failures.slice(0, 5), null, 1)).to.deep.equal({});
    expect(report.retryAfter503, 'the outages were seen: 503s with Retry-After').to.be.above(0);
    expect(report.byStatus['200'] ?? 0).to.be.above(0);

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
    const paths = await comparedPaths(replicas[0] as Replica, rig.admin, { from: windowFrom, to: Date.now() + 3_600_000, workloadIds: truth.slice(-3).map((w) => w.workloadId) });
    const differences = await answerDifferences(replicas, paths, rig.admin);
    expect(differences, differences.join('\n')).to.deep.equal([]);
  });
});
