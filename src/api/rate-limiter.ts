// A token bucket per principal: `burst` requests at once, refilled at `perSecond`. Buckets that have
// refilled completely carry no information and are dropped, so memory stays bounded by active callers.
import type { Clock } from '../domain/clock.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(
    private readonly options: { perSecond: number; burst: number },
    private readonly clock: Clock,
  ) {}

  take(key: string): RateDecision {
    if (this.options.perSecond <= 0) return { allowed: true };
    const now = this.clock.now();
    const bucket = this.refill(this.buckets.get(key) ?? { tokens: this.options.burst, updatedAt: now }, now);
    this.buckets.set(key, bucket);
    this.sweep(now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.options.perSecond)) };
  }

  get trackedKeys(): number {
    return this.buckets.size;
  }

  private refill(bucket: Bucket, now: number): Bucket {
    const elapsed = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + elapsed * this.options.perSecond);
    bucket.updatedAt = now;
    return bucket;
  }

  private sweep(now: number): void {
    const fullAfterMs = (this.options.burst / this.options.perSecond) * 1000;
    if (now - this.lastSweep < Math.max(1000, fullAfterMs)) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt >= fullAfterMs) this.buckets.delete(key);
    }
  }
}
