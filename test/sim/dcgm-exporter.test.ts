import { readdirSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Delay } from '../../sim/dcgm-exporter/faults.js';
import { SimDcgmFleet } from '../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../sim/dcgm-exporter/exporter.js';
import type { SimGpu, SimNodeGpus } from '../../sim/dcgm-exporter/types.js';

interface PromFamily {
  name: string;
  metrics: { value: string; labels?: Record<string, string> }[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => PromFamily[];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  ms: number;
  /** The client stopped reading at maxBytes. */
  capped: boolean;
  reusedSocket: boolean;
}

interface GetOptions {
  headers?: Record<string, string>;
  /** Abort the request after this long (the client gives up). */
  timeoutMs?: number;
  /** Stop reading and drop the connection after this many body bytes. */
  maxBytes?: number;
  agent?: Agent | false;
}

/** A plain node:http GET, as the service's scraper makes it; rejects with the transport error. */
function get(url: string, options: GetOptions = {}): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: options.headers, agent: options.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (options.maxBytes !== undefined && size > options.maxBytes) {
          req.destroy();
          finish(true);
        }
      });
      res.on('end', () => finish(false));
      res.on('error', reject);
      const finish = (capped: boolean): void =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
          capped,
          reusedSocket: req.reusedSocket,
        });
    });
    if (options.timeoutMs !== undefined) req.setTimeout(options.timeoutMs, () => req.destroy(Object.assign(new Error('Client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', reject);
    req.end();
  });
}

/** The error code a request fails with, or "answered". */
async function failure(promise: Promise<Answer>): Promise<string> {
  return promise.then(
    () => 'answered',
    (error: NodeJS.ErrnoException) => error.code ?? error.message,
  );
}

function gpu(index: number, node = 'a'): SimGpu {
  return { index, uuid: `GPU-${node.padStart(8, '0')}-0000-4000-8000-${String(index).padStart(12, '0')}` };
}

function eightGpuNode(hostname: string): SimNodeGpus {
  return { hostname, gpus: Array.from({ length: 8 }, (_, i) => gpu(i, hostname.replace(/\W/g, '').slice(-8))) };
}

