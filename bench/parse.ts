// Benchmark of the exposition parser (src/telemetry/scrape/exposition-parser.ts), in-process, against the npm
// package parse-prometheus-text-format on the same text. Payloads: a generated 8-GPU dcgm-exporter 4.x
// scrape (labels in the exporter's order, HELP/TYPE per family, 6 of 8 GPUs attributed to pods), then
// every exporter capture under test/fixtures/exporters. Per payload: warm-up of both parsers, then rounds that
// alternate them, at least 1 s per parser in all (--quick: 0.2 s); each figure is the median round, so
// a burst of load from another process moves it less. MB/s, samples/s, ns per sample and the speed
// ratio; also the time of a plain charCodeAt loop, to compare machines. Prints figures and writes
// bench/results/parse[.quick].json. It never asserts speed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { parseExposition } from '../src/telemetry/scrape/exposition-parser.js';
import { describeEnvironment, formatBytes, REPO_DIR, writeResults } from './lib/report/environment.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { fixed, isEntryPoint, round } from './lib/report/format.js';
import { exporterCaptures } from '../test/fixtures/exporters/exporter-fixtures.js';

export const NAME = 'parse';

interface Settings {
  warmupSeconds: number;
  /** Each parser runs whole batches for at least this long per payload, over all rounds. */
  minSeconds: number;
  rounds: number;
}

const FULL: Settings = { warmupSeconds: 0.3, minSeconds: 1, rounds: 5 };
const QUICK: Settings = { warmupSeconds: 0.05, minSeconds: 0.2, rounds: 3 };

interface Payload {
  name: string;
  text: string;
}

export interface Throughput {
  iterations: number;
  seconds: number;
  /** Median over the rounds, as are the two rates. */
  nsPerSample: number;
  nsPerSampleByRound: number[];
  samplesPerSecond: number;
  megabytesPerSecond: number;
}

export interface PayloadResult {
  payload: string;
  bytes: number;
  lines: number;
  samples: number;
  oracleSamples: number;
  ours: Throughput;
  oracle: Throughput;
  /** Oracle time / our time for the same payload. */
  speedup: number;
}

/** Anything a parse returns goes here, so the JIT cannot drop the work as unused. */
let sink = 0;

