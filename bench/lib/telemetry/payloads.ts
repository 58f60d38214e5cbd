// Exporter payloads for loading history fast: a node is rendered once by the simulator
// (renderDcgmMetrics, dcgm-exporter 4.x labels) with only the seven fields the service reads, then
// each payload is that text with new values in place: what the service parses is exactly what a
// scrape would bring, at a few microseconds per payload instead of a full render.
import { FIELDS } from '../../../sim/dcgm-exporter/fields.js';
import { renderDcgmMetrics } from '../../../sim/dcgm-exporter/render.js';
import { READ_FIELDS as SERVICE_READ_FIELDS } from '../../../src/telemetry/scrape/dcgm-readings.js';
import type { DcgmField, FieldValues, SimNodeGpus } from '../../../sim/dcgm-exporter/types.js';

// The fields the service reads, in the order of the value tuples below.
const READ_FIELDS: readonly DcgmField[] = SERVICE_READ_FIELDS;

/** Explicitly undefined values: the simulator leaves these fields out of the payload. */
const UNREAD: FieldValues = Object.fromEntries(
  FIELDS.filter((f) => !(READ_FIELDS as readonly string[]).includes(f.name)).map((f) => [f.name, undefined]),
);

/** One GPU's values as the exporter prints them, by READ_FIELDS position. */
export type GpuValueTexts = readonly string[];

export class PayloadTemplate {
  /** Text before each sample's value (a comment line is all prefix); -1 marks a comment line. */
  readonly #prefixes: string[] = [];
  readonly #fields: number[] = [];
  readonly #gpus: number[] = [];
  readonly gpuCount: number;

  constructor(node: SimNodeGpus) {
    const text = renderDcgmMetrics({ hostname: node.hostname, gpus: node.gpus.map((gpu) => ({ ...gpu, values: { ...UNREAD, ...gpu.values } })) });
    this.gpuCount = node.gpus.length;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('#')) {
        this.#push(`${line}\n`, -1, -1);
        continue;
      }
      const name = line.slice(0, line.indexOf('{'));
      const field = (READ_FIELDS as readonly string[]).indexOf(name);
      const gpu = Number(/[{,]gpu="(\d+)"/.exec(line)?.[1] ?? NaN);
      if (field < 0 || !Number.isInteger(gpu)) throw new Error(`Cannot template the simulator's line "${line.slice(0, 80)}": unexpected field or no gpu label`);
      this.#push(line.slice(0, line.lastIndexOf(' ') + 1), field, gpu);
    }
  }

  /** The payload with `values[gpu index][field position]` as each sample's value. */
  render(values: readonly GpuValueTexts[]): string {
    let text = '';
    for (let i = 0; i < this.#prefixes.length; i += 1) {
      const field = this.#fields[i] ?? -1;
      text += this.#prefixes[i];
      if (field >= 0) text += `${values[this.#gpus[i] ?? 0]?.[field] ?? 'NaN'}\n`;
    }
    return text;
  }

  #push(prefix: string, field: number, gpu: number): void {
    this.#prefixes.push(prefix);
    this.#fields.push(field);
    this.#gpus.push(gpu);
  }
}

const FB_TOTAL_MIB = 81_559;

/** The texts that depend on utilization only (power also on the GPU, by 5 offsets): formatted once. */
const BY_UTILIZATION = Array.from({ length: 101 }, (_, util) => ({
  util: String(util),
  copy: String(Math.round(util * 0.45)),
  temp: String(35 + Math.round(util * 0.4)),
  power: Array.from({ length: 5 }, (_, k) => (90 + util * 6 + k * 3).toFixed(6)),
  engine: ((util / 100) * 0.93).toFixed(6),
}));

/** Framebuffer used and free of each GPU: constant over time. */
const framebuffer: (readonly [string, string])[] = [];

/**
 * Second-to-second variation on top of the slow wave, as a real GPU shows between two scrapes:
 * deterministic by GPU and whole second of `time`, so two scrapers reading the same GPU a few seconds
 * apart get different values, and the same second gives the same values on every run.
 */
export interface ValueJitter {
  /** Utilization points added, uniformly within ± this. */
  utilizationPoints: number;
  /** Framebuffer MiB moved from free to used (or back), uniformly within ± this. */
  framebufferMib: number;
}

/** A number in [-1, 1) from a GPU, a whole second and a stream (0: utilization, 1: framebuffer). */
function noise(gpu: number, second: number, stream: number): number {
  let h = Math.imul(gpu ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(second | 0, 0xc2b2ae35) ^ Math.imul(stream + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 2 ** 31 - 1;
}

/**
 * Plausible values of one GPU at `time` (s), by READ_FIELDS position: utilization around its
 * workload's level (30–94 %, by workload), ±8 points over a 3-hour wave that differs by GPU; the rest
 * follows from it. Every text comes from a table, so loading a day of history formats no numbers.
 * With `jitter`, utilization and framebuffer also move from second to second (formatting the
 * framebuffer's numbers each time).
 */
export function gpuValueTexts(gpu: number, workloadOrdinal: number, time: number, jitter?: ValueJitter): GpuValueTexts {
  const level = 30 + ((workloadOrdinal * 53) % 65);
  const wobble = jitter === undefined ? 0 : jitter.utilizationPoints * noise(gpu, Math.floor(time), 0);
  const util = Math.max(0, Math.min(100, Math.round(level + 8 * Math.sin(time / 1719 + gpu) + wobble)));
  const row = BY_UTILIZATION[util];
  if (row === undefined) throw new Error(`No value texts for utilization ${util}`);
  let fb = framebuffer[gpu];
  if (fb === undefined) {
    const used = 30_000 + ((gpu * 7_919) % 40_000);
    framebuffer[gpu] = fb = [String(used), String(FB_TOTAL_MIB - used)];
  }
  if (jitter !== undefined) {
    const used = Number(fb[0]) + Math.round(jitter.framebufferMib * noise(gpu, Math.floor(time), 1));
    fb = [String(used), String(FB_TOTAL_MIB - used)];
  }
  return [row.util, row.copy, fb[0], fb[1], row.temp, row.power[gpu % 5] ?? '0', row.engine];
}
