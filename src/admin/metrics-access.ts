// Who may read /metrics (admin_auth kubernetes): the bearer token is reviewed by the API server
// (src/k8s/access-review.ts) and the answer, allowed or denied, is kept per SHA-256 of the token for
// admin_auth_cache_seconds, so that a scrape every 15 s costs no round trip and a flood of one bad
// token costs one. Concurrent requests with the same token share one review. A review that cannot be
// had fails closed. Every decision is counted; a denial is logged at most once per token per period,
// by a prefix of the token's hash, never the token.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { ExpiringMap } from './expiring-map.js';

/** What the API server said of one token; the shape src/k8s/access-review.ts answers with. */
export type ReviewAnswer =
  | { outcome: 'allowed'; user: string }
  | { outcome: 'unauthenticated'; reason: string }
  | { outcome: 'forbidden'; user: string; reason: string };

export type AccessOutcome = 'allowed' | 'unauthenticated' | 'forbidden' | 'error';
export const ACCESS_OUTCOMES: readonly AccessOutcome[] = ['allowed', 'unauthenticated', 'forbidden', 'error'];

export interface AccessDecision {
  outcome: AccessOutcome;
  /** Why, for the response body (never the token). */
  message: string;
  /** Set when no bearer token was presented at all: the client is told to send one. */
  noBearerToken?: boolean;
}

export interface MetricsAccessStatus {
  mode: 'kubernetes';
  cacheSeconds: number;
  cachedAnswers: number;
  /** Why the last review could not be had; null once one succeeds again. */
  lastError: string | null;
}

export interface MetricsAccessOptions {
  review: (token: string) => Promise<ReviewAnswer>;
  cacheSeconds: number;
  registry: Registry;
  logger: Logger;
  /** Monotonic milliseconds (default performance.now); tests move it by hand. */
  now?: () => number;
  /** Answers kept (default 1000), the oldest going first. */
  maxCachedAnswers?: number;
  /** Different tokens under review at once (default 64); past it the request fails closed. */
  maxInFlight?: number;
}

export const PROTECTED_PATH = '/metrics';
const BEARER = /^Bearer +(\S+) *$/i;
/** Far above any service account token (about 1 KiB); a longer header is refused before any hashing or review. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** With admin_auth_cache_seconds 0, denials are still logged at most this often per token. */
const MIN_LOG_INTERVAL_MS = 10_000;
/** Enough of the hash to tell tokens apart in the log, too little to look one up anywhere. */
const LOGGED_HASH_CHARS = 12;

export class MetricsAccess {
  readonly #options: MetricsAccessOptions;
  readonly #answers: ExpiringMap<ReviewAnswer>;
  readonly #logged: ExpiringMap<true>;
  readonly #inFlight = new Map<string, Promise<ReviewAnswer>>();
  readonly #decisions: Counter<'outcome'>;
  readonly #reviews: Counter<'outcome'>;
  #lastError: string | null = null;

