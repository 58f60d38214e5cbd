// The sampler against real HTTP exporters (simulated), driven tick by tick.
import { expect } from 'chai';
import { SimDcgmFleet } from '../../../sim/dcgm-exporter/fleet.js';
import type { SimExporterHandle } from '../../../sim/dcgm-exporter/exporter.js';
import type { ExporterTarget } from '../../../src/telemetry/scrape/exporter-target.js';
import { createHttpScrape } from '../../../src/telemetry/scrape/http-scrape.js';
import { readDcgmPayload } from '../../../src/telemetry/scrape/dcgm-readings.js';
import { Sampler, type SamplerOptions } from '../../../src/telemetry/scrape/sampler.js';
import { waitFor } from '../../support/wait-for.js';

const silent = { info() {}, warn() {}, debug() {} };

function targetOf(exporter: SimExporterHandle): ExporterTarget {
  return { key: `c1/gpu-operator/${exporter.hostname}`, clusterId: 'c1', namespace: 'gpu-operator', pod: exporter.hostname, node: exporter.hostname, url: exporter.url };
}

describe('sampler', function () {
  this.timeout(20_000);
  let fleet: SimDcgmFleet;
  let hanging: SimExporterHandle;
  let healthy: SimExporterHandle;
  let sampler: Sampler | undefined;
  const ingested: string[] = [];
  const failures: { node: string; reason: string }[] = [];

  beforeEach(async () => {
    ingested.length = 0;
    failures.length = 0;
    fleet = await SimDcgmFleet.start();
    hanging = await fleet.add({ hostname: 'hanging', gpus: [{ index: 0, uuid: 'GPU-h' }] });
    healthy = await fleet.add({ hostname: 'healthy', gpus: [{ index: 0, uuid: 'GPU-1' }, { index: 1, uuid: 'GPU-2' }] });
  });
  afterEach(async () => {
    await fleet.close(); // ends the hung request, so stop() can settle
    await sampler?.stop();
  });

  function aSampler(options: Partial<SamplerOptions> = {}): Sampler {
    sampler = new Sampler({
      intervalMs: 60_000,
      concurrency: 4,
      clock: { now: () => Date.now() },
      delay: (_ms, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
      scrape: createHttpScrape({ timeoutMs: 5_000, maxBytes: 1 << 20 }),
      targets: () => [targetOf(hanging), targetOf(healthy)],
      ingest: (target, text) => {
        ingested.push(target.node);
        const payload = readDcgmPayload(text);
        return { samples: payload.samples, gpus: payload.readings.length, dropped: [] };
      },
      observer: { scraped() {}, failed: (target, failure) => failures.push({ node: target.node, reason: failure.reason }) },
      logger: silent,
      ...options,
    });
    return sampler;
  }

  it('ingests a healthy exporter while another hangs, without waiting for the hung one', async () => {
    hanging.fault({ kind: 'hang' });
    const s = aSampler();
    let settled = false;
    const tick = s.tick().then(() => (settled = true));
    await waitFor(async () => (ingested.includes('healthy') ? true : undefined), { what: 'the healthy exporter ingested', timeoutMs: 4_000 });
    expect(settled, 'the tick is still waiting for the hung exporter').to.equal(false);
    expect(s.statuses().find((e) => e.node === 'healthy')).to.include({ consecutiveFailures: 0, lastGpus: 2 });
    // A second tick while the first scrape still hangs: the healthy one again, the hung one skipped.
    await s.tick();
    expect(ingested.filter((n) => n === 'healthy')).to.have.length(2);
    expect(hanging.requests).to.equal(1);
    expect(settled).to.equal(false); // closing the fleet (afterEach) ends the hung request
    void tick;
  });

  it('fails a scrape that outlives the timeout as "timeout", and counts consecutive failures per exporter', async () => {
    hanging.fault({ kind: 'hang' });
    const s = aSampler({ scrape: createHttpScrape({ timeoutMs: 1_000, maxBytes: 1 << 20 }) });
    await s.tick();
    await s.tick();
    expect(failures).to.deep.equal([{ node: 'hanging', reason: 'timeout' }, { node: 'hanging', reason: 'timeout' }]);
    expect(s.statuses().find((e) => e.node === 'hanging')).to.deep.include({ consecutiveFailures: 2, failures: 2 });
    expect(s.failingEverywhere()).to.equal(false);
    hanging.fault(null);
    await s.tick();
    expect(s.statuses().find((e) => e.node === 'hanging'), JSON.stringify(failures)).to.deep.include({ consecutiveFailures: 0, failures: 2 });
  });

  it('says it is failing everywhere only when every exporter failed its last scrape', async () => {
    hanging.fault({ kind: 'status', status: 503 });
    healthy.fault({ kind: 'status', status: 500 });
    const s = aSampler();
    await s.tick();
    expect(s.failingEverywhere()).to.equal(true);
    healthy.fault(null);
    await s.tick();
    expect(s.failingEverywhere()).to.equal(false);
  });

  it('refuses a body over the size cap, and asks for gzip', async () => {
    healthy.fault({ kind: 'huge', bytes: 4 << 20 });
    const s = aSampler();
    await s.tick();
    expect(failures).to.deep.include({ node: 'healthy', reason: 'too_large' });
    expect(healthy.lastRequestHeaders?.['accept-encoding']).to.equal('gzip');
  });

  it('drops the status of an exporter that is no longer a target', async () => {
    let targets = [targetOf(hanging), targetOf(healthy)];
    const s = aSampler({ targets: () => targets });
    await s.tick();
    targets = [targetOf(healthy)];
    await s.tick();
    expect(s.statuses().map((e) => e.node)).to.deep.equal(['healthy']);
  });

  it('tells the tick\'s exporters to beforeTick before it scrapes any of them', async () => {
    const seen: { targets: string[]; ingestedSoFar: number }[] = [];
    const s = aSampler({
      targets: () => [targetOf(healthy)],
      beforeTick: (targets) => seen.push({ targets: targets.map((t) => t.node), ingestedSoFar: ingested.length }),
    });
    await s.tick();
    await s.tick();
    expect(seen).to.deep.equal([{ targets: ['healthy'], ingestedSoFar: 0 }, { targets: ['healthy'], ingestedSoFar: 1 }]);
  });

  it('ticks at a fixed rate from start() until stop()', async () => {
    const delays: number[] = [];
    let ticks = 0;
    const s = aSampler({
      intervalMs: 1000,
      delay: async (ms) => {
        delays.push(ms);
        if (delays.length >= 3) void s.stop();
        await new Promise((resolve) => setImmediate(resolve));
      },
      afterTick: () => (ticks += 1),
    });
    s.start();
    await waitFor(async () => (delays.length >= 3 ? true : undefined), { what: 'three waits', timeoutMs: 4_000 });
    for (const ms of delays) expect(ms).to.be.within(0, 1000);
    await s.stop();
    expect(ticks).to.be.at.least(1);
  });

  it('reports its loop: one tick counted per wait, stopped after stop()', async () => {
    let waits = 0;
    let release: () => void = () => undefined;
    const s = aSampler({
      targets: () => [],
      delay: (_ms, signal) => {
        waits += 1;
        return new Promise<void>((resolve) => {
          release = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
      },
    });
    expect(s.loopStatus()).to.deep.equal({ ticks: 0, stopped: false, ended: null });
    s.start();
    await waitFor(() => waits === 1, { what: 'the first wait', timeoutMs: 2_000 });
    expect(s.loopStatus()).to.deep.equal({ ticks: 1, stopped: false, ended: null });
    release();
    await waitFor(() => waits === 2, { what: 'the second wait', timeoutMs: 2_000 });
    expect(s.loopStatus().ticks).to.equal(2);
    await s.stop();
    expect(s.loopStatus()).to.deep.equal({ ticks: 2, stopped: true, ended: null });
  });

  it('reports a loop that crashed (a wait that threw), instead of going quiet', async () => {
    const warnings: string[] = [];
    const s = aSampler({
      targets: () => [],
      delay: () => Promise.reject(new Error('timer broke')),
      logger: { ...silent, warn: (_obj, msg) => void warnings.push(msg ?? '') },
    });
    s.start();
    await waitFor(() => s.loopStatus().ended !== null, { what: 'the loop to end', timeoutMs: 2_000 });
    expect(s.loopStatus()).to.deep.equal({ ticks: 1, stopped: false, ended: 'timer broke' });
    expect(warnings).to.include('sampler loop crashed: no more scrapes until the process restarts');
  });
});
