import { expect } from 'chai';
import { mulberry32 } from '../../../sim/random.js';
import { planDays, type DayPlan } from '../../../src/store/statistics/day-window.js';
import { at, HOUR_MS } from '../temp-store.js';

const DAY = 24 * HOUR_MS;
const MIDNIGHT = at('2026-11-10T00:00:00Z');
const dayOf = (ms: number) => Math.floor(ms / DAY);

/** How many times each ms of [lo, hi) is counted by the plan: +1 per rollup day or added range, -1 per subtracted one. */
function coverage(plan: DayPlan, points: number[]): number[] {
  return points.map((ms) => {
    let n = dayOf(ms) >= plan.firstDay && dayOf(ms) <= plan.lastDay ? 1 : 0;
    for (const range of plan.ranges) if (ms >= range.from && ms < range.to) n += range.sign;
    return n;
  });
}

describe('store/day-window', () => {
  it('reads a window on day boundaries from whole days only', () => {
    const plan = planDays({ from: MIDNIGHT - 30 * DAY, before: MIDNIGHT }, MIDNIGHT);
    expect(plan).to.deep.equal({ firstDay: dayOf(MIDNIGHT) - 30, lastDay: dayOf(MIDNIGHT) - 1, ranges: [] });
  });

  it('adds a short partial first day from the rows and subtracts a short missing part', () => {
    const now = MIDNIGHT + 20 * HOUR_MS;
    const late = planDays({ from: now - 30 * DAY, before: now + 1 }, now);
    // The first day starts at 20:00: its last 4 h are added; today is kept, the part after now subtracted.
    expect(late.firstDay).to.equal(dayOf(now) - 29);
    expect(late.lastDay).to.equal(dayOf(now));
    expect(late.ranges).to.deep.equal([
      { from: now - 30 * DAY, to: MIDNIGHT - 29 * DAY, sign: 1 },
      { from: now + 1, to: MIDNIGHT + DAY, sign: -1 },
    ]);
    const early = planDays({ from: MIDNIGHT + 3 * HOUR_MS - 30 * DAY, before: MIDNIGHT + 3 * HOUR_MS + 1 }, MIDNIGHT + 3 * HOUR_MS);
    // Starting at 03:00, the first day is kept and its first 3 h subtracted.
    expect(early.firstDay).to.equal(dayOf(MIDNIGHT) - 30);
    expect(early.ranges[0]).to.deep.equal({ from: MIDNIGHT - 30 * DAY, to: MIDNIGHT + 3 * HOUR_MS - 30 * DAY, sign: -1 });
  });

  it('handles a window inside one day either way, and an empty window', () => {
    const inside = planDays({ from: MIDNIGHT + HOUR_MS, before: MIDNIGHT + 2 * HOUR_MS }, MIDNIGHT + 12 * HOUR_MS);
    expect(inside).to.deep.equal({ firstDay: dayOf(MIDNIGHT) + 1, lastDay: dayOf(MIDNIGHT) - 1, ranges: [{ from: MIDNIGHT + HOUR_MS, to: MIDNIGHT + 2 * HOUR_MS, sign: 1 }] });
    const today = planDays({ from: MIDNIGHT, before: MIDNIGHT + 10 * HOUR_MS + 1 }, MIDNIGHT + 10 * HOUR_MS);
    expect(today).to.deep.equal({ firstDay: dayOf(MIDNIGHT), lastDay: dayOf(MIDNIGHT), ranges: [{ from: MIDNIGHT + 10 * HOUR_MS + 1, to: MIDNIGHT + DAY, sign: -1 }] });
    const empty = planDays({ from: MIDNIGHT, before: MIDNIGHT }, MIDNIGHT);
    expect(empty.firstDay).to.be.greaterThan(empty.lastDay);
    expect(empty.ranges).to.deep.equal([]);
  });

  it('leaves unbounded sides to every day of the rollup', () => {
    const plan = planDays({ before: MIDNIGHT + HOUR_MS }, MIDNIGHT);
    expect(plan.firstDay).to.be.lessThan(-1e12);
    expect(coverage(plan, [0, -DAY * 400, MIDNIGHT, MIDNIGHT + HOUR_MS - 1, MIDNIGHT + HOUR_MS])).to.deep.equal([1, 1, 1, 1, 0]);
    expect(planDays({}, MIDNIGHT)).to.deep.include({ ranges: [] });
  });

  it('counts every ms of any window exactly once and nothing outside it, with at most two ranges', () => {
    const random = mulberry32(42);
    for (let i = 0; i < 500; i += 1) {
      const now = MIDNIGHT + Math.floor(random() * 3 * DAY);
      const from = random() < 0.2 ? undefined : now - Math.floor(random() * 40 * DAY) + (random() < 0.2 ? 0 : Math.floor(random() * DAY));
      const before = random() < 0.2 ? undefined : random() < 0.5 ? now + 1 : (from ?? now) + Math.floor(random() * 3 * DAY);
      const plan = planDays({ from, before }, now);
      expect(plan.ranges.length).to.be.at.most(2);
      const edges = [from, before].filter((x): x is number => x !== undefined);
      const points = edges.flatMap((x) => [x - DAY - 1, x - DAY, x - 1, x, x + 1, x + DAY - 1, Math.floor(x / DAY) * DAY, Math.floor(x / DAY) * DAY + DAY - 1]);
      const expected = points.map((ms) => ((from === undefined || ms >= from) && (before === undefined || ms < before) ? 1 : 0));
      expect(coverage(plan, points), JSON.stringify({ from, before, now, plan })).to.deep.equal(expected);
    }
  });
});
