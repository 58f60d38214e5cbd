// Flag values to API parameters, each checked with an error that says what was wrong.
import { usageError } from './cli-error.js';

const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** --since/--until: a duration back from now (90m, 24h, 7d) or a date or date-time the API takes. */
export function instantFlag(flag: string, value: string | undefined, now: number): string | undefined {
  if (value === undefined) return undefined;
  const duration = DURATION.exec(value);
  if (duration !== null) return new Date(now - Number(duration[1]) * (UNIT_MS[duration[2] ?? 's'] ?? 0)).toISOString();
  if (/^\d{4}-\d{2}-\d{2}(T.+)?$/.test(value)) return value;
  throw usageError(`--${flag} must be a duration back from now (90m, 24h, 7d) ` +
    `or a date (2026-11-01, 2026-11-01T09:00:00Z), not "${value}"`);
}

export function positiveInteger(flag: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw usageError(`--${flag} must be a whole number from 1 to ${max}, not "${value}"`);
  }
  return Number(value);
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw usageError(`--${flag} must be one of ${allowed.join(', ')}, not "${value}"`);
  return value as T;
}

/** --month: a UTC month as the API takes it (YYYY-MM); the current one when left out, as the console's Chargeback page. */
export function monthFlag(value: string | undefined, now: number): string {
  if (value === undefined) return new Date(now).toISOString().slice(0, 7);
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw usageError(`--month must be a month as YYYY-MM (2026-11), not "${value}"`);
  return value;
}
