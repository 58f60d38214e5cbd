// The admin port as the kubelet and Prometheus see it: /livez, /readyz, /metrics. The harness runs
// it with admin_auth none (open /metrics, said at start); admin_auth kubernetes is tested against a
// real API server in test/e2e/admin-auth-envtest.test.ts, and here for failing closed.
import { expect } from 'chai';
import { createLogger } from '../../src/runtime/logger.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const WORKLOAD_ID = 'ad000000-0000-4000-8000-000000000001';

async function admin(t: TestService, path: string) {
  const response = await fetch(t.adminUrl + path);
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

/** The sample lines of one metric family whose labels include every `label="value"` given. */
function samples(text: string, name: string, labels: Record<string, string>): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`)));
}

describe('admin port', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
    const workloads = [aWorkload({ workloadId: WORKLOAD_ID }), aWorkload(), aWorkload({ organizationId: 'globex' })];
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(() => t.stop());

  it('/livez answers 200 ok, naming the checks it ran (test/admin/liveness.test.ts fails each)', async () => {
    const res = await admin(t, '/livez');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.text)).to.deep.equal({ status: 'ok', checks: ['event-loop', 'sampler', 'index-writer', 'informers'], problems: [] });
  });

  it('/readyz answers 200 with its conditions once start-up is done and the index is open', async () => {
    const res = await admin(t, '/readyz');
    expect(res.status).to.equal(200);
    const body = JSON.parse(res.text);
    expect(body).to.deep.include({ ready: true, degraded: false, shuttingDown: false, conditions: { startup: { ready: true, failure: null, waived: false }, index: { ready: true, failure: null, waived: false }, telemetry: { ready: true, failure: null, waived: false } } });
    expect(body.components).to.be.an('object');
    expect(body.components.adminAuth).to.deep.equal({ mode: 'none' });
  });

  it('/readyz answers 503 naming the condition that is not ready, and 200 again once it is', async () => {
    t.service.readiness.require('informer:pods');
    try {
      const waiting = await admin(t, '/readyz');
      expect(waiting.status).to.equal(503);
      expect(JSON.parse(waiting.text)).to.deep.include({ ready: false, conditions: { startup: { ready: true, failure: null, waived: false }, index: { ready: true, failure: null, waived: false }, telemetry: { ready: true, failure: null, waived: false }, 'informer:pods': { ready: false, failure: null, waived: false } } });
      t.service.readiness.markReady('informer:pods');
      expect((await admin(t, '/readyz')).status).to.equal(200);
    } finally {
      t.service.readiness.forget('informer:pods');
    }
  });

  it('/metrics is Prometheus text with the index size as gpucap_index_workloads', async () => {
    const res = await admin(t, '/metrics');
    expect(res.status).to.equal(200);
    expect(res.contentType).to.match(/^text\/plain; version=0\.0\.4/);
    expect(res.text).to.contain('# TYPE gpucap_index_workloads gauge');
    const lines = samples(res.text, 'gpucap_index_workloads', {});
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/ 3$/);
  });

  it('/metrics counts API requests by route template, method and status, never by raw path', async () => {
    expect((await t.get(`/v1/workloads/${WORKLOAD_ID}`)).status).to.equal(200);
    expect((await t.get(`/v1/workloads/${WORKLOAD_ID}`)).status).to.equal(200);
    expect((await t.get('/v1/workloads/ad000000-0000-4000-8000-00000000ffff')).status).to.equal(404);
    expect((await t.get('/v1/no-such-endpoint/abc')).status).to.equal(404);

    const res = await admin(t, '/metrics');
    expect(res.text).to.contain('# TYPE gpucap_http_request_duration_seconds histogram');
    const ok = samples(res.text, 'gpucap_http_request_duration_seconds_count', { route: '/v1/workloads/{workload_id}', method: 'GET', status: '200' });
    expect(ok).to.have.length(1);
    expect(ok[0]).to.match(/ 2$/);
    const notFound = samples(res.text, 'gpucap_http_request_duration_seconds_count', { route: '/v1/workloads/{workload_id}', status: '404' });
    expect(notFound).to.have.length(1);
    expect(notFound[0]).to.match(/ 1$/);
    // Unmatched paths share one label value, so a scanner cannot blow up the series count.
    expect(samples(res.text, 'gpucap_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).to.have.length(1);
    expect(res.text).to.not.contain(WORKLOAD_ID);
    expect(res.text).to.not.contain('no-such-endpoint');
  });

  it('/metrics labels a route without parameters with its path, and counts error statuses apart', async () => {
    expect((await t.get('/v1/workloads/stats', { as: null })).status).to.equal(401);
    expect((await t.get('/v1/health', { as: null })).status).to.equal(200);
    const res = await admin(t, '/metrics');
    expect(samples(res.text, 'gpucap_http_request_duration_seconds_count', { route: '/v1/workloads/stats', status: '401' })).to.have.length(1);
    expect(samples(res.text, 'gpucap_http_request_duration_seconds_count', { route: '/v1/health', status: '200' })).to.have.length(1);
  });

  it('the admin port does not serve the API, and the API port does not serve the admin endpoints', async () => {
    expect((await admin(t, '/v1/health')).status).to.equal(404);
    expect((await fetch(`${t.url}/metrics`)).status).to.equal(404);
    expect((await fetch(`${t.url}/readyz`)).status).to.equal(404);
  });
});

describe('admin port: what admin_auth none says at start', () => {
  async function startLogged(adminListen: string): Promise<{ t: TestService; lines: { level: string; msg: string }[] }> {
    const written: string[] = [];
    const t = await startTestService({
      env: { GPUCAP_ADMIN_LISTEN: adminListen },
      logger: createLogger({ level: 'info', version: 'test' }, { write: (line: string) => void written.push(line) }),
    });
    const lines = written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { level: string; msg: string });
    return { t, lines: lines.filter((line) => line.msg.startsWith('admin_auth is none')) };
  }

  it('warns that anyone who reaches the admin port reads every team\'s usage when it listens beyond loopback', async () => {
    const { t, lines } = await startLogged('0.0.0.0:0');
    try {
      expect(lines.map((line) => line.level)).to.deep.equal(['warn']);
      expect(lines[0]?.msg).to.include('anyone who reaches the admin port').and.include('every organization\'s and team\'s usage').and.include('GPUCAP_ADMIN_AUTH=kubernetes');
      expect((await fetch(`http://127.0.0.1:${t.adminUrl.split(':').at(-1)}/metrics`)).status, '/metrics open').to.equal(200);
    } finally {
      await t.stop();
    }
  });

  it('says it at info when the admin port listens on loopback only (a laptop, the demo)', async () => {
    const { t, lines } = await startLogged('127.0.0.1:0');
    try {
      expect(lines.map((line) => line.level)).to.deep.equal(['info']);
    } finally {
      await t.stop();
    }
  });
});

