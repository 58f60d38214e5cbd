// The error table of DECISIONS and the request id rules, as a client sees them.
import { expect } from 'chai';
import sinon from 'sinon';
import { startTestService, type TestService } from '../support/service-harness.js';

describe('API errors and request ids', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());
  afterEach(() => sinon.restore());

  it('answers 404 NOT_FOUND with the error body for an unknown path', async () => {
    const res = await t.get('/v1/workloadz');
    expect(res.status).to.equal(404);
    expect(res.body.error).to.deep.equal({ code: 'NOT_FOUND', message: 'No endpoint at /v1/workloadz', details: [] });
  });

  it('answers 404 for a path outside /v1 too', async () => {
    expect((await t.get('/', { as: null })).status).to.equal(404);
  });

  it('answers 405 METHOD_NOT_ALLOWED with an Allow header for another method', async () => {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const response = await fetch(`${t.url}/v1/workloads`, { method });
      expect(response.status, method).to.equal(405);
      expect(response.headers.get('allow')).to.contain('GET');
      const body = (await response.json()) as { error: { code: string }; request_id: string };
      expect(body.error.code).to.equal('METHOD_NOT_ALLOWED');
      expect(body.request_id).to.be.a('string');
    }
  });

  it('answers 500 INTERNAL without internals when a read fails', async () => {
    sinon.stub(t.service.index, 'list').rejects(new Error('SQLITE_CORRUPT: database disk image is malformed at /var/lib/secret.db'));
    const res = await t.get('/v1/workloads');
    expect(res.status).to.equal(500);
    expect(res.body.error.code).to.equal('INTERNAL');
    expect(JSON.stringify(res.body)).to.not.match(/SQLITE|secret|stack|\.ts/);
    expect(res.body.error.message).to.contain('request_id');
  });

  it('answers 503 UNAVAILABLE with Retry-After until the index is ready, and health says unhealthy', async () => {
    t.service.readiness.require('cluster/east/pods');
    try {
      const res = await t.get('/v1/workloads');
      expect(res.status).to.equal(503);
      expect(res.body.error.code).to.equal('UNAVAILABLE');
      expect(res.headers.get('retry-after')).to.equal('5');
      const health = await t.get('/v1/health', { as: null });
      expect(health.status).to.equal(503);
      expect(health.body.data.status).to.equal('unhealthy');
      expect(health.body.data.checks).to.deep.include({ name: 'cluster/east', status: 'pending' });
    } finally {
      t.service.readiness.forget('cluster/east/pods');
    }
    expect((await t.get('/v1/workloads')).status).to.equal(200);
  });

  it('stays healthy (200) while a source fails after the first sync, and names the source degraded in checks', async () => {
    for (const resource of ['pods', 'jobs']) {
      t.service.readiness.require(`cluster/east/${resource}`);
      t.service.readiness.markReady(`cluster/east/${resource}`);
    }
    t.service.readiness.setFailure('cluster/east/pods', 'connection refused');
    try {
      const health = await t.get('/v1/health', { as: null });
      expect(health.status).to.equal(200);
      expect(health.body.data).to.deep.include({ status: 'healthy' });
      expect(health.body.data.checks).to.deep.include({ name: 'cluster/east', status: 'degraded' });
      expect(health.body.data.checks.filter((c: { name: string }) => c.name === 'cluster/east')).to.have.length(1);
      expect(JSON.stringify(health.body)).to.not.contain('refused');
    } finally {
      for (const resource of ['pods', 'jobs']) t.service.readiness.forget(`cluster/east/${resource}`);
    }
  });

  it('echoes a safe X-Request-Id in request_id and the response header', async () => {
    const res = await t.get('/v1/workloads', { headers: { 'X-Request-Id': 'dash-42:trace.a_b-c' } });
    expect(res.body.request_id).to.equal('dash-42:trace.a_b-c');
    expect(res.headers.get('x-request-id')).to.equal('dash-42:trace.a_b-c');
  });

  it('replaces an unsafe or too long X-Request-Id with a generated one, errors included', async () => {
    for (const given of ['has space', 'x'.repeat(129), 'quote"']) {
      const res = await t.get('/v1/nowhere', { headers: { 'X-Request-Id': given } });
      expect(res.body.request_id).to.not.equal(given);
      expect(res.body.request_id).to.match(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('x-request-id')).to.equal(res.body.request_id);
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await fetch(`${t.url}/v1/health`, { method: 'HEAD' });
    expect(response.status).to.equal(200);
    expect(await response.text()).to.equal('');
  });
});

describe('API rate limiting', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { GPUCAP_RATE_LIMIT_PER_SECOND: '1', GPUCAP_RATE_LIMIT_BURST: '3' } });
  });
  after(() => t.stop());

  it('answers 429 RATE_LIMITED with Retry-After once a principal used its burst, and refills over time', async () => {
    for (let i = 0; i < 3; i += 1) expect((await t.get('/v1/workloads')).status).to.equal(200);
    const limited = await t.get('/v1/workloads');
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).to.equal('1');
    t.clock.advance(1000);
    expect((await t.get('/v1/workloads')).status).to.equal(200);
  });

  it('keeps a separate bucket per principal', async () => {
    for (let i = 0; i < 3; i += 1) await t.get('/v1/workloads', { as: t.callers.lead });
    expect((await t.get('/v1/workloads', { as: t.callers.lead })).status).to.equal(429);
    expect((await t.get('/v1/workloads', { as: t.callers.member })).status).to.equal(200);
  });
});

describe('API CORS', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { GPUCAP_CORS_ALLOWED_ORIGINS: 'https://grafana.example.com,https://dash.example.com' } });
  });
  after(() => t.stop());

  it('answers a preflight from an allowed origin with the headers a dashboard needs', async () => {
    const response = await fetch(`${t.url}/v1/workloads`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://grafana.example.com', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,x-organization-id' },
    });
    expect(response.status).to.equal(204);
    expect(response.headers.get('access-control-allow-origin')).to.equal('https://grafana.example.com');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).to.contain('x-organization-id');
  });

  it('lets an allowed origin read responses, errors included, and the request id', async () => {
    const res = await t.get('/v1/workloads', { as: null, headers: { Origin: 'https://dash.example.com' } });
    expect(res.status).to.equal(401);
    expect(res.headers.get('access-control-allow-origin')).to.equal('https://dash.example.com');
    expect(res.headers.get('access-control-expose-headers')).to.contain('X-Request-Id');
  });

  it('gives an origin not on the list no CORS headers', async () => {
    const res = await t.get('/v1/workloads', { headers: { Origin: 'https://evil.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });
});
