// The current budget period in UTC (DECISIONS "Capacity"); `total` has no start.
import type { BudgetPeriod } from './ports.js';

export function periodStart(period: BudgetPeriod, now: number): number | null {
  const d = new Date(now);
  const year = d.getUTCFullYear();
  switch (period) {
    case 'month':
      return Date.UTC(year, d.getUTCMonth(), 1);
    case 'quarter':
      return Date.UTC(year, Math.floor(d.getUTCMonth() / 3) * 3, 1);
    case 'year':
      return Date.UTC(year, 0, 1);
    case 'total':
      return null;
  }
}