export async function runParseBench(options: { quick: boolean; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  log(`${NAME}: warm-up ${settings.warmupSeconds} s, then ≥ ${settings.minSeconds} s per parser and payload in ${settings.rounds} alternating rounds${options.quick ? ' (quick)' : ''}; ` +
    `${environment.machine.cores} × ${environment.machine.cpuModel}, ${formatBytes(environment.machine.memoryBytes)}, Node ${environment.node}`);
  const [load1] = environment.loadAverageAtStart;
  if (load1 !== undefined && load1 > 1) log(`!!! WARNING: load average ${load1} before the start: other processes are busy and the figures will be noisy`);

  const reference = referenceLoop();
  // Through a Buffer, so that the generated text is one flat string, as a scrape's body is.
  const generated = Buffer.from(dcgmExporterPayload(8)).toString('utf8');
  const payloads: Payload[] = [{ name: 'dcgm-exporter 4.x, 8 GPUs (generated)', text: generated }, ...readFixtures()];
  const results: PayloadResult[] = [];
  const mismatches: string[] = [];
  for (const payload of payloads) {
    // Prometheus reads a fixture that the oracle does not (see forOracle): both parsers read the
    // adjusted text, so the comparison stays like for like.
    const text = forOracle(payload.text);
    const samples = parseExposition(text, () => undefined);
    const oracleSamples = countOracleSamples(text);
    if (samples !== oracleSamples) mismatches.push(`${payload.name}: ${samples} samples here, ${oracleSamples} from the oracle`);
    const bytes = Buffer.byteLength(text);
    const [ours, oracle] = measure([() => parseExposition(text, countingVisitor), () => parsePrometheusTextFormat(text).length], settings, bytes, samples);
    const result: PayloadResult = {
      payload: payload.name,
      bytes,
      lines: text.split('\n').length,
      samples,
      oracleSamples,
      ours,
      oracle,
      speedup: round(oracle.nsPerSample / ours.nsPerSample),
    };
    results.push(result);
    log(`  ${payload.name}: ${samples} samples, ${formatBytes(bytes)}; ours ${fixed(ours.nsPerSample)} ns/sample (${fixed(ours.megabytesPerSecond)} MB/s), ` +
      `parse-prometheus-text-format ${fixed(oracle.nsPerSample)} ns/sample (${fixed(oracle.megabytesPerSecond)} MB/s): ${fixed(result.speedup)}×`);
  }
  for (const mismatch of mismatches) log(`  !!! sample count differs: ${mismatch}`);

  const resultsFile = writeResults(options.quick ? `${NAME}.quick` : NAME, {
    bench: NAME,
    ...environment,
    parameters: {
      quick: options.quick,
      ...settings,
      oracle: `parse-prometheus-text-format ${oracleVersion()}`,
      visitor: 'ours: a visitor that adds up the values and label counts; oracle: builds its family objects',
      oracleText: 'both parsers read the text with "-" as text of a bare "# HELP name" and a final newline (the oracle rejects the one and drops the last sample without the other)',
    },
    referenceLoopNsPerChar: reference,
    results,
    mismatches,
    sink,
  });
  log(`${NAME}: results written to ${resultsFile}`);
  const main = results[0];
  return {
    name: NAME,
    resultsFile,
    requestErrors: 0,
    table: {
      header: ['payload', 'samples', 'KiB', 'ns/sample', 'MB/s', 'samples/s', 'oracle ns/sample', 'oracle MB/s', 'oracle samples/s', 'speed-up'],
      rows: results.map((r) => [
        r.payload,
        String(r.samples),
        (r.bytes / 1024).toFixed(1),
        fixed(r.ours.nsPerSample),
        fixed(r.ours.megabytesPerSecond),
        Math.round(r.ours.samplesPerSecond).toLocaleString('en-US'),
        fixed(r.oracle.nsPerSample),
        fixed(r.oracle.megabytesPerSecond),
        Math.round(r.oracle.samplesPerSecond).toLocaleString('en-US'),
        `${fixed(r.speedup)}×`,
      ]),
    },
    notes: [
      ...(main === undefined ? [] : [`${main.payload}: ${fixed(main.ours.nsPerSample)} ns/sample, ${fixed(main.speedup)}× parse-prometheus-text-format`]),
      'Oracle: parse-prometheus-text-format on the same text. Figures: median of alternating rounds.',
      `Machine reference: a plain charCodeAt loop takes ${reference} ns per char here (about 0.5-1 on a current laptop core).`,
      ...mismatches.map((m) => `!!! sample count differs: ${m}`),
    ],
  };
}

function countingVisitor(_name: string, labels: readonly string[], value: number): void {
  sink += labels.length + (value === value ? 0 : 1);
}

function countOracleSamples(text: string): number {
  let count = 0;
  for (const family of parsePrometheusTextFormat(text)) count += family.metrics.length;
  return count;
}

/**
 * Warm-up of every parser, then `rounds` rounds in which each runs batches of doubling size (up to 1024
 * parses, so the clock is read rarely) for its share of minSeconds, the parsers taking turns.
 */
function measure(parsers: ReadonlyArray<() => number>, settings: Settings, bytes: number, samples: number): Throughput[] {
  for (const parse of parsers) {
    const warmupEnd = performance.now() + settings.warmupSeconds * 1000;
    while (performance.now() < warmupEnd) sink += parse();
  }
  const roundMs = (settings.minSeconds * 1000) / settings.rounds;
  const runs = parsers.map(() => ({ iterations: 0, elapsedMs: 0, nsPerSample: [] as number[] }));
  for (let round = 0; round < settings.rounds; round += 1) {
    parsers.forEach((parse, index) => {
      let iterations = 0;
      let batch = 1;
      const started = performance.now();
      let elapsedMs = 0;
      while (elapsedMs < roundMs) {
        for (let i = 0; i < batch; i += 1) sink += parse();
        iterations += batch;
        elapsedMs = performance.now() - started;
        if (batch < 1024) batch *= 2;
      }
      const run = runs[index];
      if (run === undefined) return;
      run.iterations += iterations;
      run.elapsedMs += elapsedMs;
      run.nsPerSample.push((elapsedMs * 1e6) / (iterations * samples));
    });
  }
  return runs.map((run) => {
    const nsPerSample = median(run.nsPerSample);
    return {
      iterations: run.iterations,
      seconds: round(run.elapsedMs / 1000),
      nsPerSample: round(nsPerSample),
      nsPerSampleByRound: run.nsPerSample.map(round),
      samplesPerSecond: Math.round(1e9 / nsPerSample),
      megabytesPerSecond: round((bytes / samples / nsPerSample) * 1e3),
    };
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** ns per char of a plain charCodeAt sum over 1 MB, best of 5: how fast this machine runs such loops. */
function referenceLoop(): number {
  const text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0"} 42\n'.repeat(22_000);
  let best = Infinity;
  for (let round = 0; round < 5; round += 1) {
    const started = performance.now();
    let sum = 0;
    for (let i = 0; i < text.length; i += 1) sum += text.charCodeAt(i);
    best = Math.min(best, ((performance.now() - started) * 1e6) / text.length);
    sink += sum;
  }
  return round(best);
}

function readFixtures(): Payload[] {
  return exporterCaptures().map((capture) => ({ name: capture.name, text: readFileSync(capture.path, 'utf8') }));
}

/** The oracle rejects `# HELP name` without text and drops the last sample when no newline ends the text. */
function forOracle(text: string): string {
  const withHelp = text.replace(/^# HELP (\S+)[ \t]*$/gm, '# HELP $1 -');
  return withHelp.endsWith('\n') ? withHelp : `${withHelp}\n`;
}

/** The fields dcgm-exporter 4.x serves with its default counters plus the profiling (DCP) ones: [name, type, help, kind of value]. */
const DCGM_FIELDS: ReadonlyArray<readonly [string, 'gauge' | 'counter', string, 'int' | 'ratio' | 'watts' | 'big']> = [
  ['DCGM_FI_DEV_SM_CLOCK', 'gauge', 'SM clock frequency (in MHz).', 'int'],
  ['DCGM_FI_DEV_MEM_CLOCK', 'gauge', 'Memory clock frequency (in MHz).', 'int'],
  ['DCGM_FI_DEV_MEMORY_TEMP', 'gauge', 'Memory temperature (in C).', 'int'],
  ['DCGM_FI_DEV_GPU_TEMP', 'gauge', 'GPU temperature (in C).', 'int'],
  ['DCGM_FI_DEV_POWER_USAGE', 'gauge', 'Power draw (in W).', 'watts'],
  ['DCGM_FI_DEV_POWER_MGMT_LIMIT', 'gauge', 'Power management limit (in W).', 'watts'],
  ['DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 'counter', 'Total energy consumption since boot (in mJ).', 'big'],
  ['DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 'counter', 'Total number of PCIe retries.', 'int'],
  ['DCGM_FI_DEV_GPU_UTIL', 'gauge', 'GPU utilization (in %).', 'int'],
  ['DCGM_FI_DEV_MEM_COPY_UTIL', 'gauge', 'Memory utilization (in %).', 'int'],
  ['DCGM_FI_DEV_ENC_UTIL', 'gauge', 'Encoder utilization (in %).', 'int'],
  ['DCGM_FI_DEV_DEC_UTIL', 'gauge', 'Decoder utilization (in %).', 'int'],
  ['DCGM_FI_DEV_XID_ERRORS', 'gauge', 'Value of the last XID error encountered.', 'int'],
  ['DCGM_FI_DEV_FB_FREE', 'gauge', 'Frame buffer memory free (in MB).', 'int'],
  ['DCGM_FI_DEV_FB_USED', 'gauge', 'Frame buffer memory used (in MB).', 'int'],
  ['DCGM_FI_DEV_FB_RESERVED', 'gauge', 'Frame buffer memory reserved (in MB).', 'int'],
  ['DCGM_FI_DEV_FB_USED_PERCENT', 'gauge', 'Percentage used of Frame Buffer: Used/(Total - Reserved).', 'ratio'],
  ['DCGM_FI_DEV_CLOCK_THROTTLE_REASONS', 'gauge', 'Current clock throttle reasons.', 'int'],
  ['DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', 'counter', 'Total number of single-bit volatile ECC errors.', 'int'],
  ['DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'counter', 'Total number of double-bit volatile ECC errors.', 'int'],
  ['DCGM_FI_DEV_ECC_SBE_AGG_TOTAL', 'counter', 'Total number of single-bit persistent ECC errors.', 'int'],
  ['DCGM_FI_DEV_ECC_DBE_AGG_TOTAL', 'counter', 'Total number of double-bit persistent ECC errors.', 'int'],
  ['DCGM_FI_DEV_RETIRED_SBE', 'counter', 'Total number of retired pages due to single-bit errors.', 'int'],
  ['DCGM_FI_DEV_RETIRED_DBE', 'counter', 'Total number of retired pages due to double-bit errors.', 'int'],
  ['DCGM_FI_DEV_RETIRED_PENDING', 'counter', 'Total number of pages pending retirement.', 'int'],
  ['DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', 'counter', 'Number of remapped rows for uncorrectable errors', 'int'],
  ['DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', 'counter', 'Number of remapped rows for correctable errors', 'int'],
  ['DCGM_FI_DEV_ROW_REMAP_FAILURE', 'gauge', 'Whether remapping of rows has failed', 'int'],
  ['DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink flow-control CRC errors.', 'int'],
  ['DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink data CRC errors.', 'int'],
  ['DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink retries.', 'int'],
  ['DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink recovery errors.', 'int'],
  ['DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', 'counter', 'Total number of NVLink bandwidth counters for all lanes.', 'big'],
  ['DCGM_FI_DEV_VGPU_LICENSE_STATUS', 'gauge', 'vGPU License status', 'int'],
  ['DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'gauge', 'Ratio of time the graphics engine is active.', 'ratio'],
  ['DCGM_FI_PROF_SM_ACTIVE', 'gauge', 'The ratio of cycles an SM has at least 1 warp assigned.', 'ratio'],
  ['DCGM_FI_PROF_SM_OCCUPANCY', 'gauge', 'The ratio of number of warps resident on an SM.', 'ratio'],
  ['DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', 'gauge', 'Ratio of cycles the tensor (HMMA) pipe is active.', 'ratio'],
  ['DCGM_FI_PROF_DRAM_ACTIVE', 'gauge', 'Ratio of cycles the device memory interface is active sending or receiving data.', 'ratio'],
  ['DCGM_FI_PROF_PCIE_TX_BYTES', 'counter', 'The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.', 'big'],
  ['DCGM_FI_PROF_PCIE_RX_BYTES', 'counter', 'The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.', 'big'],
];

/**
 * A scrape of one node as dcgm-exporter 4.x renders it: per field a HELP and a TYPE line, then one
 * line per GPU with the labels in the exporter's order. Values are seeded, so every run parses the
 * same text.
 */
export function dcgmExporterPayload(gpus: number): string {
  const random = seeded(20_240_611);
  const labelSets: string[] = [];
  for (let gpu = 0; gpu < gpus; gpu += 1) {
    const uuid = `GPU-${hex(random, 8)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 12)}`;
    const labels = [
      `gpu="${gpu}"`,
      `UUID="${uuid}"`,
      `pci_bus_id="00000000:${(0x18 + gpu * 0x10).toString(16).toUpperCase()}:00.0"`,
      `device="nvidia${gpu}"`,
      'modelName="NVIDIA H100 80GB HBM3"',
      'Hostname="ip-10-42-17-203.ec2.internal"',
      'DCGM_FI_DRIVER_VERSION="550.127.08"',
    ];
    // Two idle GPUs: the exporter adds the pod attributes only to a GPU a pod holds.
    if (gpu < gpus - 2) labels.push(`pod="llm-finetune-7f9c8d-worker-${gpu >> 1}"`, 'namespace="team-research"', 'container="trainer"');
    labelSets.push(labels.join(','));
  }
  const lines: string[] = [];
  for (const [field, type, help, kind] of DCGM_FIELDS) {
    lines.push(`# HELP ${field} ${help}`, `# TYPE ${field} ${type}`);
    for (const labels of labelSets) lines.push(`${field}{${labels}} ${sampleValue(kind, random)}`);
  }
  return `${lines.join('\n')}\n`;
}

function sampleValue(kind: 'int' | 'ratio' | 'watts' | 'big', random: () => number): string {
  if (kind === 'ratio') return random().toFixed(6);
  if (kind === 'watts') return (60 + random() * 640).toFixed(6);
  if (kind === 'big') return String(Math.floor(random() * 1e12));
  return String(Math.floor(random() * 2000));
}

/** mulberry32: small and deterministic. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(random: () => number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += Math.floor(random() * 16).toString(16);
  return out;
}

function oracleVersion(): string {
  const manifest = JSON.parse(readFileSync(join(REPO_DIR, 'node_modules', 'parse-prometheus-text-format', 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  // `npx tsx bench/parse.ts [--quick]`
  runParseBench({ quick: process.argv.includes('--quick') }).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
