// Fault test on real processes (issue 16 item 7): the writer replica is cut off from PostgreSQL while
// events flow. Each replica reaches the server through its own TCP proxy; the writer's proxy turns
// into a black hole (nothing passes, both sockets stay open, so neither side's TCP notices). Another
// replica must take the cluster over within 20 s: it ends the session of the writer whose heartbeat
// went stale, which frees the lock. An audit trigger installed by this test (not by the product)
// records which session wrote each row: the old writer must write nothing after the new epoch was
// acquired. Healed, the old writer stands by, and the index holds the cluster's truth.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { EventDriver, duplicateKeys, prepareCluster, rollupMismatches, truthMismatches } from '../support/event-driver.js';
import { answerDifferences, comparedPaths, currentWriter, startHaRig, waitReady, type HaRig, type Replica, type WriterStatus } from '../support/replica-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const EVENTS_PER_SECOND = 40;
const TAKEOVER_LIMIT_MS = 20_000;

// Every row written to workloads or workload_pods, with the session that wrote it and when.
const AUDIT = `
  CREATE TABLE write_audit (at timestamptz NOT NULL, application_name text NOT NULL, table_name text NOT NULL, row_id text NOT NULL);
  CREATE FUNCTION audit_workload() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO write_audit VALUES (clock_timestamp(), current_setting('application_name'), 'workloads', NEW.workload_id);
    RETURN NULL;
  END $$;
  CREATE FUNCTION audit_pod() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO write_audit VALUES (clock_timestamp(), current_setting('application_name'), 'workload_pods', NEW.pod_uid);
    RETURN NULL;
  END $$;
  CREATE TRIGGER audit_workloads AFTER INSERT OR UPDATE ON workloads FOR EACH ROW EXECUTE FUNCTION audit_workload();
  CREATE TRIGGER audit_pods AFTER INSERT OR UPDATE ON workload_pods FOR EACH ROW EXECUTE FUNCTION audit_pod();`;

