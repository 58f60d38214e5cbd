// Who may read /metrics with admin_auth kubernetes, around a counting stand-in for the API server's
// reviews (the real ones: test/e2e/admin-auth-envtest.test.ts): each token's answer, allowed or
// denied, is kept for the cache period and then asked again; concurrent requests share one review;
// a failed review is never kept and fails closed; what is kept stays bounded; and a refusal is logged
// once per period, never with its token.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { MetricsAccess, type ReviewAnswer } from '../../src/admin/metrics-access.js';
import { createLogger } from '../../src/runtime/logger.js';

const CACHE_SECONDS = 10;

/** The API server's reviews as the service calls them: answers per token, counted, optionally failing or held. */
class CountingReview {
  readonly calls: string[] = [];
  failure: Error | null = null;
  #held: (() => void)[] = [];
  hold = false;

  constructor(private readonly answers: Record<string, ReviewAnswer>) {}

  readonly review = async (token: string): Promise<ReviewAnswer> => {
    this.calls.push(token);
    if (this.hold) await new Promise<void>((resolve) => this.#held.push(resolve));
    if (this.failure !== null) throw this.failure;
    return this.answers[token] ?? { outcome: 'unauthenticated', reason: 'invalid bearer token' };
  };

  release(): void {
    this.hold = false;
    for (const resolve of this.#held.splice(0)) resolve();
  }
}

const ANSWERS: Record<string, ReviewAnswer> = {
  'prometheus-token': { outcome: 'allowed', user: 'system:serviceaccount:monitoring:prometheus' },
  'nosy-token': { outcome: 'forbidden', user: 'system:serviceaccount:team-a:nosy', reason: '' },
};

describe('MetricsAccess (who may read /metrics)', () => {
  let now: number;
  let reviews: CountingReview;
  let registry: Registry;
  let written: string[];
  const logLines = () => written.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

  function access(options: { cacheSeconds?: number; maxCachedAnswers?: number; maxInFlight?: number } = {}): MetricsAccess {
    return new MetricsAccess({
      review: reviews.review,
      cacheSeconds: options.cacheSeconds ?? CACHE_SECONDS,
      registry,
      logger: createLogger({ level: 'info', version: 'test' }, { write: (line: string) => void written.push(line) }),
      now: () => now,
      ...(options.maxCachedAnswers === undefined ? {} : { maxCachedAnswers: options.maxCachedAnswers }),
      ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    });
  }

  const decisions = async (outcome: string) => sumOf(parseMetrics(await registry.metrics()), 'gpucap_admin_auth_decisions_total', { outcome });

  beforeEach(() => {
    now = 1_000_000;
    reviews = new CountingReview(ANSWERS);
    registry = new Registry();
    written = [];
  });

  it('refuses a request without a bearer token, or with another scheme, without a review', async () => {
    const gate = access();
    for (const header of [undefined, '', 'Basic b3BzOmh1bnRlcjI=', 'Bearer', 'Bearer two words', `Bearer ${'x'.repeat(20_000)}`]) {
      const decision = await gate.decide(header);
      expect(decision, String(header).slice(0, 30)).to.include({ outcome: 'unauthenticated', noBearerToken: true });
    }
    expect(reviews.calls).to.deep.equal([]);
    expect(await decisions('unauthenticated')).to.equal(6);
  });

  it('maps the review to allowed, unauthenticated and forbidden, naming the user and the rule it lacks', async () => {
    const gate = access();
    expect(await gate.decide('Bearer prometheus-token')).to.include({ outcome: 'allowed' });
    expect(await gate.decide('bearer unknown-token')).to.deep.equal({ outcome: 'unauthenticated', message: 'The API server did not authenticate the bearer token' });
    const forbidden = await gate.decide('Bearer nosy-token');
    expect(forbidden.outcome).to.equal('forbidden');
    expect(forbidden.message).to.include('system:serviceaccount:team-a:nosy').and.include('nonResourceURLs ["/metrics"]').and.include('verbs ["get"]');
    expect(await decisions('allowed')).to.equal(1);
    expect(await decisions('forbidden')).to.equal(1);
  });

  it('keeps each answer, allowed and denied, for the cache period: one review per token, then another once it expires', async () => {
    const gate = access();
    for (let scrape = 0; scrape < 4; scrape++) {
      expect((await gate.decide('Bearer prometheus-token')).outcome).to.equal('allowed');
      expect((await gate.decide('Bearer nosy-token')).outcome).to.equal('forbidden');
      expect((await gate.decide('Bearer flood-token')).outcome).to.equal('unauthenticated');
      now += 2_000;
    }
    expect(reviews.calls, 'within 10 s: one review each').to.deep.equal(['prometheus-token', 'nosy-token', 'flood-token']);
    now = 1_000_000 + CACHE_SECONDS * 1000;
    await gate.decide('Bearer prometheus-token');
    expect(reviews.calls.slice(3), 'at 10 s the answer has expired').to.deep.equal(['prometheus-token']);
    expect(await decisions('allowed')).to.equal(5);
    expect(gate.status()).to.deep.include({ mode: 'kubernetes', cacheSeconds: CACHE_SECONDS, lastError: null });
  });

  it('with admin_auth_cache_seconds 0, reviews every request', async () => {
    const gate = access({ cacheSeconds: 0 });
    for (let i = 0; i < 3; i++) await gate.decide('Bearer prometheus-token');
    expect(reviews.calls).to.have.length(3);
  });

  it('sends one review for concurrent requests with the same token, and one per other token', async () => {
    const gate = access({ cacheSeconds: 0 });
    reviews.hold = true;
    const pending = [
      ...Array.from({ length: 5 }, () => gate.decide('Bearer prometheus-token')),
      gate.decide('Bearer nosy-token'),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    expect(reviews.calls).to.deep.equal(['prometheus-token', 'nosy-token']);
    reviews.release();
    expect((await Promise.all(pending)).map((d) => d.outcome)).to.deep.equal(['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'forbidden']);
  });

  it('fails closed when the review cannot be had, keeps no failure, and recovers with the next review', async () => {
    const gate = access();
    reviews.failure = new Error('TokenReview failed: the API server could not be reached (ECONNREFUSED)');
    for (let i = 0; i < 2; i++) {
      expect(await gate.decide('Bearer prometheus-token')).to.deep.equal({
        outcome: 'error',
        message: 'Cannot check the bearer token: TokenReview failed: the API server could not be reached (ECONNREFUSED)',
      });
    }
    expect(reviews.calls, 'a failure is not cached').to.have.length(2);
    expect(gate.status().lastError).to.include('ECONNREFUSED');
    expect(logLines().filter((line) => line.level === 'error'), 'the outage logged once per period').to.have.length(1);
    reviews.failure = null;
    expect((await gate.decide('Bearer prometheus-token')).outcome).to.equal('allowed');
    expect(gate.status().lastError).to.equal(null);
    expect(await decisions('error')).to.equal(2);
  });

  it('fails closed past the reviews it may have in flight at once', async () => {
    const gate = access({ maxInFlight: 2 });
    reviews.hold = true;
    const pending = [gate.decide('Bearer a'), gate.decide('Bearer b')];
    const third = await gate.decide('Bearer c');
    expect(third.outcome).to.equal('error');
    expect(third.message).to.include('2 different tokens are already under review');
    reviews.release();
    await Promise.all(pending);
    expect(reviews.calls).to.deep.equal(['a', 'b']);
  });

  it('keeps at most maxCachedAnswers, the oldest going first', async () => {
    const gate = access({ maxCachedAnswers: 2 });
    for (const token of ['a', 'b', 'c', 'b', 'c']) await gate.decide(`Bearer ${token}`);
    expect(reviews.calls).to.deep.equal(['a', 'b', 'c']);
    expect(gate.status().cachedAnswers).to.equal(2);
    await gate.decide('Bearer a');
    expect(reviews.calls.slice(3), '"a" was let go for "c"').to.deep.equal(['a']);
  });

  it('logs a refusal once per token per period, by a prefix of the token\'s hash, never the token', async () => {
    const gate = access();
    for (let i = 0; i < 3; i++) {
      await gate.decide('Bearer nosy-token');
      await gate.decide('Bearer flood-token');
      now += 1000;
    }
    const refusals = logLines().filter((line) => line.msg === '/metrics refused');
    expect(refusals.map((line) => line.outcome)).to.deep.equal(['forbidden', 'unauthenticated']);
    expect(refusals[0]).to.include({ user: 'system:serviceaccount:team-a:nosy' });
    expect(refusals[0]?.tokenSha256).to.match(/^[0-9a-f]{12}$/);
    now += CACHE_SECONDS * 1000;
    await gate.decide('Bearer nosy-token');
    expect(logLines().filter((line) => line.msg === '/metrics refused'), 'again in the next period').to.have.length(3);
    const text = written.join('');
    expect(text).to.not.include('nosy-token').and.not.include('flood-token');
  });
});
