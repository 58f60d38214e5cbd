// Part 2 of the telemetry benchmark: what 24 hours of history cost per GPU. A GpuFleet (the rings
// alone, no service) takes 24 h of samples for every GPU, each GPU's in time order: the last hour at the
// production scrape interval (the raw ring is full), the 23 h before it at one sample a minute. The
// rings are allocated whole when a GPU is first seen, so one sample per minute bucket writes every
// page the tiers hold, at a quarter of the samples (the full-rate fill took 90 s of the run's 15
// minutes). The 23 h go in a block of GPUs at a time, which keeps their rings in the CPU's cache (the
// sampler's order, every GPU at t then every GPU at t + 15 s, touches 17 cold cache lines per sample
// and took nearly three minutes for 8,000 GPUs); the last hour goes in the sampler's order, and both
// rates are reported. Owners change: each node's 8 GPUs pass from workload to workload every 2–8
// hours, with 5 idle minutes in between, so buckets restart and workload links come and go.
//
// Memory is read from the process (after a full GC when one can be forced): ArrayBuffers (the rings,
// outside the V8 heap), the heap (the JS objects around them: typed-array views, map entries, owner
// ids) and RSS, each as a delta over the fill divided by the GPUs, next to the fleet's own count.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { GpuFleet, type GpuIdentity } from '../../../src/telemetry/rings/gpu-fleet.js';
import { rawSlotsFor } from '../../../src/telemetry/rings/gpu-rings.js';
import { METRIC_COUNT } from '../../../src/telemetry/rings/metric-codec.js';
import { REPO_DIR } from '../report/environment.js';
import { GPUS_PER_NODE } from './cluster.js';

const DAY_SECONDS = 86_400;
const HOUR_SECONDS = 3_600;
const IDLE_SECONDS = 300;
/** One sample per minute bucket before the last hour. */
const OLDER_STEP_SECONDS = 60;
/** Nodes filled together: 2 nodes' rings (16 × 44 KiB) fit in one core's L2 cache. */
const BLOCK_NODES = 2;

export interface RingSettings {
  gpus: number;
  intervalSeconds: number;
}

export interface RingResult {
  gpus: number;
  intervalSeconds: number;
  rawSlots: number;
  samplesPerGpu: number;
  samples: number;
  fillSeconds: number;
  samplesPerSecond: number;
  /** record() rate over the first 23 h, filled a block of GPUs at a time (their rings stay in the CPU's cache). */
  blockSamplesPerSecond: number;
  /** record() rate over the last hour, every GPU per time step as the sampler delivers them (each ring cold). */
  sweepSamplesPerSecond: number;
  /** Workloads that owned a GPU at some point of the 24 h. */
  workloadsSeen: number;
  fleet: { gpus: number; attributedGpus: number; workloads: number; ringBytes: number };
  perGpu: {
    /** fleet.stats().ringBytes / GPUs: the rings' own size. */
    ringBytes: number;
    arrayBuffersBytes: number;
    heapBytes: number;
    rssBytes: number;
  };
  /** How the GC was forced before each reading: 'global.gc' (node --expose-gc), 'v8 flag' (set at run time), or 'none'. */
  gc: 'global.gc' | 'v8 flag' | 'none';
  before: NodeJS.MemoryUsage;
  after: NodeJS.MemoryUsage;
}

