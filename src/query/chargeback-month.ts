// The month a chargeback covers (docs/capacity.md, "Chargeback"): a UTC calendar month, from its first
// instant to the next month's, or up to now while it is the current one, which is then not complete.
// A month that has not begun has nothing to bill, which is a mistake of the caller's, not an empty statement.
import { validationError } from '../domain/errors.js';
import { startOfUtcMonth } from './stats-range.js';

/** `YYYY-MM`, 1970 to 2099: nothing was indexed before the epoch, and a later month is long to come. */
export const CHARGEBACK_MONTH_PATTERN = '^(19[7-9]\\d|20\\d\\d)-(0[1-9]|1[0-2])$';

export interface ChargebackMonth {
  /** `YYYY-MM`, as asked. */
  month: string;
  from: number;
  /** Exclusive: the next month's first instant, or now in the current month. */
  to: number;
  /** The month has ended: its figures no longer change but for late data and re-pricing. */
  complete: boolean;
}

/** `month` matches CHARGEBACK_MONTH_PATTERN (the query schema's). */
export function chargebackMonth(month: string, now: number): ChargebackMonth {
  const [year, number] = month.split('-').map(Number) as [number, number];
  const from = Date.UTC(year, number - 1, 1);
  const next = Date.UTC(year, number, 1);
  if (from > now) {
    const current = new Date(startOfUtcMonth(now)).toISOString().slice(0, 7);
    const message = `must not be after the current month (${current}), got "${month}"`;
    throw validationError([{ location: 'query', field: 'month', message }]);
  }
  return { month, from, to: Math.min(next, now), complete: now >= next };
}

