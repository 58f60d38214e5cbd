// Kubernetes times (RFC 3339 strings or Dates) to the epoch milliseconds the service keeps.
import type { Timestamp } from '../../k8s/objects/k8s-types.js';

/** Epoch milliseconds of a Kubernetes time; null when absent or unparseable. */
export function timestampMs(value: Timestamp | null | undefined): number | null {
  if (value == null) return null;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** The latest of some optional times; null when none is known. */
export function latestMs(values: Iterable<number | null>): number | null {
  let latest: number | null = null;
  for (const value of values) {
    if (value !== null && (latest === null || value > latest)) latest = value;
  }
  return latest;
}
