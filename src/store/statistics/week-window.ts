// Splits whole rollup days [firstDay, lastDay] (day-window.ts) into whole weeks, read from a weekly
// rollup (keyed by Monday), and at most two day ranges of the daily rollup that correct the weeks at
// the edges. Like a partial day, a partial week is either left out and its days inside added, or
// kept and its days outside subtracted, whichever reads fewer days: days after `now` count for
// almost nothing (only clock skew puts rows there), so the week that holds today is kept and its
// remaining days subtracted.
import { weekStartDay } from '../../domain/trend-interval.js';
import { DAY_MS } from '../sql/rollup-sql.js';

export interface DayRange {
  /** Both inclusive; empty when fromDay > toDay. */
  fromDay: number;
  toDay: number;
  sign: 1 | -1;
}

export interface WeekPlan {
  /** Mondays of the weekly rollup's rows to read, both inclusive; none when weekFrom > weekTo. */
  weekFrom: number;
  weekTo: number;
  /** Daily rollup rows to add or subtract: always two, an unused one empty. */
  days: [DayRange, DayRange];
}

const NONE: DayRange = { fromDay: 1, toDay: 0, sign: 1 };

export function planWeeks(firstDay: number, lastDay: number, now: number): WeekPlan {
  const dailyOnly = (): WeekPlan => ({ weekFrom: 1, weekTo: 0, days: [{ fromDay: firstDay, toDay: lastDay, sign: 1 }, NONE] });
  if (firstDay > lastDay) return { weekFrom: 1, weekTo: 0, days: [NONE, NONE] };
  const today = Math.floor(now / DAY_MS);
  // Days up to today weigh 1, later ones next to nothing; the fewer days breaks ties.
  const cost = (from: number, to: number) =>
    from > to ? 0 : Math.max(0, Math.min(to, today) - from + 1) + (to - from + 1) * 1e-6;
  const firstMonday = weekStartDay(firstDay);
  const lastMonday = weekStartDay(lastDay);
  const headOutside = cost(firstMonday, firstDay - 1);
  const tailOutside = cost(lastDay + 1, lastMonday + 6);
  if (firstMonday === lastMonday) {
    // One week: its row less the days around the window, or the days themselves.
    if (headOutside + tailOutside >= cost(firstDay, lastDay)) return dailyOnly();
    return {
      weekFrom: firstMonday,
      weekTo: firstMonday,
      days: [{ fromDay: firstMonday, toDay: firstDay - 1, sign: -1 }, { fromDay: lastDay + 1, toDay: lastMonday + 6, sign: -1 }],
    };
  }
  const keepHead = headOutside < cost(firstDay, firstMonday + 6);
  const keepTail = tailOutside < cost(lastMonday, lastDay);
  return {
    weekFrom: keepHead ? firstMonday : firstMonday + 7,
    weekTo: keepTail ? lastMonday : lastMonday - 7,
    days: [
      keepHead ? { fromDay: firstMonday, toDay: firstDay - 1, sign: -1 } : { fromDay: firstDay, toDay: firstMonday + 6, sign: 1 },
      keepTail ? { fromDay: lastDay + 1, toDay: lastMonday + 6, sign: -1 } : { fromDay: lastMonday, toDay: lastDay, sign: 1 },
    ],
  };
}
