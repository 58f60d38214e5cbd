// The limit on failed authentications per client address, over HTTP from real loopback addresses
// (127.0.0.0/8 is all loopback on Linux, so each test sends from an address of its own and starts
// with a full bucket): 429 before any credential is looked at, only 401s counting, a bucket per
// address whatever X-Forwarded-For says.
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { RateLimiter } from '../../src/api/rate-limiter.js';
import { generateApiToken } from '../../src/auth/token-format.js';
import { AUDIENCE, ISSUER, jwksOf, makeKey, signToken, startJwksServer, TestClock, type JwksServer, type TestKey } from '../auth/auth-helpers.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';

interface Sent {
  from: string;
  token?: string;
  org?: string;
  headers?: Record<string, string>;
}

/** GET /v1/workloads from the loopback address `from`. */
function get(t: TestService, { from, token, org = 'acme', headers = {} }: Sent): Promise<{ status: number; retryAfter?: string; body: JsonBody }> {
  const { hostname, port } = new URL(t.url);
  const all: Record<string, string> = { 'X-Organization-Id': org, ...headers };
  if (token !== undefined) all.Authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: '/v1/workloads', localAddress: from, headers: all }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const unknownToken = generateApiToken();

describe('API limit on failed authentications per client address', () => {
  let t: TestService;
  let jwks: JwksServer;
  let key: TestKey;
  let admin: string;

  before(async () => {
    key = await makeKey('ES256');
    jwks = await startJwksServer(jwksOf(key));
    t = await startTestService({
      env: {
        GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '1',
        GPUCAP_AUTH_FAILURE_BURST: '3',
        GPUCAP_JWKS_URL: jwks.url,
        GPUCAP_JWT_ISSUER: ISSUER,
        GPUCAP_JWT_AUDIENCE: AUDIENCE,
      },
    });
    admin = t.callers.admin.token;
  });
  after(async () => {
    await t.stop();
    await jwks.close();
  });

  const failThrice = async (from: string): Promise<void> => {
    for (let i = 0; i < 3; i += 1) expect((await get(t, { from, token: unknownToken })).status).to.equal(401);
  };

  it('answers 429 RATE_LIMITED with Retry-After and the error body once an address has had its burst of 401s', async () => {
    const from = '127.0.0.2';
    await failThrice(from);
    const limited = await get(t, { from, token: admin });
    expect(limited.status).to.equal(429);
    expect(limited.retryAfter).to.equal('1');
    expect(limited.body.error).to.deep.equal({
      code: 'RATE_LIMITED',
      message: 'Too many failed authentications from this address; retry in 1 s',
      details: [],
    });
    expect(limited.body.request_id).to.be.a('string');
  });

  it('looks at no credential while the bucket is empty: a JWT makes no JWKS fetch', async () => {
    const from = '127.0.0.3';
    // A kid the keys lack, past the cooldown of any earlier fetch: verifying it would fetch the JWKS.
    const jwt = await signToken(await makeKey('ES256'));
    t.clock.advance(30_000);
    for (let i = 0; i < 3; i += 1) expect((await get(t, { from })).status).to.equal(401); // no Authorization header
    const fetched = jwks.requests;
    expect((await get(t, { from, token: jwt })).status).to.equal(429);
    expect(jwks.requests).to.equal(fetched);

    t.clock.advance(1000);
    expect((await get(t, { from, token: jwt })).status).to.equal(401);
    expect(jwks.requests).to.equal(fetched + 1, 'the same request, allowed, fetches the keys');
  });

  it('refills over time, and takes nothing for a success', async () => {
    const from = '127.0.0.4';
    for (let i = 0; i < 10; i += 1) expect((await get(t, { from, token: admin })).status).to.equal(200);
    await failThrice(from);
    expect((await get(t, { from, token: admin })).status).to.equal(429);

    t.clock.advance(999);
    expect((await get(t, { from, token: admin })).retryAfter).to.equal('1');
    t.clock.advance(1);
    expect((await get(t, { from, token: admin })).status).to.equal(200);
    expect((await get(t, { from, token: admin })).status).to.equal(200);
    expect((await get(t, { from, token: unknownToken })).status).to.equal(401);
    expect((await get(t, { from, token: admin })).status).to.equal(429);
  });

  it('keeps a bucket per client address, and X-Forwarded-For changes nothing', async () => {
    const from = '127.0.0.5';
    for (let i = 0; i < 3; i += 1) {
      const forwarded = { 'X-Forwarded-For': `203.0.113.${i + 1}` };
      expect((await get(t, { from, token: unknownToken, headers: forwarded })).status).to.equal(401);
    }
    expect((await get(t, { from, token: admin, headers: { 'X-Forwarded-For': '198.51.100.7' } })).status).to.equal(429);
    expect((await get(t, { from: '127.0.0.6', token: admin })).status).to.equal(200);
  });

  it('counts neither a 403, a 400 nor a 503 as a failed authentication', async () => {
    const from = '127.0.0.7';
    for (let i = 0; i < 4; i += 1) {
      expect((await get(t, { from, token: admin, org: 'globex' })).status).to.equal(403);
      expect((await get(t, { from, token: admin, headers: { 'X-Organization-Id': '' } })).status).to.equal(400);
    }
    // A kid the cached keys lack, past the cooldown, while the identity provider fails: 503 each time.
    jwks.failWith(500);
    try {
      t.clock.advance(30_000);
      const rotated = await signToken(await makeKey('ES256'));
      for (let i = 0; i < 4; i += 1) expect((await get(t, { from, token: rotated })).status).to.equal(503);
    } finally {
      jwks.serve(jwksOf(key));
    }
    await failThrice(from);
    expect((await get(t, { from, token: admin })).status).to.equal(429);
  });
});

describe('API limit on failed authentications, turned off', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '0', GPUCAP_AUTH_FAILURE_BURST: '1' } });
  });
  after(() => t.stop());

  it('answers every failure 401 when auth_failure_rate_per_second is 0', async () => {
    for (let i = 0; i < 25; i += 1) expect((await get(t, { from: '127.0.0.2', token: unknownToken })).status).to.equal(401);
    expect((await get(t, { from: '127.0.0.2', token: t.callers.admin.token })).status).to.equal(200);
  });
});

describe('RateLimiter memory bounds', () => {
  it('forgets the key that was used least recently beyond maxKeys, which then starts full', () => {
    const clock = new TestClock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, maxKeys: 2 }, clock);
    limiter.take('a');
    limiter.take('b');
    expect(limiter.check('a').allowed).to.equal(false);
    limiter.take('a'); // refused, but a is now the one used last
    limiter.take('c');
    expect(limiter.trackedKeys).to.equal(2);
    expect(limiter.check('b')).to.deep.equal({ allowed: true });
    expect(limiter.check('a')).to.deep.equal({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.check('c')).to.deep.equal({ allowed: false, retryAfterSeconds: 1 });
  });

  it('drops buckets that have refilled, and checking a key stores nothing', () => {
    const clock = new TestClock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 20, maxKeys: 100 }, clock);
    for (const key of ['a', 'b', 'c']) limiter.take(key);
    expect(limiter.check('d')).to.deep.equal({ allowed: true });
    expect(limiter.trackedKeys).to.equal(3);
    clock.advance(20_000);
    limiter.take('e');
    expect(limiter.trackedKeys).to.equal(1);
  });
});
