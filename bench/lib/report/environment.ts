// What every results file records about where and when it was measured, and where it is written.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPO_DIR = join(BENCH_DIR, '..');
export const RESULTS_DIR = join(BENCH_DIR, 'results');

export interface Environment {
  machine: { cpuModel: string; cores: number; memoryBytes: number; platform: string; arch: string; kernel: string };
  node: string;
  gitCommit: string;
  /** sha256 (first 12 hex) of every file under src/: tells runs apart when src/ has uncommitted changes. */
  sourceDigest: string;
  timestamp: string;
  /** 1, 5 and 15 minute load averages when the run started: above ~0.5 another process shared the 2 cores. */
  loadAverageAtStart: number[];
  /** BENCH_SERVICE_ENV's settings, when an investigation set any. */
  serviceEnv?: Record<string, string>;
}

export function describeEnvironment(): Environment {
  const cores = cpus();
  return {
    machine: {
      cpuModel: cores[0]?.model.trim() ?? 'unknown',
      cores: cores.length,
      memoryBytes: totalmem(),
      platform: process.platform,
      arch: process.arch,
      kernel: release(),
    },
    node: process.version,
    gitCommit: gitCommit(),
    sourceDigest: sourceDigest(),
    timestamp: new Date().toISOString(),
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    ...(Object.keys(investigationEnv()).length === 0 ? {} : { serviceEnv: investigationEnv() }),
  };
}

/** HEAD's commit (read-only `git rev-parse`), or "uncommitted" when there is none or no git. */
function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'uncommitted';
  }
}

function sourceDigest(): string {
  const hash = createHash('sha256');
  const src = join(REPO_DIR, 'src');
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) hash.update(file.slice(src.length)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** Writes bench/results/<name>.json and returns its path. */
/**
 * Writes bench/results/NAME.json. The checkout's own path (a service's log names its folders) is
 * written as `.`: the results are committed, and say nothing of the machine's folders.
 */
export function writeResults(name: string, results: unknown): string {
  const path = join(RESULTS_DIR, `${name}.json`);
  mkdirSync(dirname(path), { recursive: true });
  const text = JSON.stringify(results, null, 2).split(REPO_DIR).join('.');
  writeFileSync(path, `${text}\n`);
  return path;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

/**
 * Settings of an investigation, from BENCH_SERVICE_ENV (`GPUCAP_DECODE_WORKER=false,GPUCAP_…=…`):
 * applied to every service a bench starts, after the bench's own, and recorded in its results
 * (environment.ts) so that a figure taken with them is never mistaken for the defaults'.
 */
export function investigationEnv(): Record<string, string> {
  const text = process.env['BENCH_SERVICE_ENV'];
  if (text === undefined || text.trim() === '') return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0 || !pair.startsWith('GPUCAP_')) throw new Error(`BENCH_SERVICE_ENV: expected GPUCAP_NAME=value pairs separated by commas, got "${pair}"`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1)];
    }),
  );
}
