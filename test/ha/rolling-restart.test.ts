// Fault test on real processes (issue 16 item 7): a rolling restart of 3 replicas under a constant
// 200 requests/s, the way a Deployment with maxSurge 1 and maxUnavailable 0 replaces its pods: start a
// new replica, wait until it is ready, SIGTERM an old one, wait for its exit; three times. Requests go
// through a round-robin balancer that, like kube-proxy, sends only to ready replicas (a readiness poll
// every 250 ms; out after 2 failed polls in a row, as the chart's probe) and never retries. Replicas
// keep serving for 2 s after SIGTERM (well beyond two polls, also on a busy machine) with /readyz
// failing, then drain. Not one request may fail: no non-2xx answer, no socket error, no timeout (15 s,
// so that a machine busy with other work slows the answers without failing them). The load generator
// and the balancer each run in a process of their own, so that only the replicas are in the requests'
// path: not the test's process, which also serves the simulated API and drives the events. A failure
// says where each failed request waited, and which process's event loop stood still, and when.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { EventDriver, prepareCluster } from '../support/event-driver.js';
import { describeStalls, watchEventLoop, type EventLoopReport } from '../support/event-loop-watch.js';
import { startLoadProcess, type LoadFailure } from '../support/load-generator.js';
import { currentWriter, startHaRig, waitReady, type HaRig, type Replica } from '../support/replica-process.js';
import { startRoundRobinLb, type RequestTrace, type RoundRobinLb } from '../support/round-robin-lb.js';
import { waitFor } from '../support/wait-for.js';

const REQUESTS_PER_SECOND = 200;
const EVENTS_PER_SECOND = 20;
const CLIENT_TIMEOUT_MS = 15_000;
const SLOW_MS = 5_000;
const REPLICA_ENV = {
  GPUCAP_SHUTDOWN_DELAY_SECONDS: '2',
  GPUCAP_SHUTDOWN_GRACE_SECONDS: '10',
  // One line per request at info would cost the replicas more than the requests themselves.
  GPUCAP_LOG_LEVEL: 'warn',
};

