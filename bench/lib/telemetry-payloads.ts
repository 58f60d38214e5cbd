// Exporter payloads for loading history fast: a node is rendered once by the simulator
// (renderDcgmMetrics, dcgm-exporter 4.x labels) with only the seven fields the service reads, then
// each payload is that text with new values in place: what the service parses is exactly what a
// scrape would bring, at a few microseconds per payload instead of a full render.
import { FIELDS } from '../../sim/dcgm-exporter/fields.js';
import { renderDcgmMetrics } from '../../sim/dcgm-exporter/render.js';
import { READ_FIELDS as SERVICE_READ_FIELDS } from '../../src/telemetry/dcgm-readings.js';
import type { DcgmField, FieldValues, SimNodeGpus } from '../../sim/dcgm-exporter/types.js';

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
 * Plausible values of one GPU at `time` (s), by READ_FIELDS position: utilization around its
 * workload's level (30–94 %, by workload), ±8 points over a 3-hour wave that differs by GPU; the rest
 * follows from it. Every text comes from a table, so loading a day of history formats no numbers.
 */
export function gpuValueTexts(gpu: number, workloadOrdinal: number, time: number): GpuValueTexts {
  const level = 30 + ((workloadOrdinal * 53) % 65);
  const util = Math.max(0, Math.min(100, Math.round(level + 8 * Math.sin(time / 1719 + gpu))));
  const row = BY_UTILIZATION[util];
  if (row === undefined) throw new Error(`No value texts for utilization ${util}`);
  let fb = framebuffer[gpu];
  if (fb === undefined) {
    const used = 30_000 + ((gpu * 7_919) % 40_000);
    framebuffer[gpu] = fb = [String(used), String(FB_TOTAL_MIB - used)];
  }
  return [row.util, row.copy, fb[0], fb[1], row.temp, row.power[gpu % 5] ?? '0', row.engine];
}
