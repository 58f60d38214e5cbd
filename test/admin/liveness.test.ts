// /livez as the kubelet sees it, on the real admin port of a service watching a simulated cluster:
// each check fails when its fault is injected (a held-up event loop, a sampler whose wait never ends,
// index writes that keep failing, an informer loop that crashed), answering 503 with the check named,
// and the service answers 200 again once the fault is gone. Time on the checks' own clock is moved
// by the test; the faults themselves are real.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { pino } from 'pino';
import sinon from 'sinon';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { loadConfig } from '../../src/config/load.js';
import { Reflector } from '../../src/k8s/reflector.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/start-service.js';
import { realDelay } from '../../src/runtime/periodic.js';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { clusterWriterPrototype, failIndexWrites, testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { FixedClock } from '../support/fixed-clock.js';
import { FAST_INFORMERS, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const SCRAPE_INTERVAL_MS = 2_000;
const CHECKS = ['event-loop', 'sampler', 'index-writer', 'informers'];

interface Livez {
  status: number;
  body: { status: string; checks: string[]; problems: { name: string; problem: string }[] };
}

/**
 * realDelay, except that the sampler's waits are held while `holding`, as a timer that never fires
 * would hold them. They are the scrape interval less the few ms a tick took to start; no other wait
 * of this service falls in that range (flushes 20 ms, readiness 250 ms, informer backoff at most
 * 200 ms, their watchdogs 3 s less the time since the last bookmark, sent every 200 ms).
 */
class SamplerGate {
  holding = false;
  held = 0;
  #release: (() => void)[] = [];
  readonly delay = (ms: number, signal: AbortSignal): Promise<void> => {
    if (!this.holding || ms <= SCRAPE_INTERVAL_MS - 50 || ms > SCRAPE_INTERVAL_MS) return realDelay(ms, signal);
    this.held += 1;
    return new Promise<void>((resolve) => {
      this.#release.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };
  open(): void {
    this.holding = false;
    for (const release of this.#release.splice(0)) release();
  }
}

describe('/livez', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let east: SimCluster;
  let service: RunningService | undefined;
  const checksClock = new FixedClock(0);

  before(async () => {
    temp = makeTempDir();
    east = await startSimCluster(temp.path, 'gpu-east');
    east.api.store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    writeFileSync(join(temp.path, 'tokens.json'), JSON.stringify({ tokens: [{ id: 'admin', sha256: hashApiToken(generateApiToken()), organization_id: 'acme', role: 'ORG_ADMIN', initiatives: [] }] }));
  });
  after(async () => {
    await east?.close();
    temp?.remove();
  });
  let index: TestIndexLocation | undefined;
  afterEach(async () => {
    sinon.restore();
    await service?.stop();
    service = undefined;
    await index?.remove();
    index = undefined;
  });

  let cases = 0;
  async function start(options: Partial<ServiceOptions> = {}): Promise<RunningService> {
    cases += 1;
    index = await testIndexLocation(join(temp.path, `case-${cases}`));
    const config = loadConfig({
      ...index.env,
      GPUCAP_LISTEN: '127.0.0.1:0',
      GPUCAP_ADMIN_LISTEN: '127.0.0.1:0',
      GPUCAP_API_TOKENS_FILE: join(temp.path, 'tokens.json'),
      GPUCAP_KUBECONFIG: east.kubeconfigPath,
      GPUCAP_CLUSTER_ID: 'gpu-east',
      GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
      // The simulated API server answers no TokenReview; /metrics is read without a token here.
      GPUCAP_ADMIN_AUTH: 'none',
      GPUCAP_READ_WORKERS: '0',
      GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      GPUCAP_SCRAPE_INTERVAL_SECONDS: String(SCRAPE_INTERVAL_MS / 1000),
      GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
      GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
      GPUCAP_SHUTDOWN_GRACE_SECONDS: '1',
    });
    service = await startService(config, { logger: pino({ level: 'silent' }), informers: FAST_INFORMERS, ...options, liveness: { now: () => checksClock.now(), ...options.liveness } });
    await waitFor(async () => (await fetch(`http://${service?.adminAddress}/readyz`)).status === 200, { what: 'the cluster synced', timeoutMs: 10_000 });
    return service;
  }

  async function livez(s: RunningService): Promise<Livez> {
    const response = await fetch(`http://${s.adminAddress}/livez`);
    return { status: response.status, body: (await response.json()) as Livez['body'] };
  }

  /** The problem /livez names for `check` while it answers 503. */
  async function failing(s: RunningService, check: string): Promise<string> {
    const answer = await livez(s);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
    expect(answer.body.status).to.equal('failing');
    expect(answer.body.problems.map((p) => p.name)).to.deep.equal([check]);
    return answer.body.problems[0]?.problem ?? '';
  }

  const healthy = async (s: RunningService, what: string) =>
    waitFor(async () => {
      const answer = await livez(s);
      return answer.status === 200 && answer.body.problems.length === 0 ? answer : undefined;
    }, { what, timeoutMs: 10_000 });

  it('answers 200 ok, naming the checks it ran, while the service works', async () => {
    const s = await start();
    const answer = await livez(s);
    expect(answer).to.deep.equal({ status: 200, body: { status: 'ok', checks: CHECKS, problems: [] } });
    checksClock.advance(10 * 60_000); // time alone fails nothing while every loop keeps going
    await sleep(SCRAPE_INTERVAL_MS + 200); // one sampler tick, a few hundred index flushes
    expect((await livez(s)).status).to.equal(200);
  });

  it('fails "event-loop" after the loop was held up past the limit, and recovers a window or two later', async () => {
    const s = await start({ liveness: { eventLoopWindowMs: 200, eventLoopLimitMs: 300 } });
    expect((await livez(s)).status).to.equal(200);
    const until = Date.now() + 500;
    while (Date.now() < until); // a synchronous stall of the whole process: no timer, no request runs
    const problem = await failing(s, 'event-loop');
    expect(problem).to.match(/^the event loop was held up for (\d+) ms in the last 0\.4 s \(limit 300 ms\)$/);
    expect(Number(/for (\d+) ms/.exec(problem)?.[1])).to.be.within(400, 2_000); // the stall less up to one timer period
    await healthy(s, '/livez 200 once the stall left the window');
  });

  it('fails "sampler" when its loop starts no tick for 3 scrape intervals, and recovers at its next tick', async () => {
    const gate = new SamplerGate();
    const s = await start({ delay: gate.delay });
    gate.holding = true;
    await waitFor(() => gate.held > 0, { what: 'the sampler waiting on a held timer', timeoutMs: 5_000 });
    expect((await livez(s)).status, 'held, but not for long yet').to.equal(200);
    checksClock.advance(3 * SCRAPE_INTERVAL_MS + 1_000);
    expect(await failing(s, 'sampler')).to.equal('no scrape tick for 7 s (limit 6 s: 3 scrape intervals)');
    gate.open();
    await healthy(s, '/livez 200 after the sampler ticked again');
  });

  it('fails "index-writer" while a cluster\'s changes wait and no write succeeds, and recovers once one does', async () => {
    const s = await start();
    const upsert = failIndexWrites(clusterWriterPrototype());
    const pod = east.api.store.create('pods', aGpuPod('llm', 'solo', { gpus: 1, node: 'h100-1' }));
    east.api.store.patchStatus('pods', pod.metadata, running(Date.now()));
    await waitFor(() => upsert.called, { what: 'a write of the new pod attempted', timeoutMs: 10_000 });
    expect((await livez(s)).status, 'failing, but not for long yet').to.equal(200);
    checksClock.advance(31_000);
    await sleep(SCRAPE_INTERVAL_MS + 200); // the sampler ticks meanwhile: only the writer stood still
    expect(await failing(s, 'index-writer')).to.match(/^cluster gpu-east: \d+ changes waiting, nothing written for 31 s \(limit 30 s\)$/);
    upsert.restore();
    await healthy(s, '/livez 200 once the pod was written');
    const metrics = parseMetrics(await (await fetch(`http://${s.adminAddress}/metrics`)).text());
    expect(sumOf(metrics, 'gpucap_index_workloads')).to.be.greaterThan(0);
  });

  it('fails "informers" once an informer loop crashed, and keeps failing: nothing but a restart revives it', async () => {
    const s = await start();
    const watch = sinon.stub(Reflector.prototype as unknown as { watch(signal: AbortSignal): Promise<unknown> }, 'watch');
    watch.callThrough();
    watch.onFirstCall().rejects(new Error('injected: a bug past the loop\'s own error handling'));
    expect(east.api.faults.dropWatches()).to.be.greaterThan(0); // every informer watches again: the first one crashes
    const problem = await waitFor(async () => {
      const answer = await livez(s);
      return answer.status === 503 ? answer.body.problems : undefined;
    }, { what: '/livez failing on the crashed informer', timeoutMs: 10_000 });
    expect(problem.map((p) => p.name)).to.deep.equal(['informers']);
    expect(problem[0]?.problem).to.match(/^cluster gpu-east, (namespaces|nodes|jobs|pods): the informer loop ended: injected: a bug past the loop's own error handling$/);
    await sleep(500);
    expect((await livez(s)).status, 'still failing: the informer is stale for good').to.equal(503);
    // What does end it without a restart: the cluster is no longer watched (its kubeconfig removed).
    await s.clusters.remove('gpu-east');
    expect((await livez(s)).status).to.equal(200);
  });
});