function uuidsIn(body: Buffer | string): string[] {
  const util = parsePrometheus(body.toString()).find((f) => f.name === 'DCGM_FI_DEV_GPU_UTIL');
  return (util?.metrics ?? []).map((m) => m.labels?.UUID ?? '');
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

describe('simulated dcgm-exporter fleet', () => {
  let fleet: SimDcgmFleet;
  beforeEach(async () => {
    fleet = await SimDcgmFleet.start();
  });
  afterEach(() => fleet.close());

  it('gives each exporter its own loopback address on one shared port, each answering with its own GPUs', async () => {
    const a = await fleet.add({ hostname: 'node-a', gpus: [gpu(0, 'a'), gpu(1, 'a')] });
    const b = await fleet.add({ hostname: 'node-b', gpus: [gpu(0, 'b')] });
    expect([a.ip, b.ip]).to.deep.equal(['127.0.1.1', '127.0.1.2']);
    expect(a.url).to.equal(`http://127.0.1.1:${fleet.port}/metrics`);
    expect(b.url).to.equal(`http://127.0.1.2:${fleet.port}/metrics`);
    const [fromA, fromB] = await Promise.all([get(a.url), get(b.url)]);
    expect(uuidsIn(fromA.body)).to.deep.equal([gpu(0, 'a').uuid, gpu(1, 'a').uuid]);
    expect(uuidsIn(fromB.body)).to.deep.equal([gpu(0, 'b').uuid]);
    expect(fromB.body.toString()).to.include('hostname="node-b"');
    expect(fleet.get('node-a')).to.equal(a);
    expect(fleet.list().map((e) => e.hostname)).to.deep.equal(['node-a', 'node-b']);
  });

  it('answers with the exposition content type and 404 on other paths, counting only scrapes', async () => {
    const a = await fleet.add(eightGpuNode('node-a'));
    const scrape = await get(a.url, { headers: { 'user-agent': 'gpu-capacity-api/test' } });
    expect(scrape.status).to.equal(200);
    expect(scrape.headers['content-type']).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(scrape.body.toString()).to.equal(a.render());
    const missing = await get(`http://${a.ip}:${fleet.port}/other`);
    expect(missing.status).to.equal(404);
    expect(a.requests).to.equal(1);
    expect(a.lastRequestHeaders).to.include({ 'user-agent': 'gpu-capacity-api/test' });
  });

  it('gzips the body only when the client accepts gzip', async () => {
    const a = await fleet.add(eightGpuNode('node-a'));
    const zipped = await get(a.url, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(zipped.body).toString()).to.equal(a.render());
    expect(zipped.body.length).to.be.lessThan(a.render().length / 3);
    const refused = await get(a.url, { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(refused.headers['content-encoding']).to.equal(undefined);
    expect(refused.body.toString()).to.equal(a.render());
  });

  it('keeps the connection alive between scrapes', async () => {
    const a = await fleet.add(eightGpuNode('node-a'));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await get(a.url, { agent })).reusedSocket).to.be.false;
      expect((await get(a.url, { agent })).reusedSocket).to.be.true;
    } finally {
      agent.destroy();
    }
  });

  it('serves the values, pods and GPUs a test sets between scrapes', async () => {
    const a = await fleet.add({ hostname: 'node-a', gpus: [gpu(0), { ...gpu(1), mig: [{ profile: '1g.10gb', instanceId: 13 }] }] });
    a.setValues(gpu(0).uuid, { DCGM_FI_DEV_GPU_UTIL: 87 });
    a.setValues(gpu(0).uuid, { DCGM_FI_DEV_GPU_TEMP: 66 });
    a.assignPod(gpu(0).uuid, { pod: 'train-0', namespace: 'ml', container: 'main' });
    a.assignPod(gpu(1).uuid, { pod: 'infer-0', namespace: 'serving' }, { migInstanceId: 13 });
    a.setValues(gpu(1).uuid, { DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.5 }, { migInstanceId: 13 });
    const families = parsePrometheus((await get(a.url)).body.toString());
    const metric = (name: string, uuid: string, instance?: string): PromFamily['metrics'][number] | undefined =>
      families.find((f) => f.name === name)?.metrics.find((m) => m.labels?.UUID === uuid && m.labels.GPU_I_ID === instance);
    expect(metric('DCGM_FI_DEV_GPU_UTIL', gpu(0).uuid)).to.deep.include({ value: '87' });
    expect(metric('DCGM_FI_DEV_GPU_TEMP', gpu(0).uuid)?.value).to.equal('66');
    expect(metric('DCGM_FI_DEV_GPU_UTIL', gpu(0).uuid)?.labels).to.include({ pod: 'train-0', namespace: 'ml', container: 'main' });
    expect(metric('DCGM_FI_PROF_GR_ENGINE_ACTIVE', gpu(1).uuid, '13')).to.deep.include({ value: '0.500000' });
    expect(metric('DCGM_FI_PROF_GR_ENGINE_ACTIVE', gpu(1).uuid, '13')?.labels).to.include({ pod: 'infer-0', namespace: 'serving' });

    a.assignPod(gpu(0).uuid, undefined);
    a.setGpus([gpu(5)]);
    expect(uuidsIn((await get(a.url)).body)).to.deep.equal([gpu(5).uuid]);
    expect(a.snapshot().gpus).to.deep.equal([gpu(5)]);
  });

  it('refuses to change an unknown GPU, and a pod on a MIG parent, with stable codes', async () => {
    const a = await fleet.add({ hostname: 'node-a', gpus: [{ ...gpu(0), mig: [{ profile: '1g.10gb', instanceId: 13 }] }] });
    expect(() => a.setValues('GPU-missing', { DCGM_FI_DEV_GPU_UTIL: 1 })).to.throw('Cannot find GPU "GPU-missing"').with.property('code', 'SIM_UNKNOWN_GPU');
    expect(() => a.setValues(gpu(0).uuid, {}, { migInstanceId: 7 })).to.throw('MIG instance 7').with.property('code', 'SIM_UNKNOWN_GPU');
    expect(() => a.assignPod(gpu(0).uuid, { pod: 'p', namespace: 'n' })).to.throw('MIG-partitioned').with.property('code', 'SIM_MIG_PARENT_POD');
  });

  it('copies the node it is given, so mutating the caller object changes nothing', async () => {
    const node = eightGpuNode('node-a');
    const a = await fleet.add(node);
    const before = a.render();
    node.gpus[0] = gpu(42);
    expect(a.render()).to.equal(before);
  });

  it('remove stops one exporter: its address refuses connections while the others answer', async () => {
    const a = await fleet.add(eightGpuNode('node-a'));
    const b = await fleet.add(eightGpuNode('node-b'));
    expect(await fleet.remove('node-a')).to.be.true;
    expect(await fleet.remove('node-a')).to.be.false;
    expect(await failure(get(a.url))).to.equal('ECONNREFUSED');
    expect((await get(b.url)).status).to.equal(200);
    expect(fleet.get('node-a')).to.equal(undefined);
    const c = await fleet.add(eightGpuNode('node-a'));
    expect(c.ip).to.equal('127.0.1.3');
  });

  it('rejects a second exporter with the same hostname, even when both are added at once', async () => {
    const results = await Promise.allSettled([fleet.add(eightGpuNode('node-a')), fleet.add(eightGpuNode('node-a'))]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).to.have.property('code', 'SIM_DUPLICATE_NODE');
  });

  it('lets a second fleet use the same port on another address range', async () => {
    const other = await SimDcgmFleet.start({ port: fleet.port, ipBase: '127.0.200.1', path: '/custom' });
    try {
      const mine = await fleet.add(eightGpuNode('node-a'));
      const theirs = await other.add(eightGpuNode('node-z'));
      expect(theirs.url).to.equal(`http://127.0.200.1:${fleet.port}/custom`);
      expect((await get(theirs.url)).body.toString()).to.include('hostname="node-z"');
      expect((await get(mine.url)).body.toString()).to.include('hostname="node-a"');
    } finally {
      await other.close();
    }
  });

  it('starts 300 exporters, answers each and closes in reasonable time without leaking descriptors', async function () {
    this.timeout(60_000);
    const fdsBefore = openFds();
    const big = await SimDcgmFleet.start({ ipBase: '127.0.100.1' });
    const started = performance.now();
    const exporters = await Promise.all(Array.from({ length: 300 }, (_, i) => big.add(eightGpuNode(`gpu-node-${i}`))));
    const startMs = performance.now() - started;
    expect(new Set(exporters.map((e) => e.ip)).size).to.equal(300);
    // 254 addresses per third octet: the 300th is the 46th of 127.0.101.x.
    expect(exporters[299]?.ip).to.equal('127.0.101.46');
    // About one descriptor per listener (plus libuv's own), nothing per GPU.
    expect(openFds() - fdsBefore).to.be.within(300, 330);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = await Promise.all(exporters.map((e) => get(e.url, { agent, headers: { 'accept-encoding': 'gzip' } })));
      answers.forEach((answer, i) => expect(gunzipSync(answer.body).toString()).to.include(`hostname="gpu-node-${i}"`));
    } finally {
      agent.destroy();
    }
    const closing = performance.now();
    await big.close();
    const closeMs = performance.now() - closing;
    expect(startMs, 'start ms').to.be.lessThan(10_000);
    expect(closeMs, 'close ms').to.be.lessThan(5_000);
    // Sockets of a closed listener are released on the next tick of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(openFds() - fdsBefore).to.be.lessThan(10);
  });

  it('close() resolves promptly with a hung scrape in flight, and add() afterwards is refused', async () => {
    const a = await fleet.add(eightGpuNode('node-a'));
    a.fault({ kind: 'hang' });
    const hung = failure(get(a.url));
    await waitFor(() => a.requests === 1);
    const started = performance.now();
    await fleet.close();
    expect(performance.now() - started).to.be.lessThan(1000);
    expect(await hung).to.be.oneOf(['ECONNRESET', 'socket hang up']);
    await expectRejection(fleet.add(eightGpuNode('node-b')), 'SIM_FLEET_CLOSED');
  });
});

