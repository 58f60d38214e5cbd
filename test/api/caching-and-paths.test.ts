// What caches and path matching may do with the API's answers (docs/api.md "Caching and paths"):
// every answer of an authenticated /v1 endpoint, errors and CSV included, is `no-store` and varies by
// the credential and organization, so no shared cache can hand one caller's data to another; the
// public ones (health, the OpenAPI document, the console) keep their caching. Paths are case-sensitive:
// /V1/workloads is an unknown path, for the router, the console's routes and CORS alike.
import { expect } from 'chai';
import { builtConsole } from '../support/built-console.js';
import { startTestService, type RequestOptions, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const DASHBOARD = 'https://dash.example.com';
const varyOf = (headers: Headers) => (headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');

describe('API caching and paths', function () {
  this.timeout(60_000);
  let t: TestService;
  let script: string;

  before(async () => {
    const built = await builtConsole();
    script = built.files.map((f) => f.name).find((name) => name.endsWith('.js')) ?? '';
    t = await startTestService({ env: { GPUCAP_CONSOLE_ASSETS_DIR: built.outDir, GPUCAP_CORS_ALLOWED_ORIGINS: DASHBOARD } });
    await t.service.store.upsertWorkloads([aWorkload({ workloadId: 'ca000000-0000-4000-8000-000000000001', initiativeId: 'vision' })]);
  });
  after(() => t.stop());

  describe('answers of authenticated endpoints are no-store and vary by credential and organization', () => {
    // Options as thunks: the callers exist once the service has started.
    const scoped: [string, string, () => RequestOptions, number][] = [
      ['a list', '/v1/workloads', () => ({}), 200],
      ['a MEMBER\'s list', '/v1/workloads', () => ({ as: t.callers.member }), 200],
      ['statistics as CSV', '/v1/workloads/stats', () => ({ headers: { Accept: 'text/csv' } }), 200],
      ['capacity', '/v1/capacity', () => ({}), 200],
      ['a workload', '/v1/workloads/ca000000-0000-4000-8000-000000000001', () => ({}), 200],
      ['an unknown workload (404)', '/v1/workloads/nope', () => ({}), 404],
      ['a missing credential (401)', '/v1/workloads', () => ({ as: null }), 401],
      ['another organization (403)', '/v1/capacity', () => ({ org: 'globex' }), 403],
      ['a bad parameter (400)', '/v1/workloads?status=lost', () => ({}), 400],
      ['a bad parameter with Accept: text/csv (400)', '/v1/workloads?status=lost', () => ({ headers: { Accept: 'text/csv' } }), 400],
      ['an unknown path under /v1 (404)', '/v1/workloadz', () => ({}), 404],
    ];
    for (const [what, path, options, status] of scoped) {
      it(what, async () => {
        const res = await t.getText(path, options());
        expect(res.status, res.text.slice(0, 200)).to.equal(status);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(varyOf(res.headers)).to.include.members(['authorization', 'x-organization-id']);
      });
    }

    it('keeps Vary: Accept of CSV and Vary: Origin of CORS beside them, on success and on errors', async () => {
      const csv = await t.getText('/v1/workloads', { headers: { Accept: 'text/csv', Origin: DASHBOARD } });
      expect(csv.status).to.equal(200);
      expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
      expect(csv.headers.get('cache-control')).to.equal('no-store');
      expect(varyOf(csv.headers)).to.include.members(['accept', 'origin', 'authorization', 'x-organization-id']);
      expect(csv.headers.get('access-control-allow-origin')).to.equal(DASHBOARD);
      const errors: [string, RequestOptions, number][] = [['/v1/workloads', { as: null }, 401], ['/v1/workloads', { org: 'globex' }, 403], ['/v1/workloads?limit=0', {}, 400]];
      for (const [path, options, status] of errors) {
        const res = await t.getText(path, { ...options, headers: { Origin: DASHBOARD } });
        expect(res.status).to.equal(status);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(varyOf(res.headers)).to.include.members(['origin', 'authorization', 'x-organization-id']);
        expect(res.headers.get('access-control-allow-origin')).to.equal(DASHBOARD);
      }
    });
  });

  describe('public answers keep their caching', () => {
    for (const [path, cacheControl] of [
      ['/v1/health', null],
      ['/v1/openapi.json', null],
      ['/', 'no-cache'],
      ['/workloads', 'no-cache'],
    ] as const) {
      it(path, async () => {
        const res = await t.getText(path, { as: null });
        expect(res.status).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal(cacheControl);
        expect(varyOf(res.headers)).to.not.include.members(['authorization']);
      });
    }

    it('a hashed console asset', async () => {
      const res = await t.getText(`/ui/${script}`, { as: null });
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(varyOf(res.headers)).to.deep.equal(['accept-encoding']);
    });
  });

  describe('paths are case-sensitive', () => {
    // <asset>: the console's script, whose name is known once it is built.
    for (const given of ['/V1/workloads', '/v1/Workloads', '/v1/WORKLOADS/stats', '/v1/workloads/Stats', '/v1/Capacity', '/V1/health', '/v1/OpenAPI.json', '/Workloads', '/Statistics', '/UI/<asset>']) {
      it(`${given} is an unknown path`, async () => {
        const path = given.replace('<asset>', script);
        const res = await t.get(path);
        expect(res.status).to.equal(404);
        // /v1/workloads/Stats is a workload id (ids are case-sensitive too), the others no endpoint at all.
        const message = path === '/v1/workloads/Stats' ? 'Workload "Stats" was not found' : `No endpoint at ${path}`;
        expect(res.body.error).to.deep.equal({ code: 'NOT_FOUND', message, details: [] });
        expect(res.body.request_id).to.be.a('string');
      });
    }

    it('a CORS preflight of /V1/workloads gets no CORS headers, only the 404', async () => {
      const preflight = (path: string) => fetch(t.url + path, {
        method: 'OPTIONS',
        headers: { Origin: DASHBOARD, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,x-organization-id' },
      });
      const upper = await preflight('/V1/workloads');
      expect(upper.status).to.equal(404);
      expect(upper.headers.get('access-control-allow-origin')).to.equal(null);
      expect(((await upper.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
      const lower = await preflight('/v1/workloads');
      expect(lower.status).to.equal(204);
      expect(lower.headers.get('access-control-allow-origin')).to.equal(DASHBOARD);
    });
  });
});
