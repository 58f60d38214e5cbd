// The five API metrics as the rings store them: fixed slots in METRIC_NAMES order, each value a
// 16-bit integer in a per-metric unit (0.01 % / 0.01 °C / 0.1 W). 16 bits instead of a 64-bit double
// is what keeps a GPU's 24 hours of history under 48 KiB at scrape intervals of 10 s and more (43 KiB
// at the default 15 s; the raw hour grows as the interval shrinks: 52 KiB at 5 s, 71 KiB at 2 s). The
// resolution lost is far below what the sensors report (DCGM's utilization is an integer percent, its
// power a watt with ~1 W accuracy).
import { METRIC_NAMES, type MetricName } from '../../domain/metrics.js';

export const METRIC_COUNT = METRIC_NAMES.length;

/** Slot of each metric in a value vector. */
export const METRIC_SLOT: Readonly<Record<MetricName, number>> = Object.freeze(
  Object.fromEntries(METRIC_NAMES.map((name, slot) => [name, slot])) as Record<MetricName, number>,
);

/** Stored units per reported unit, by slot: power in tenths of a watt (H100 SXM draws up to 700 W). */
export const METRIC_SCALE: readonly number[] = METRIC_NAMES.map((name) => (name === 'power_usage' ? 10 : 100));

/** A slot with no sample. */
export const MISSING = 0xffff;
const MAX_STORED = 0xfffe;

/** A reading in reported units → its stored integer; NaN (missing) → MISSING; clamped to 0..65534 units. */
export function encodeMetric(slot: number, value: number): number {
  if (Number.isNaN(value)) return MISSING;
  const stored = Math.round(value * (METRIC_SCALE[slot] ?? 1));
  return stored <= 0 ? 0 : stored >= MAX_STORED ? MAX_STORED : stored;
}

/** A stored integer → reported units. */
export function decodeMetric(slot: number, stored: number): number {
  return stored / (METRIC_SCALE[slot] ?? 1);
}