describe('admin port with admin_auth kubernetes, against an API server that answers no TokenReview', () => {
  const temp = makeTempDir();
  let sim: SimCluster;
  let t: TestService;
  before(async () => {
    sim = await startSimCluster(temp.path, 'gpu-east');
    t = await startTestService({ env: { GPUCAP_ADMIN_AUTH: 'kubernetes', GPUCAP_KUBECONFIG: sim.kubeconfigPath } });
  });
  after(async () => {
    await t.stop();
    await sim.close();
    temp.remove();
  });

  it('asks for a bearer token with 401 and WWW-Authenticate: Bearer', async () => {
    const response = await fetch(`${t.adminUrl}/metrics`);
    expect(response.status).to.equal(401);
    expect(response.headers.get('www-authenticate')).to.equal('Bearer');
    expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHENTICATED');
  });

  it('fails closed with 503 and why when the review cannot be had, never with the metrics', async () => {
    const response = await fetch(`${t.adminUrl}/metrics`, { headers: { Authorization: 'Bearer some-token' } });
    expect(response.status).to.equal(503);
    const text = await response.text();
    expect(JSON.parse(text).error).to.deep.include({ code: 'UNAVAILABLE' });
    expect(JSON.parse(text).error.message, text).to.match(/^Cannot check the bearer token: TokenReview failed: the API server answered 405 \(Method "POST" is not simulated\)/);
    expect(text).to.not.include('gpucap_');
  });

  it('keeps /livez and /readyz open, /readyz saying how /metrics is guarded and why the last review failed', async () => {
    expect((await fetch(`${t.adminUrl}/livez`)).status).to.equal(200);
    const ready = await t.readyz();
    expect(ready.status).to.equal(200);
    expect(ready.body.components.adminAuth).to.deep.include({ mode: 'kubernetes', cacheSeconds: 10 });
    expect(ready.body.components.adminAuth.lastError).to.match(/^TokenReview failed: the API server answered 405 \(Method "POST" is not simulated\)/);
  });
});
