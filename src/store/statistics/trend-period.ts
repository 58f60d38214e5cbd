// The numbering of src/domain/trend-interval.ts in SQL, from a rollup's day number or from a row's
// time in ms. Both are non-negative integers, so integer division floors on both backends.
import { DAY_MS, HOUR_MS, WEEK_OFFSET_DAYS, type TrendInterval } from '../../domain/trend-interval.js';

export function intervalSql(interval: TrendInterval, of: { day: string } | { ms: string }): string {
  const day = 'day' in of ? of.day : `${of.ms} / ${DAY_MS}`;
  if (interval === 'week') return `((${day}) + ${WEEK_OFFSET_DAYS}) / 7`;
  if (interval === 'day') return day;
  if ('day' in of) throw new Error('an hour cannot be read from a day number');
  return `${of.ms} / ${HOUR_MS}`;
}
