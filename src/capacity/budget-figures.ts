// Allocated, used and remaining GPU-hours of one part of a budget (the whole, a pool, an initiative),
// with where it is heading (budget-forecast.ts), all at the same instant of the same period.
import { forecast, type Forecast } from './budget-forecast.js';

export interface CapacityFigures extends Forecast {
  allocated: number;
  used: number;
  remaining: number;
}

/** The figures of any part of a budget at `now`, in the period that ends at `periodEnd`. */
export function figuresAt(at: { budgeted: boolean; now: number; periodEnd: number | null }) {
  return (allocated: number, used: number, usedInBurnWindow: number): CapacityFigures => ({
    allocated,
    used,
    remaining: allocated - used,
    ...forecast({ ...at, allocated, used, usedInBurnWindow }),
  });
}