  constructor(options: MetricsAccessOptions) {
    this.#options = options;
    const now = options.now ?? (() => performance.now());
    const cacheMs = options.cacheSeconds * 1000;
    const maxEntries = options.maxCachedAnswers ?? 1000;
    this.#answers = new ExpiringMap({ ttlMs: cacheMs, maxEntries, now });
    this.#logged = new ExpiringMap({ ttlMs: Math.max(cacheMs, MIN_LOG_INTERVAL_MS), maxEntries, now });
    this.#decisions = new Counter({
      name: 'gpucap_admin_auth_decisions_total',
      help: `Requests for ${PROTECTED_PATH} on the admin port by decision (admin_auth kubernetes): allowed, ` +
        'unauthenticated (401), forbidden (403), error (503: the API server could not review the token)',
      labelNames: ['outcome'],
      registers: [options.registry],
    });
    this.#reviews = new Counter({
      name: 'gpucap_admin_auth_reviews_total',
      help: `TokenReviews (each followed by a SubjectAccessReview when authenticated) sent for ${PROTECTED_PATH}, ` +
        'by answer; the other decisions came from the cache',
      labelNames: ['outcome'],
      registers: [options.registry],
    });
    for (const outcome of ACCESS_OUTCOMES) {
      this.#decisions.inc({ outcome }, 0);
      this.#reviews.inc({ outcome }, 0);
    }
  }

  /** The decision for one request, from its Authorization header. */
  async decide(authorization: string | undefined): Promise<AccessDecision> {
    const decision = await this.#decide(authorization);
    this.#decisions.inc({ outcome: decision.outcome });
    return decision;
  }

  status(): MetricsAccessStatus {
    return { mode: 'kubernetes', cacheSeconds: this.#options.cacheSeconds, cachedAnswers: this.#answers.size, lastError: this.#lastError };
  }

  async #decide(authorization: string | undefined): Promise<AccessDecision> {
    if (authorization === undefined || authorization.trim() === '') {
      const message = `Send a bearer token (Authorization: Bearer <token>) of an identity that may get ${PROTECTED_PATH}`;
      return { outcome: 'unauthenticated', noBearerToken: true, message };
    }
    const token = authorization.length <= MAX_TOKEN_LENGTH + 10 ? BEARER.exec(authorization)?.[1] : undefined;
    if (token === undefined || token.length > MAX_TOKEN_LENGTH) {
      return { outcome: 'unauthenticated', noBearerToken: true, message: 'The Authorization header is not "Bearer <token>"' };
    }
    const hash = createHash('sha256').update(token).digest('hex');
    let answer: ReviewAnswer;
    try {
      answer = this.#answers.get(hash) ?? (await this.#reviewOnce(hash, token));
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
      this.#logOnce('error', () =>
        this.#options.logger.error({ err: error }, `Cannot decide who may read ${PROTECTED_PATH}: refusing it (503)`),
      );
      return { outcome: 'error', message: `Cannot check the bearer token: ${message}` };
    }
    if (answer.outcome === 'allowed') return { outcome: 'allowed', message: 'allowed' };
    this.#logOnce(hash, () =>
      this.#options.logger.warn(
        {
          outcome: answer.outcome,
          tokenSha256: hash.slice(0, LOGGED_HASH_CHARS),
          reason: answer.reason,
          ...(answer.outcome === 'forbidden' ? { user: answer.user } : {}),
        },
        `${PROTECTED_PATH} refused`,
      ),
    );
    if (answer.outcome === 'unauthenticated') {
      return { outcome: 'unauthenticated', message: 'The API server did not authenticate the bearer token' };
    }
    return {
      outcome: 'forbidden',
      message: `User "${answer.user}" may not get ${PROTECTED_PATH}: ` +
        `it needs an RBAC rule with nonResourceURLs ["${PROTECTED_PATH}"] and verbs ["get"]`,
    };
  }

  /** One review per token at a time; the answer is cached, a failure is not. */
  #reviewOnce(hash: string, token: string): Promise<ReviewAnswer> {
    const pending = this.#inFlight.get(hash);
    if (pending !== undefined) return pending;
    if (this.#inFlight.size >= (this.#options.maxInFlight ?? 64)) {
      return Promise.reject(new Error(`${this.#inFlight.size} different tokens are already under review`));
    }
    const review = this.#options
      .review(token)
      .then(
        (answer) => {
          this.#reviews.inc({ outcome: answer.outcome });
          this.#lastError = null;
          this.#answers.set(hash, answer);
          return answer;
        },
        (error: unknown) => {
          this.#reviews.inc({ outcome: 'error' });
          this.#lastError = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
          throw error;
        },
      )
      .finally(() => this.#inFlight.delete(hash));
    this.#inFlight.set(hash, review);
    return review;
  }

  #logOnce(key: string, log: () => void): void {
    if (this.#logged.get(key) !== undefined) return;
    this.#logged.set(key, true);
    log();
  }
}
