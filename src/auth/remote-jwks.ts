// The signing keys behind a JWKS URL: fetched on first use, trusted for the cache age, fetched again
// for an unknown `kid` at most once per cooldown. Written here rather than taken from jose's
// createRemoteJWKSet because that one reads Date.now: with the injected clock, token expiry, key age
// and cooldown all follow the same time, and tests move it instead of sleeping.
// Redirects are refused, not followed: one could lead an https URL to plain http, or to a host
// nobody configured, and the keys decide every identity.
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey, type LocalJWKSet } from 'jose';
import type { Clock } from '../domain/clock.js';

export interface RemoteKeySetOptions {
  url: URL;
  /** How long fetched keys are used before they are fetched again. */
  cacheMs: number;
  /** Minimum time after a successful fetch before an unknown `kid` may cause another one. */
  cooldownMs: number;
  /** Timeout of one fetch, body included. */
  timeoutMs: number;
}

/** Fetch failures reject with an Error whose message (and cause) says what the URL did wrong. */
export function createRemoteKeySet(options: RemoteKeySetOptions, deps: { clock: Clock }): JWTVerifyGetKey {
  const { clock } = deps;
  let keys: LocalJWKSet | null = null;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  // Concurrent requests that need a fetch share one.
  let pending: Promise<LocalJWKSet> | null = null;

  const reload = (): Promise<LocalJWKSet> => {
    pending ??= fetchKeySet(options)
      .then((jwks) => {
        keys = createLocalJWKSet(jwks);
        fetchedAt = clock.now();
        return keys;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
  const olderThan = (ms: number): boolean => clock.now() - fetchedAt >= ms;

  return async (header, token) => {
    const current = keys === null || olderThan(options.cacheMs) ? await reload() : keys;
    try {
      return await current(header, token);
    } catch (error) {
      // Only a successful fetch starts the cooldown, as with jose: while the URL fails, each request tries again.
      if (codeOf(error) !== 'ERR_JWKS_NO_MATCHING_KEY' || !olderThan(options.cooldownMs)) throw error;
      return (await reload())(header, token);
    }
  };
}

async function fetchKeySet(options: RemoteKeySetOptions): Promise<JSONWebKeySet> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const timedOut = (error: unknown): Error =>
    signal.aborted ? new Error(`JWKS request timed out after ${options.timeoutMs} ms`, { cause: error }) : (error as Error);
  let response: Response;
  try {
    response = await fetch(options.url, {
      redirect: 'manual',
      signal,
      headers: { accept: 'application/jwk-set+json, application/json' },
    });
  } catch (error) {
    throw timedOut(error);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    const location = (response.headers.get('location') ?? '').slice(0, 200);
    throw new Error(`JWKS URL answered a redirect (HTTP ${response.status}${location ? ` to ${location}` : ''}); ` +
      'redirects are not followed: configure the final URL');
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`JWKS URL answered HTTP ${response.status}, expected 200 OK`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw timedOut(error);
  }
  try {
    return JSON.parse(text) as JSONWebKeySet;
  } catch (error) {
    throw new Error(`JWKS URL answered something that is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}
