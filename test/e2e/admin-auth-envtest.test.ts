// The admin port with admin_auth kubernetes against a real kube-apiserver (envtest, v1.20): /metrics
// answers a ServiceAccount token only when RBAC lets its user `get` the non-resource URL /metrics,
// asked through a TokenReview and a SubjectAccessReview as the service's own identity (gpucap-reader,
// bound to system:auth-delegator as the chart binds its ServiceAccount). /livez and /readyz stay open
// and name no tenant. The service's identity without auth-delegator, and the API server down, both
// fail closed (503).
import { expect } from 'chai';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { createLogger } from '../../src/runtime/logger.js';
import { AdminClient, READER } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { capacityConfigMap } from '../support/envtest/objects.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'gpucap-system';
const MONITORING = 'monitoring';
const TEAM = 'team-other';
/** What a Prometheus that scrapes the service needs, and all it needs. */
const METRICS_READER_RULES = [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }];
/** Long enough that nothing cached runs out during the suite; the expiry itself is test/admin/metrics-access.test.ts's. */
const CACHE_SECONDS = 120;
const INFORMERS = { tuning: { backoff: { baseMs: 100, maxMs: 1000 }, stallTimeoutMs: 120_000 }, dependencyWaitMs: 2_000 };

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

describe('admin port /metrics behind Kubernetes authn/authz against a real kube-apiserver (envtest v1.20)', function () {
  this.timeout(60_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let t: TestService | undefined;
  const tokens = { prometheus: '', nosy: '', prometheusSecond: '' };
  const written: string[] = [];
  const logLines = (): LogLine[] => written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    for (const namespace of [NAMESPACE, MONITORING, TEAM]) await admin.createNamespace(namespace);
    await admin.createServiceAccount(MONITORING, 'prometheus');
    await admin.bindClusterRole('gpucap-metrics-reader', { kind: 'ServiceAccount', namespace: MONITORING, name: 'prometheus' }, METRICS_READER_RULES);
    // Authenticated, but no RBAC rule names it.
    await admin.createServiceAccount(TEAM, 'nosy');
    tokens.prometheus = await admin.serviceAccountToken(MONITORING, 'prometheus');
    // Another lifetime: two requests in the same second would otherwise sign the very same claims.
    tokens.prometheusSecond = await admin.serviceAccountToken(MONITORING, 'prometheus', 7200);
    tokens.nosy = await admin.serviceAccountToken(TEAM, 'nosy');
    // The service reads acme's budget, so /metrics has an organization to show and /readyz one to hide.
    await admin.bindChartRoleToReader(NAMESPACE);
    await admin.createConfigMap(NAMESPACE, capacityConfigMap('capacity-acme', capacityYaml()));
    t = await startTestService({
      clock: 'system',
      informers: INFORMERS,
      logger: createLogger({ level: 'info', version: 'test' }, { write: (line: string) => void written.push(line) }),
      env: {
        GPUCAP_ADMIN_AUTH: 'kubernetes',
        GPUCAP_ADMIN_AUTH_CACHE_SECONDS: String(CACHE_SECONDS),
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_KUBECONFIG: envtest.readerKubeconfig,
        GPUCAP_NAMESPACE: NAMESPACE,
      },
    });
    await waitFor(async () => (await service().readyz()).status === 200, { timeoutMs: 30_000, what: '/readyz to answer 200 once the ConfigMaps synced' });
  });
  after(async () => {
    await t?.stop();
    await envtest?.stop();
  });

  function service(): TestService {
    if (t === undefined) throw new Error('The service is not running');
    return t;
  }

  async function metrics(authorization?: string): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${service().adminUrl}/metrics`, { headers: authorization === undefined ? {} : { Authorization: authorization } });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** The metrics as Prometheus reads them (with its token, which is cached after the first). */
  async function scraped(): Promise<ReturnType<typeof parseMetrics>> {
    const response = await metrics(`Bearer ${tokens.prometheus}`);
    expect(response.status, response.text.slice(0, 300)).to.equal(200);
    return parseMetrics(response.text);
  }

  it('answers 503 while the service\'s own identity may not create TokenReviews, saying it needs system:auth-delegator', async () => {
    const refused = await metrics(`Bearer ${tokens.prometheus}`);
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('content-type')).to.match(/^application\/json/);
    const body = JSON.parse(refused.text);
    expect(body.error.code).to.equal('UNAVAILABLE');
    expect(body.error.message).to.include('TokenReview').and.include('403').and.include('system:auth-delegator');
    expect(refused.text).to.not.include('gpucap_');
  });

  it('serves the metrics to a ServiceAccount bound to get /metrics, once the service may review tokens', async () => {
    await admin.bindClusterRole('system:auth-delegator', READER);
    const served = await waitFor(async () => {
      const response = await metrics(`Bearer ${tokens.prometheus}`);
      return response.status === 200 ? response : undefined;
    }, { timeoutMs: 10_000, what: '/metrics to answer 200 once the reader is bound to system:auth-delegator' });
    expect(served.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    expect(served.text).to.match(/gpucap_budget_allocated_gpu_hours\{[^}]*organization_id="acme"[^}]*level="organization"[^}]*\} 1000/);
  });

  it('answers 401 with WWW-Authenticate: Bearer to a request without a token, without asking the API server', async () => {
    const reviewsBefore = sumOf(await scraped(), 'gpucap_admin_auth_reviews_total');
    for (const authorization of [undefined, 'Basic b3BzOmh1bnRlcjI=', 'Bearer']) {
      const response = await metrics(authorization);
      expect(response.status, String(authorization)).to.equal(401);
      expect(response.headers.get('www-authenticate')).to.equal('Bearer');
      expect(JSON.parse(response.text).error.code).to.equal('UNAUTHENTICATED');
    }
    expect(sumOf(await scraped(), 'gpucap_admin_auth_reviews_total'), 'no review was sent').to.equal(reviewsBefore);
  });

  it('answers 401 to a token the API server does not authenticate (garbage, and a token signed by no one it trusts)', async () => {
    const forged = `${tokens.nosy.slice(0, tokens.nosy.lastIndexOf('.'))}.c2lnbmF0dXJl`;
    for (const token of ['not-a-token', forged]) {
      const response = await metrics(`Bearer ${token}`);
      expect(response.status, token.slice(0, 20)).to.equal(401);
      expect(response.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
      expect(JSON.parse(response.text).error.code).to.equal('UNAUTHENTICATED');
      expect(response.text).to.not.include('gpucap_');
    }
  });

  it('answers 403 to an authenticated ServiceAccount that no RBAC rule lets get /metrics, naming the user and the rule it lacks', async () => {
    const response = await metrics(`Bearer ${tokens.nosy}`);
    expect(response.status).to.equal(403);
    const body = JSON.parse(response.text);
    expect(body.error.code).to.equal('FORBIDDEN');
    expect(body.error.message).to.include('system:serviceaccount:team-other:nosy').and.include('nonResourceURLs ["/metrics"]');
    expect(response.text).to.not.include('gpucap_');
  });

  it('reviews a token once per cache period: repeated scrapes and repeated refusals cost no further round trip', async () => {
    const before = await scraped();
    for (let i = 0; i < 5; i++) {
      expect((await metrics(`Bearer ${tokens.nosy}`)).status).to.equal(403);
      expect((await metrics('Bearer not-a-token')).status).to.equal(401);
    }
    const after = await scraped();
    for (const outcome of ['allowed', 'forbidden', 'unauthenticated']) {
      expect(sumOf(after, 'gpucap_admin_auth_reviews_total', { outcome }), `reviews ${outcome}`).to.equal(sumOf(before, 'gpucap_admin_auth_reviews_total', { outcome }));
    }
    expect(sumOf(after, 'gpucap_admin_auth_reviews_total', { outcome: 'allowed' }), 'the Prometheus token, reviewed once').to.equal(1);
    expect(sumOf(after, 'gpucap_admin_auth_decisions_total', { outcome: 'forbidden' }) - sumOf(before, 'gpucap_admin_auth_decisions_total', { outcome: 'forbidden' })).to.equal(5);
    expect(sumOf(after, 'gpucap_admin_auth_decisions_total', { outcome: 'allowed' }) - sumOf(before, 'gpucap_admin_auth_decisions_total', { outcome: 'allowed' })).to.equal(1);
  });

  it('logs each refused token once, by a prefix of its hash and the user, and never a token', () => {
    const refusals = logLines().filter((line) => line.msg === '/metrics refused');
    expect(refusals.map((line) => line.outcome).sort()).to.deep.equal(['forbidden', 'unauthenticated', 'unauthenticated']);
    expect(refusals.find((line) => line.outcome === 'forbidden')).to.include({ user: 'system:serviceaccount:team-other:nosy' });
    const text = written.join('');
    for (const token of [tokens.prometheus, tokens.nosy, 'not-a-token']) expect(text).to.not.include(token);
    expect(tokens.prometheusSecond, 'two different Prometheus tokens').to.not.equal(tokens.prometheus);
  });

  it('/livez and /readyz answer without credentials, and /readyz counts organizations instead of naming them', async () => {
    expect((await fetch(`${service().adminUrl}/livez`)).status).to.equal(200);
    const ready = await service().readyz();
    expect(ready.status).to.equal(200);
    expect(ready.body.components.capacity).to.deep.include({ enabled: true, synced: true, organizations: 1, problems: 0 });
    expect(ready.body.components.adminAuth).to.deep.include({ mode: 'kubernetes', cacheSeconds: CACHE_SECONDS, lastError: null });
    expect(JSON.stringify(ready.body)).to.not.include('acme');
  });

  // Last: the API server stays down (after() stops everything), which saves its restart's seconds.
  it('fails closed with 503 and a JSON reason while the API server is down, for a token not reviewed yet', async () => {
    await envtest?.stopApiServer();
    const response = await metrics(`Bearer ${tokens.prometheusSecond}`);
    expect(response.status).to.equal(503);
    expect(response.headers.get('retry-after')).to.equal('5');
    const body = JSON.parse(response.text);
    expect(body.error.code).to.equal('UNAVAILABLE');
    expect(body.error.message).to.include('TokenReview failed: the API server could not be reached');
    expect(response.text).to.not.include('gpucap_');
    expect((await service().readyz()).body.components.adminAuth.lastError).to.include('could not be reached');
  });
});
