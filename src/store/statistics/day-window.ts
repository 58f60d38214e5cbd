// Splits a window of submission times into whole days, read from a daily rollup, and at most two
// ranges of raw rows that correct its partial first and last days. A partial day is either left out
// of the rollup days and its part inside the window added from the rows, or kept and its part
// outside the window subtracted, whichever holds fewer rows: a day's rows are judged by the time
// they span before `now` (later rows are rare: only clock skew puts them there).
import { DAY_MS } from '../sql/rollup-sql.js';

export interface RawRange {
  from: number;
  /** Exclusive. */
  to: number;
  sign: 1 | -1;
}

export interface DayPlan {
  /** Rollup days [firstDay, lastDay] (day = floor(ms / DAY_MS)); empty when firstDay > lastDay. */
  firstDay: number;
  lastDay: number;
  /** At most two. */
  ranges: RawRange[];
}

/** Stands for an unbounded side: far beyond any day number, and exact as a bound parameter. */
const NO_DAY = 1e15;

const dayOf = (ms: number) => Math.floor(ms / DAY_MS);

/** [from, before): submitted_at >= from and < before; undefined sides are unbounded. */
export function planDays(window: { from?: number; before?: number }, now: number): DayPlan {
  const { from, before } = window;
  const first = from === undefined ? -NO_DAY : dayOf(from);
  const last = before === undefined ? NO_DAY : dayOf(before - 1);
  const plan: DayPlan = { firstDay: first, lastDay: last, ranges: [] };
  if (first > last) return { firstDay: 1, lastDay: 0, ranges: [] };
  const rowsIn = (ranges: { from: number; to: number }[]) =>
    ranges.reduce((sum, r) => sum + Math.max(0, Math.min(r.to, now + 1) - r.from) + (r.to - r.from) * 1e-6, 0);
  for (const day of first === last ? [first] : [first, last]) {
    if (Math.abs(day) === NO_DAY) continue;
    const dayStart = day * DAY_MS;
    const inside = { from: Math.max(from ?? dayStart, dayStart), to: Math.min(before ?? dayStart + DAY_MS, dayStart + DAY_MS) };
    const outside = [{ from: dayStart, to: inside.from }, { from: inside.to, to: dayStart + DAY_MS }].filter((r) => r.to > r.from);
    if (outside.length === 0) continue;
    if (rowsIn(outside) < rowsIn([inside])) {
      plan.ranges.push(...outside.map((r) => ({ ...r, sign: -1 as const })));
    } else {
      plan.ranges.push({ ...inside, sign: 1 });
      if (day === plan.firstDay) plan.firstDay = day + 1;
      if (day === plan.lastDay) plan.lastDay = day - 1;
    }
  }
  return plan;
}