/** utime, stime (and with `children`, the reaped children's) of /proc/<pid>/stat, in seconds. */
function cpuOf(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return ((fields[11] ?? 0) + (fields[12] ?? 0) + (children ? (fields[13] ?? 0) + (fields[14] ?? 0) : 0)) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds PostgreSQL used so far: the postmaster, its live children, and the ones it reaped. */
function postgresCpu(postmaster: number): number {
  let total = cpuOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) total += cpuOf(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/** Busy and total jiffies of the whole machine (/proc/stat), to tell a starved test from a slow service. */
function machineCpu(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

describe('ha: rolling restart of 3 replicas under 200 requests/s', function () {
  this.timeout(240_000);
  let rig: HaRig | undefined;
  let lb: RoundRobinLb | undefined;

  before(async function () {
    rig = await startHaRig(this, { prepare: (sim) => prepareCluster(sim.api.store) });
    lb = await startRoundRobinLb({ pollMs: 250, slowMs: SLOW_MS });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && rig !== undefined) console.log(rig.logTails());
  });

  after(async () => {
    await lb?.close();
    await rig?.close();
  });

  it('replaces every replica one at a time without failing a single request', async () => {
    if (rig === undefined || lb === undefined) throw new Error('No rig');
    const balancer = lb;
    const { clusterId, sim } = rig;
    let serial = 0;
    const names = new Map<string, string>();
    const start = async () => {
      const replica = await (rig as HaRig).start(`replica-${++serial}`, { env: REPLICA_ENV });
      names.set(replica.url, replica.instanceId);
      await balancer.add(replica);
      await waitReady(replica);
      // In rotation once the balancer's own poll saw it ready.
      await waitFor(async () => (await balancer.ready()).some((b) => b.url === replica.url), { what: `${replica.instanceId} in rotation`, timeoutMs: 5_000, intervalMs: 50 });
      return replica;
    };
    let replicas: Replica[] = await Promise.all([start(), start(), start()]);

    const driver = new EventDriver({ store: sim.api.store, eventsPerSecond: EVENTS_PER_SECOND, seed: 4 });
    driver.start();
    await sleep(3_000);
    const known = driver.truth().map((w) => w.workloadId);
    // Lists, gets, statistics, capacity and health, as a dashboard's mix.
    const kinds = ['/v1/workloads?limit=20', 'get', '/v1/workloads/stats', 'get', '/v1/capacity', '/v1/workloads?limit=20&status=running', 'get', '/v1/health'];
    const targets = Array.from({ length: 1_000 }, (_, n) => {
      const kind = kinds[n % kinds.length] ?? '';
      return { baseUrl: balancer.url, path: kind === 'get' ? `/v1/workloads/${known[n % known.length] ?? ''}` : kind };
    });
    const testLoop = watchEventLoop();
    // The postmaster: the parent of any backend.
    const backend = ((await rig.sql('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
    const postmaster = Number(readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    const postgresBefore = postgresCpu(postmaster);
    const cpuBefore = process.cpuUsage();
    const machineBefore = machineCpu();
    const wallBefore = performance.now();
    const replicaCpu = new Map<string, number>();
    const load = await startLoadProcess({ rate: REQUESTS_PER_SECOND, targets, caller: rig.admin, timeoutMs: CLIENT_TIMEOUT_MS, accept: '2xx' });
    await sleep(5_000);

    const handovers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const old = replicas[0] as Replica;
      const surge = await start();
      const writer = await currentWriter(replicas, clusterId);
      const stoppedAt = performance.now();
      const cpu = old.cpuSeconds();
      old.signal('SIGTERM');
      const exit = await old.exited;
      const exitMs = performance.now() - stoppedAt;
      replicaCpu.set(old.instanceId, cpu ?? 0);
      await balancer.remove(old);
      replicas = [...replicas.slice(1), surge];
      let handover = `${new Date(Date.now() - exitMs).toISOString()} SIGTERM: ${old.instanceId} exited ${(exitMs / 1000).toFixed(2)} s after SIGTERM (code ${exit.code})`;
      if (writer?.replica === old) {
        const next = await waitFor(
          async () => {
            const found = await currentWriter(replicas, clusterId);
            return found !== undefined && found.epoch > writer.epoch ? found : undefined;
          },
          { what: 'a new writer', timeoutMs: 20_000, intervalMs: 50 },
        );
        handover += `; it wrote the cluster: ${next.replica.instanceId} took over ${((performance.now() - stoppedAt) / 1000).toFixed(2)} s after SIGTERM (epoch ${writer.epoch} → ${next.epoch})`;
      }
      handovers.push(`${handover}; failed requests so far: ${load.failed()}`);
      expect(exit.code, `${old.instanceId} exit code`).to.equal(0);
    }
    await sleep(5_000);

    const report = await load.stop();
    const wallSeconds = (performance.now() - wallBefore) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const machineAfter = machineCpu();
    const postgresSeconds = postgresCpu(postmaster) - postgresBefore;
    const machineBusy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
    const loops: Record<string, EventLoopReport> = { test: testLoop.stop(), balancer: await balancer.eventLoop(), load: report.eventLoop };
    driver.stop();
    const counts = await balancer.counts();
    for (const replica of replicas) replicaCpu.set(replica.instanceId, replica.cpuSeconds() ?? 0);
    const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const delays = Object.entries(loops).map(([name, loop]) => `${name} p99 ${loop.delayP99Ms} ms, max ${loop.delayMaxMs} ms`).join('; ');
    for (const line of handovers) console.log(`      ${line}`);
    console.log(`      requests: ${report.sent} at ${report.rate.toFixed(1)}/s over ${wallSeconds.toFixed(1)} s, by status ${JSON.stringify(report.byStatus)}, ` +
      `latency p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, max ${report.latencyMs.max} ms; by replica ${JSON.stringify(counts.byBackend)}`);
    console.log(`      load process: ${report.cpuPercent} % of a core; test process (simulated API, events): ${(((cpu.user + cpu.system) / 1e6 / wallSeconds) * 100).toFixed(0)} % of a core; ` +
      `event loop delay: ${delays}; PostgreSQL: ${((postgresSeconds / wallSeconds) * 100).toFixed(0)} % of a core; ` +
      `replicas' CPU seconds over their lives: ${JSON.stringify(Object.fromEntries(replicaCpu))}; the machine: ${(machineBusy * 100).toFixed(0)} % busy of ${cpus().length} cores, ` +
      `load average ${loadAverage}; events ${driver.sent} at ${driver.rate().toFixed(1)}/s`);
    // Enough to tell where a failed request waited, within the lines CI repeats after its summary.
    const named = (text: string) => text.replace(/http:\/\/127\.0\.0\.1:\d+/g, (url) => names.get(url) ?? url);
    const failures = report.failures.slice(0, 8);
    const traces = await balancer.traces(failures.map((f) => f.sequence));
    const diagnosis = [
      ...handovers,
      ...failures.map((f) => `failed: ${describeFailure(f)}; ${named(describeTrace(f, traces[f.sequence]))}`),
      `answers of ${SLOW_MS} ms or more, by replica: ${named(JSON.stringify(await balancer.slow()))}`,
      `balancer errors: ${named(counts.errors.join('; ')) || 'none'}`,
      `event-loop stalls of 0.5 s or more: ${Object.entries(loops).map(([name, loop]) => `${name}: ${describeStalls(loop)}`).join('; ')}`,
      `the machine: ${(machineBusy * 100).toFixed(0)} % busy of ${cpus().length} cores, load average ${loadAverage}`,
    ].join('\n');
    expect(report.failureKinds, diagnosis).to.deep.equal({});
    expect(report.rate, 'the load kept its rate').to.be.at.least(REQUESTS_PER_SECOND * 0.95);
    expect(counts.noBackend).to.equal(0);
  });
});

function describeFailure(failure: LoadFailure): string {
  const what = failure.error ?? failure.body.slice(0, 80);
  return `#${failure.sequence} sent ${new Date(failure.sentAt).toISOString()} ${failure.path} → ${failure.status} ${what} after ${failure.ms} ms`;
}

/** Where the balancer saw the request: never, or when, to which replica, and how it ended. */
function describeTrace(failure: LoadFailure, trace: RequestTrace | undefined): string {
  if (trace === undefined) return 'it never reached the balancer';
  const reached = `it reached the balancer ${Date.parse(trace.arrivedAt) - failure.sentAt} ms after it was sent, for ${trace.backend ?? 'no ready backend'}`;
  if (trace.end === undefined) return `${reached}, and had no answer when the test ended`;
  if (trace.end.clientGone) return `${reached}; the client gave up ${trace.end.ms} ms later${trace.end.status === null ? ', before any answer' : ` mid-answer (status ${trace.end.status})`}`;
  return `${reached}, answered ${trace.end.status} in ${trace.end.ms} ms`;
}