describe('simulated dcgm-exporter faults, as a node:http client sees them', () => {
  let fleet: SimDcgmFleet;
  let a: SimExporterHandle;
  beforeEach(async () => {
    fleet = await SimDcgmFleet.start({ ipBase: '127.0.50.1' });
    a = await fleet.add(eightGpuNode('node-a'));
  });
  afterEach(() => fleet.close());

  it('slow answers normally after the delay', async () => {
    a.fault({ kind: 'slow', delayMs: 300 });
    const answer = await get(a.url);
    expect(answer.status).to.equal(200);
    expect(answer.body.toString()).to.equal(a.render());
    expect(answer.ms).to.be.within(250, 5000);
  });

  it('slow waits on the injected delay and answers with the values current when it answers', async () => {
    const gates: (() => void)[] = [];
    const delay: Delay = (_ms, signal) =>
      new Promise((resolve, reject) => {
        gates.push(resolve);
        signal.addEventListener('abort', () => reject(signal.reason as Error));
      });
    const manual = await SimDcgmFleet.start({ ipBase: '127.0.60.1', delay });
    try {
      const e = await manual.add({ hostname: 'node-m', gpus: [gpu(0)] });
      e.fault({ kind: 'slow', delayMs: 60_000 });
      const pending = get(e.url);
      await waitFor(() => gates.length === 1);
      e.setValues(gpu(0).uuid, { DCGM_FI_DEV_GPU_UTIL: 12 });
      gates[0]?.();
      const util = parsePrometheus((await pending).body.toString()).find((f) => f.name === 'DCGM_FI_DEV_GPU_UTIL');
      expect(util?.metrics[0]?.value).to.equal('12');
    } finally {
      await manual.close();
    }
  });

  it('status answers with that status and an error text', async () => {
    a.fault({ kind: 'status', status: 500 });
    const answer = await get(a.url);
    expect(answer.status).to.equal(500);
    expect(answer.body.toString()).to.include('An error has occurred while serving metrics');
    expect(a.requests).to.equal(1);
  });

  it('garbage answers 200 with the metrics content type and bytes that are neither exposition text nor UTF-8', async () => {
    a.fault({ kind: 'garbage' });
    const answer = await get(a.url);
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
    expect(answer.body.toString('latin1')).to.include('<html>');
    expect(Buffer.from(answer.body.toString('utf8'), 'utf8').equals(answer.body)).to.be.false;
    expect(() => parsePrometheus(answer.body.toString())).to.throw();
  });

  for (const gzip of [false, true]) {
    it(`truncated ends the response normally with the body cut inside a label set${gzip ? ' (gzipped)' : ''}`, async () => {
      a.fault({ kind: 'truncated' });
      const answer = await get(a.url, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} });
      expect(answer.status).to.equal(200);
      expect(answer.capped).to.be.false;
      const text = (gzip ? gunzipSync(answer.body) : answer.body).toString();
      expect(a.render().startsWith(text)).to.be.true;
      expect(text.length).to.be.within(a.render().length / 3, (a.render().length * 2) / 3);
      const last = text.slice(text.lastIndexOf('\n') + 1);
      // No newline after the cut (a lenient parser, like the oracle, silently drops such a line).
      expect(last).to.include('{').and.not.include('}');
    });
  }

  it('hang never answers until the client aborts, and the exporter recovers when cleared', async () => {
    a.fault({ kind: 'hang' });
    const started = performance.now();
    expect(await failure(get(a.url, { timeoutMs: 300 }))).to.equal('CLIENT_TIMEOUT');
    expect(performance.now() - started).to.be.within(250, 5000);
    expect(a.requests).to.equal(1);
    a.fault(null);
    expect((await get(a.url)).status).to.equal(200);
  });

  it('reset resets the connection without an answer', async () => {
    a.fault({ kind: 'reset' });
    expect(await failure(get(a.url))).to.equal('ECONNRESET');
  });

  it('huge streams well-formed exposition text of exactly the given size, gzipped when asked', async () => {
    a.fault({ kind: 'huge', bytes: 200_000 });
    const plain = await get(a.url);
    expect(plain.body.length).to.equal(200_000);
    expect(plain.headers['content-length']).to.equal(undefined);
    const samples = parsePrometheus(plain.body.toString())[0]?.metrics ?? [];
    expect(samples.length).to.be.greaterThan(500);
    const zipped = await get(a.url, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).to.be.true;
  });

  it('huge lets a client that caps the body stop early, and can declare its length up front', async () => {
    a.fault({ kind: 'huge', bytes: 1024 ** 3, declareLength: true });
    const answer = await get(a.url, { maxBytes: 1024 ** 2 });
    expect(answer.headers['content-length']).to.equal(String(1024 ** 3));
    expect(answer.capped).to.be.true;
    expect(answer.body.length).to.be.within(1024 ** 2, 4 * 1024 ** 2);
    expect(answer.ms).to.be.lessThan(5000);
    a.fault(null);
    expect((await get(a.url)).status).to.equal(200);
  });

  it('close() resolves promptly with a slow scrape waiting', async () => {
    a.fault({ kind: 'slow', delayMs: 60_000 });
    const slow = failure(get(a.url));
    await waitFor(() => a.requests === 1);
    const started = performance.now();
    await fleet.close();
    expect(performance.now() - started).to.be.lessThan(1000);
    expect(await slow).to.be.oneOf(['ECONNRESET', 'socket hang up']);
  });
});

async function waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error('Condition did not hold in time');
    await sleep(5);
  }
}

async function expectRejection(promise: Promise<unknown>, code: string): Promise<void> {
  const outcome = await promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code,
  );
  expect(outcome).to.equal(code);
}