export function measureRings(settings: RingSettings, log: (line: string) => void): RingResult {
  const { gpus, intervalSeconds } = settings;
  const { gc, how } = findGc();
  // Everything the loop needs exists before the first reading, so the deltas hold only the fleet.
  const identities: GpuIdentity[] = Array.from({ length: gpus }, (_, g) => ({
    key: `GPU-${g.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`,
    clusterId: 'bench',
    hostname: `gpu-node-${Math.floor(g / GPUS_PER_NODE)}`,
    modelName: 'NVIDIA H100 80GB HBM3',
  }));
  const nodes = Math.ceil(gpus / GPUS_PER_NODE);
  const owners = Array.from({ length: nodes }, (_, n) => new NodeOwners(n));
  const stored = new Uint16Array(METRIC_COUNT);
  const sample: { time: number; stored: Uint16Array; workloadId: string | undefined } = { time: 0, stored, workloadId: undefined };
  const start = Math.floor(Date.now() / 1000 / DAY_SECONDS) * DAY_SECONDS - DAY_SECONDS;
  const rawSlots = rawSlotsFor(intervalSeconds);

  const before = settle(gc);
  const fleet = new GpuFleet({ rawSlots });
  const record = (t: number, nodeFrom: number, nodeTo: number): void => {
    const step = (t - start) / intervalSeconds;
    for (let n = nodeFrom; n < nodeTo; n += 1) {
      sample.workloadId = owners[n]?.at(t);
      const last = Math.min(gpus, (n + 1) * GPUS_PER_NODE);
      for (let g = n * GPUS_PER_NODE; g < last; g += 1) {
        // Stored units (0.01 %, 0.01 °C, 0.1 W): values that move with time and differ between GPUs.
        const wave = (g * 37 + step * 11) % 4000;
        stored[0] = 5000 + wave;
        stored[1] = 3000 + (wave >> 1);
        stored[2] = 4500 + (wave >> 2);
        stored[3] = 3000 + wave;
        stored[4] = 4000 + wave;
        sample.time = t;
        const identity = identities[g];
        if (identity !== undefined) fleet.record(identity, sample);
      }
    }
  };
  const sweepFrom = start + DAY_SECONDS - HOUR_SECONDS;
  let began = performance.now();
  for (let n = 0; n < nodes; n += BLOCK_NODES) {
    for (let t = start; t < sweepFrom; t += OLDER_STEP_SECONDS) record(t, n, Math.min(nodes, n + BLOCK_NODES));
    if (n > 0 && (n / BLOCK_NODES) % Math.ceil(nodes / BLOCK_NODES / 4) === 0) log(`  rings: ${n * GPUS_PER_NODE} of ${gpus} GPUs hold 23 h`);
  }
  const blockSeconds = (performance.now() - began) / 1000;
  const blockSamples = Math.ceil((sweepFrom - start) / OLDER_STEP_SECONDS) * gpus;
  began = performance.now();
  for (let t = sweepFrom; t < start + DAY_SECONDS; t += intervalSeconds) record(t, 0, nodes);
  const sweepSeconds = (performance.now() - began) / 1000;
  const sweepSamples = (HOUR_SECONDS / intervalSeconds) * gpus;
  const samples = blockSamples + sweepSamples;
  const fillSeconds = blockSeconds + sweepSeconds;
  const after = settle(gc);
  const stats = fleet.stats();
  const perGpu = (bytes: number) => Math.round(bytes / gpus);
  return {
    gpus,
    intervalSeconds,
    rawSlots,
    samplesPerGpu: samples / gpus,
    samples,
    fillSeconds: Math.round(fillSeconds * 100) / 100,
    samplesPerSecond: Math.round(samples / fillSeconds),
    blockSamplesPerSecond: Math.round(blockSamples / blockSeconds),
    sweepSamplesPerSecond: Math.round(sweepSamples / sweepSeconds),
    workloadsSeen: owners.reduce((sum, o) => sum + o.generations.size, 0),
    fleet: stats,
    perGpu: {
      ringBytes: perGpu(stats.ringBytes),
      arrayBuffersBytes: perGpu(after.arrayBuffers - before.arrayBuffers),
      heapBytes: perGpu(after.heapUsed - before.heapUsed),
      rssBytes: perGpu(after.rss - before.rss),
    },
    gc: how,
    before,
    after,
  };
}

/** One node's owners over time: workloads of 2–8 h (by node), 5 idle minutes between two. */
class NodeOwners {
  readonly #node: number;
  readonly #span: number;
  readonly #offset: number;
  readonly generations = new Set<number>();
  #generation = -1;
  #id = '';

  constructor(node: number) {
    this.#node = node;
    this.#span = (2 + (node % 7)) * HOUR_SECONDS;
    this.#offset = (node * 1237) % this.#span;
  }

  at(time: number): string | undefined {
    const shifted = time + this.#offset;
    if (shifted % this.#span < IDLE_SECONDS) return undefined;
    const generation = Math.floor(shifted / this.#span);
    if (generation !== this.#generation) {
      this.#generation = generation;
      this.#id = `node-${this.#node}-workload-${generation}`;
      this.generations.add(generation);
    }
    return this.#id;
  }
}

/** Memory after a full GC (twice: the first may leave weak and finalized objects for the second). */
function settle(gc: (() => void) | null): NodeJS.MemoryUsage {
  gc?.();
  gc?.();
  return process.memoryUsage();
}

/** global.gc when node runs with --expose-gc; else the flag set at run time and gc fetched from a fresh context. */
export function findGc(): { gc: (() => void) | null; how: RingResult['gc'] } {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return { gc: exposed as () => void, how: 'global.gc' };
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc === 'function') return { gc: gc as () => void, how: 'v8 flag' };
  } catch {
    // Not every runtime lets the flag change after start: the readings are then without a forced GC.
  }
  return { gc: null, how: 'none' };
}

/** measureRings in a child process (rings-process.ts), with a GC it can force; its log lines are passed on. */
export async function measureRingsInChild(settings: RingSettings, log: (line: string) => void): Promise<RingResult> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./rings-process.ts', import.meta.url)), String(settings.gpus), String(settings.intervalSeconds)], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (!line.startsWith('npm warn')) log(line);
  });
  // 'close', not 'exit': the child's stdout may still hold the result when it exits.
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`The rings process exited with ${code}`);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as RingResult;
}
