// The current budget period in UTC (DECISIONS "Capacity"); `total` has neither start nor end.
import type { BudgetPeriod } from '../domain/capacity-budget.js';

export function periodStart(period: BudgetPeriod, now: number): number | null {
  return periodBounds(period, now)?.start ?? null;
}

/** The first instant after the current period: the start of the next one. */
export function periodEnd(period: BudgetPeriod, now: number): number | null {
  return periodBounds(period, now)?.end ?? null;
}

function periodBounds(period: BudgetPeriod, now: number): { start: number; end: number } | null {
  const d = new Date(now);
  const year = d.getUTCFullYear();
  switch (period) {
    case 'month':
      return { start: Date.UTC(year, d.getUTCMonth(), 1), end: Date.UTC(year, d.getUTCMonth() + 1, 1) };
    case 'quarter': {
      const first = Math.floor(d.getUTCMonth() / 3) * 3;
      return { start: Date.UTC(year, first, 1), end: Date.UTC(year, first + 3, 1) };
    }
    case 'year':
      return { start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) };
    case 'total':
      return null;
  }
}
