// A clock the test moves by hand.
import type { Clock } from '../../src/domain/clock.js';

export class FixedClock implements Clock {
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  set(ms: number | string): void {
    this.current = typeof ms === 'string' ? Date.parse(ms) : ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