describe('ha: the writer replica partitioned from PostgreSQL', function () {
  this.timeout(240_000);
  let rig: HaRig | undefined;
  const proxies = new Map<string, TcpProxy>();

  before(async function () {
    rig = await startHaRig(this, { prepare: (sim) => prepareCluster(sim.api.store) });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && rig !== undefined) console.log(rig.logTails());
  });

  after(async () => {
    await rig?.close();
    await Promise.all([...proxies.values()].map((proxy) => proxy.close()));
  });

  it('is replaced within 20 s, writes nothing once replaced, and stands by when healed', async () => {
    if (rig === undefined) throw new Error('No rig');
    const { clusterId, sim, sql, postgres } = rig;
    const windowFrom = Date.now() - 60_000;
    const target = new URL(postgres.url);
    const start = async (instanceId: string) => {
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
      proxies.set(instanceId, proxy);
      return (rig as HaRig).start(instanceId, { dbUrl: proxy.urlThrough(postgres.url) });
    };
    const a = await start('replica-a');
    // The schema exists once a replica started: the audit goes on before any workload is written.
    await sql(AUDIT);
    const b = await start('replica-b');
    const replicas: Replica[] = [a, b];
    await Promise.all(replicas.map((r) => waitReady(r)));

    const driver = new EventDriver({ store: sim.api.store, eventsPerSecond: EVENTS_PER_SECOND, seed: 3 });
    driver.start();
    await sleep(6_000);
    const before = await waitFor(() => currentWriter(replicas, clusterId), { what: 'one writer of the cluster', timeoutMs: 10_000 });
    const old = before.replica;
    const survivor = old === a ? b : a;
    const cutAt = performance.now();
    proxies.get(old.instanceId)?.setMode('blackhole');
    // Both replicas' claims, every 50 ms: when the old one stops calling itself the writer, and when
    // the other one starts.
    const since = (at: number | null) => (at === null ? null : at - cutAt);
    let gaveUpAt: number | null = null;
    let tookOverAt: number | null = null;
    let oldStatus: WriterStatus | undefined;
    let newEpoch = 0;
    await waitFor(
      async () => {
        const [was, is] = await Promise.all([old.role(clusterId), survivor.role(clusterId)]);
        if (gaveUpAt === null && was !== undefined && was.role !== 'writer') [gaveUpAt, oldStatus] = [performance.now(), was];
        if (tookOverAt === null && is?.role === 'writer' && (is.epoch ?? 0) > before.epoch) [tookOverAt, newEpoch] = [performance.now(), is.epoch ?? 0];
        return gaveUpAt !== null && tookOverAt !== null;
      },
      { what: `${old.instanceId} to stop writing and ${survivor.instanceId} to take the cluster over`, timeoutMs: 40_000, intervalMs: 50 },
    );
    const takeoverMs = since(tookOverAt) ?? Infinity;
    const gaveUpMs = since(gaveUpAt) ?? Infinity;
    console.log(`      takeover after the partition: ${(takeoverMs / 1000).toFixed(2)} s (epoch ${before.epoch} → ${newEpoch}); ` +
      `${old.instanceId} stopped calling itself the writer after ${(gaveUpMs / 1000).toFixed(2)} s: ${oldStatus?.role} (${oldStatus?.lastError ?? ''})`);
    expect(takeoverMs).to.be.at.most(TAKEOVER_LIMIT_MS);
    // It gives up when its lease runs out, before a standby may end its session: never two writers.
    expect(gaveUpMs, 'the old writer stops claiming the cluster no later than the new one takes it').to.be.at.most(takeoverMs + 500);
    const after = { epoch: newEpoch };

    // Events go on under the new writer, then the partition heals.
    await sleep(5_000);
    proxies.get(old.instanceId)?.setMode('pass');
    const healed = await waitFor(
      async () => {
        const status = await old.role(clusterId);
        return status?.role === 'standby' && status.holder?.holder === survivor.instanceId ? status : undefined;
      },
      { what: `${old.instanceId} to stand by once healed`, timeoutMs: 30_000 },
    );
    expect(healed.holder?.epoch).to.equal(after.epoch);
    await sleep(3_000);
    await driver.drain();
    console.log(`      events: ${driver.sent} at ${driver.rate().toFixed(1)}/s, ${driver.truth().length} workloads`);

    const truth = driver.truth();
    await waitFor(
      async () => {
        const problems = await truthMismatches(sql, clusterId, truth);
        if (problems.length > 0) throw new Error(`${problems.length} differences:\n${problems.slice(0, 15).join('\n')}`);
        return true;
      },
      { what: 'the index to hold the cluster\'s truth', timeoutMs: 60_000, intervalMs: 500 },
    );
    const lease = (await sql('SELECT holder, epoch, acquired_at FROM writer_leases WHERE cluster_id = $1', [clusterId])).rows[0];
    expect(lease).to.deep.include({ holder: survivor.instanceId, epoch: after.epoch });
    const sessions = (await sql(
      `SELECT application_name, count(*)::int AS rows, max(at) > $1 AS after_takeover FROM write_audit GROUP BY application_name ORDER BY application_name`,
      [lease?.acquired_at],
    )).rows;
    console.log(`      rows written by session: ${JSON.stringify(sessions)}`);
    const oldSession = `gpucap:${old.instanceId}:writer:${clusterId}`;
    const late = (await sql('SELECT at, table_name, row_id FROM write_audit WHERE application_name = $1 AND at >= $2 ORDER BY at LIMIT 10', [oldSession, lease?.acquired_at])).rows;
    expect(late, `rows ${oldSession} wrote after the takeover`).to.deep.equal([]);
    expect(sessions.map((s) => s.application_name)).to.include.members([oldSession, `gpucap:${survivor.instanceId}:writer:${clusterId}`]);
    expect(await duplicateKeys(sql)).to.deep.equal([]);
    expect(await rollupMismatches(sql)).to.deep.equal([]);
    const paths = await comparedPaths(survivor, rig.admin, { from: windowFrom, to: Date.now() + 3_600_000, workloadIds: truth.slice(0, 3).map((w) => w.workloadId) });
    const differences = await answerDifferences(replicas, paths, rig.admin);
    expect(differences, differences.join('\n')).to.deep.equal([]);
  });
});
