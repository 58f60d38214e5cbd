// A token bucket per key (a principal, a client address): `burst` at once, refilled at `perSecond`.
// Buckets that have refilled completely carry no information and are dropped, so memory stays bounded
// by active callers; `maxKeys` bounds it against callers that come from ever new keys, by dropping
// the buckets touched least recently.
import type { Clock } from '../domain/clock.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiterOptions {
  /** Refill rate; 0 turns the limiter off (every decision allows). */
  perSecond: number;
  burst: number;
  /** Most buckets kept at once. Default: no bound beyond dropping full buckets. */
  maxKeys?: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(
    private readonly options: RateLimiterOptions,
    private readonly clock: Clock,
  ) {}

  /** Takes one token from the key's bucket if it has one. */
  take(key: string): RateDecision {
    if (this.options.perSecond <= 0) return { allowed: true };
    const now = this.clock.now();
    this.sweep(now);
    const bucket = this.refill(this.buckets.get(key) ?? { tokens: this.options.burst, updatedAt: now }, now);
    // Re-inserted so that the Map's order is the order of last use, oldest first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    this.evictBeyondCap();
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return this.refusal(bucket.tokens);
  }

  /** Whether `take` would allow now, without taking anything. */
  check(key: string): RateDecision {
    if (this.options.perSecond <= 0) return { allowed: true };
    const known = this.buckets.get(key);
    if (known === undefined) return { allowed: true };
    const tokens = this.tokensAt(known, this.clock.now());
    return tokens >= 1 ? { allowed: true } : this.refusal(tokens);
  }

  get trackedKeys(): number {
    return this.buckets.size;
  }

  private refusal(tokens: number): RateDecision {
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.options.perSecond)) };
  }

  private tokensAt(bucket: Bucket, now: number): number {
    const elapsed = Math.max(0, now - bucket.updatedAt) / 1000;
    return Math.min(this.options.burst, bucket.tokens + elapsed * this.options.perSecond);
  }

  private refill(bucket: Bucket, now: number): Bucket {
    bucket.tokens = this.tokensAt(bucket, now);
    bucket.updatedAt = now;
    return bucket;
  }

  private sweep(now: number): void {
    const fullAfterMs = (this.options.burst / this.options.perSecond) * 1000;
    if (now - this.lastSweep < Math.max(1000, fullAfterMs)) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if (this.tokensAt(bucket, now) >= this.options.burst) this.buckets.delete(key);
    }
  }

  private evictBeyondCap(): void {
    const cap = this.options.maxKeys ?? Number.POSITIVE_INFINITY;
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= cap) return;
      this.buckets.delete(key);
    }
  }
}
