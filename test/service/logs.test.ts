// What the service writes to its logs while serving: one line per request carrying its request_id,
// and never a credential, whatever the request looked like and however it failed.
import { expect } from 'chai';
import sinon from 'sinon';
import { generateApiToken } from '../../src/auth/token-format.js';
import { createLogger } from '../../src/runtime/logger.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aNamespace, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';
import { aWorkload } from '../support/workload-builder.js';

interface LogLine {
  msg: string;
  level: string;
  request_id?: string;
  route?: string;
  status?: number;
  principal?: string;
}

describe('logs', () => {
  let t: TestService;
  const written: string[] = [];
  const lines = (): LogLine[] => written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);
  const requestLines = () => lines().filter((l) => l.msg === 'request');

  // Credentials sent in the requests below; none may reach a log line.
  const unknownToken = generateApiToken();
  const basicCredential = Buffer.from('ops:hunter2-very-secret').toString('base64');
  const jwtLike = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJtYWxsb3J5Iiwib3JnX2lkIjoiYWNtZSJ9.c2lnbmF0dXJlLWJ5dGVz';

  before(async () => {
    // trace: the most the service can write, debug lines about rejected credentials included.
    const logger = createLogger({ level: 'trace', version: 'test' }, { write: (line: string) => void written.push(line) });
    t = await startTestService({ logger });
    await t.service.store.upsertWorkloads([aWorkload({ workloadId: 'lo000000-0000-4000-8000-000000000001' })]);
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });

  it('writes one request line per request, each with the request_id the response carried', async () => {
    const before = requestLines().length;
    const responses = [
      await t.get('/v1/workloads'),
      await t.get('/v1/workloads/lo000000-0000-4000-8000-000000000001', { as: t.callers.member }),
      await t.get('/v1/workloads/stats', { as: null }),
      await t.get('/v1/health', { as: null }),
      await t.get('/v1/nowhere'),
      await t.get('/v1/workloads?limit=0'),
    ];
    const logged = requestLines().slice(before);
    expect(logged).to.have.length(responses.length);
    expect(logged.map((l) => l.request_id)).to.deep.equal(responses.map((r) => r.body.request_id));
    for (const line of logged) expect(line.request_id).to.be.a('string').and.match(/^[0-9a-f-]{36}$/);
    expect(logged.map((l) => l.status)).to.deep.equal([200, 404, 401, 200, 404, 400]);
    expect(logged.map((l) => l.route)).to.deep.equal([
      '/v1/workloads', '/v1/workloads/{workload_id}', '/v1/workloads/stats', '/v1/health', 'unmatched', '/v1/workloads',
    ]);
  });

  it('logs the principal id of an authenticated request, and none for a rejected one', async () => {
    const before = requestLines().length;
    await t.get('/v1/workloads', { as: t.callers.lead });
    await t.get('/v1/workloads', { as: null, org: 'acme', headers: { Authorization: `Bearer ${unknownToken}` } });
    const [ok, rejected] = requestLines().slice(before);
    expect(ok).to.include({ principal: 'lead', status: 200 });
    expect(rejected).to.include({ status: 401 });
    expect(rejected).to.not.have.property('principal');
  });

  it('uses the caller\'s X-Request-Id in the request line when it is safe', async () => {
    await t.get('/v1/workloads', { headers: { 'X-Request-Id': 'trace-7f3a:step.2' } });
    expect(requestLines().at(-1)).to.include({ request_id: 'trace-7f3a:step.2', status: 200 });
  });

  it('never writes a bearer token or other credential, whether it was accepted, rejected or the request failed', async () => {
    sinon.stub(t.service.index, 'get').rejects(new Error('disk I/O error'));
    const requests: { as?: null; org?: string | null; headers?: Record<string, string> }[] = [
      {}, // accepted
      { org: 'globex' }, // accepted credential, wrong organization
      { org: null }, // accepted credential, no organization
      { as: null, org: 'acme', headers: { Authorization: `Bearer ${unknownToken}` } },
      { as: null, org: 'acme', headers: { Authorization: `Bearer ${unknownToken.slice(0, -1)}` } },
      { as: null, org: 'acme', headers: { Authorization: `Bearer ${jwtLike}` } },
      { as: null, org: 'acme', headers: { Authorization: `Basic ${basicCredential}` } },
      { as: null, org: 'acme', headers: { Authorization: `Bearer ${t.callers.admin.token} extra` } },
    ];
    for (const options of requests) {
      await t.get('/v1/workloads', options);
      await t.get('/v1/workloads/lo000000-0000-4000-8000-000000000001', options); // 500 when authenticated
    }
    const text = written.join('');
    // The requests were logged, failures and rejections included, so the check below is not vacuous.
    expect(lines().filter((l) => l.msg === 'request failed')).to.have.length.greaterThan(0);
    expect(lines().filter((l) => l.level === 'debug')).to.have.length.greaterThan(0);
    for (const secret of [t.callers.admin.token, unknownToken, unknownToken.slice(0, -1), jwtLike, basicCredential, 'hunter2']) {
      expect(text, 'a credential reached the logs').to.not.contain(secret);
    }
    for (const caller of Object.values(t.callers)) expect(text).to.not.contain(caller.token);
    // A token is not leaked in pieces either (its random part without the gca_ prefix).
    expect(text).to.not.contain(t.callers.admin.token.slice(4));
  });
});

describe('readiness in the logs', () => {
  const temp = makeTempDir();
  const written: string[] = [];
  let sim: SimCluster;
  let t: TestService;
  after(async () => {
    await t?.stop();
    await sim?.close();
    temp.remove();
  });

  it('logs "service ready" once, after every informer of the watched cluster has listed', async () => {
    sim = await startSimCluster(temp.path, 'logged');
    sim.api.store.create('namespaces', aNamespace('ml', { 'gpucap.io/organization': 'acme' }));
    const logger = createLogger({ level: 'info', version: 'test' }, { write: (line: string) => void written.push(line) });
    t = await startTestService({ logger, clock: 'system', informers: FAST_INFORMERS, env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath } });
    await waitFor(async () => (await fetch(`${t.adminUrl}/readyz`)).status === 200, { what: 'ready', timeoutMs: 10_000 });
    const lines = written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string; resource?: string });
    const readiness = lines.map((line, at) => ({ msg: line.msg, at })).filter((line) => /^service (not )?ready$/.test(line.msg));
    expect(readiness.map((line) => line.msg)).to.deep.equal(['service ready']);
    const listed = lines.map((line, at) => ({ line, at })).filter(({ line }) => line.msg === 'Listed');
    expect(listed.map(({ line }) => line.resource).sort()).to.deep.equal(['jobs', 'namespaces', 'nodes', 'pods']);
    for (const { line, at } of listed) expect(at, `"Listed" ${line.resource} comes before "service ready"`).to.be.below(readiness[0]?.at ?? -1);
  });
});
