// The web console's routes on the API port: its page at each of its paths and its assets under /ui/,
// with strict security headers, caching by hash and gzip; 404 when turned off or not built. The
// console's behaviour in a browser is in test/console/browser.test.ts.
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { CONSOLE_CSP } from '../../src/api/console/console-routes.js';
import { builtConsole } from '../support/built-console.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A GET as a browser sends it, without fetch's own request headers; the body as it travelled, gunzipped. */
function raw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Map<string, string>; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const encoding = response.headers['content-encoding'];
        const received = new Map(Object.entries(response.headers).map(([name, value]) => [name, String(value)]));
        resolve({ status: response.statusCode ?? 0, headers: received, text: (encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8') });
      });
    }).on('error', reject);
  });
}

describe('web console routes', function () {
  this.timeout(60_000);
  let service: TestService;
  let assets: { script: string; style: string; icon: string };

  before(async () => {
    const built = await builtConsole();
    const named = (suffix: string) => built.files.map((f) => f.name).find((name) => name.endsWith(suffix) && name !== 'index.html') ?? '';
    assets = { script: named('.js'), style: named('.css'), icon: named('.svg') };
    service = await startTestService({ env: { GPUCAP_CONSOLE_ASSETS_DIR: built.outDir } });
  });
  after(async () => service?.stop());

  for (const path of ['/', '/workloads', '/workloads/0f3c2a10-aaaa-bbbb-cccc-000000000001', '/rankings', '/statistics?group_by=initiative_id', '/fleet?time_range=today', '/chargeback?month=2026-11']) {
    it(`serves the console's page at ${path} without credentials, with strict headers`, async () => {
      const { status, headers, text } = await raw(service.url + path);
      expect(status).to.equal(200);
      expect(headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(text).to.include(`<script type="module" src="/ui/${assets.script}"></script>`);
      expect(headers.get('content-security-policy')).to.equal(CONSOLE_CSP);
      expect(headers.get('x-content-type-options')).to.equal('nosniff');
      expect(headers.get('referrer-policy')).to.equal('no-referrer');
      expect(headers.get('x-frame-options')).to.equal('DENY');
      expect(headers.get('cache-control')).to.equal('no-cache');
    });
  }

  it("allows no inline script or style, no other origin, and no framing", () => {
    const directives = Object.fromEntries(CONSOLE_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['script-src']).to.deep.equal(["'self'"]);
    expect(directives['style-src']).to.deep.equal(["'self'"]);
    expect(directives['default-src']).to.deep.equal(["'none'"]);
    expect(directives['frame-ancestors']).to.deep.equal(["'none'"]);
    expect(CONSOLE_CSP).to.not.match(/unsafe-inline|unsafe-eval|\*|https?:/);
  });

  it('has no inline script, event handler or style attribute in its page', async () => {
    const { text } = await raw(`${service.url}/`);
    for (const tag of text.match(/<script\b[^>]*>/g) ?? []) expect(tag).to.match(/ src="\/ui\/[^"]+"/);
    expect(text).to.not.match(/<script\b[^>]*>[^<]+<\/script>/);
    expect(text).to.not.match(/\son[a-z]+=/i);
    expect(text).to.not.match(/\sstyle=/i);
    expect(text).to.not.match(/<style\b/i);
  });

  it('serves the hashed assets for good, gzipped when asked, and revalidates by ETag', async () => {
    for (const [name, type] of [
      [assets.script, 'text/javascript; charset=utf-8'],
      [assets.style, 'text/css; charset=utf-8'],
      [assets.icon, 'image/svg+xml'],
    ] as const) {
      const plain = await raw(`${service.url}/ui/${name}`, { 'Accept-Encoding': 'identity' });
      expect(plain.status, name).to.equal(200);
      expect(plain.headers.get('content-type')).to.equal(type);
      expect(plain.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(plain.headers.get('x-content-type-options')).to.equal('nosniff');
      const etag = plain.headers.get('etag') ?? '';
      expect(etag).to.match(/^"[^"]+"$/);
      const again = await raw(`${service.url}/ui/${name}`, { 'Accept-Encoding': 'identity', 'If-None-Match': etag });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
    }
    const gzipped = await raw(`${service.url}/ui/${assets.script}`, { 'Accept-Encoding': 'gzip' });
    expect(gzipped.headers.get('content-encoding')).to.equal('gzip');
    expect(gzipped.headers.get('vary')).to.include('Accept-Encoding');
    const plain = await raw(`${service.url}/ui/${assets.script}`, { 'Accept-Encoding': 'identity' });
    expect(plain.headers.get('content-encoding')).to.equal(undefined);
    expect(gzipped.text).to.equal(plain.text);
    expect(gzipped.headers.get('etag')).to.not.equal(plain.headers.get('etag'));
  });

  it('answers 404 in the API error body for a file the console does not have', async () => {
    for (const path of ['/ui/nothing.js', '/ui/', '/ui/../package.json', '/ui/%2e%2e/package.json', '/favicon.ico']) {
      const { status, text } = await raw(service.url + path);
      expect(status, path).to.equal(404);
      expect(JSON.parse(text).error.code, path).to.equal('NOT_FOUND');
    }
  });

  it('leaves the API as it was: /v1 answers JSON and still needs credentials', async () => {
    const { status, body } = await service.get('/v1/workloads?limit=1', { as: null });
    expect(status).to.equal(401);
    expect(body.error.code).to.equal('UNAUTHENTICATED');
  });
});

describe('web console turned off or not built', function () {
  this.timeout(60_000);

  it('GPUCAP_CONSOLE_ENABLED=false: / and /ui/ answer 404, the API is unchanged', async () => {
    const built = await builtConsole();
    const service = await startTestService({ env: { GPUCAP_CONSOLE_ASSETS_DIR: built.outDir, GPUCAP_CONSOLE_ENABLED: 'false' } });
    try {
      for (const path of ['/', '/workloads', `/ui/${built.files[0]?.name ?? ''}`]) {
        const { status, text } = await raw(service.url + path);
        expect(status, path).to.equal(404);
        expect(JSON.parse(text).error.message).to.equal(`No endpoint at ${path}`);
      }
      expect((await service.get('/v1/health', { as: null })).status).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  it('an assets folder without the console: the page says how to build it, the API still serves', async () => {
    const empty = makeTempDir();
    const service = await startTestService({ env: { GPUCAP_CONSOLE_ASSETS_DIR: empty.path } });
    try {
      const { status, text } = await raw(`${service.url}/`);
      expect(status).to.equal(404);
      const body = JSON.parse(text);
      expect(body.error.code).to.equal('NOT_FOUND');
      expect(body.error.message).to.include(`The web console is not built at ${empty.path} (no index.html): run \`npm run build\``);
      expect((await service.get('/v1/health', { as: null })).status).to.equal(200);
    } finally {
      await service.stop();
      empty.remove();
    }
  });
});
