// Verifies JWTs against the identity provider's keys: a JWKS URL (cached, refetched when an unknown
// `kid` arrives, which is how key rotation reaches us) or a local JWKS file (re-read when it changes).
// jose does the cryptography and the registered claims; this file pins the options and turns jose's
// error codes into client-safe 401 messages, or a 503 when the key source fails (the token may be
// fine, so the client should retry, not fetch a new token). Errors are told apart by `code`, never
// by instanceof.
import {
  createLocalJWKSet,
  errors,
  jwtVerify,
  type CryptoKey,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type LocalJWKSet,
} from 'jose';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { ApiError } from '../domain/errors.js';
import type { Clock } from '../domain/clock.js';
import { createReloadingFile } from './reloading-file.js';
import { createRemoteKeySet } from './remote-jwks.js';
import { invalidToken } from './unauthenticated.js';

export type JwtVerifierConfig = Pick<
  Config,
  | 'jwks_url'
  | 'jwks_file'
  | 'jwt_issuer'
  | 'jwt_audience'
  | 'jwt_algorithms'
  | 'jwt_clock_tolerance_seconds'
  | 'jwks_cache_seconds'
  | 'jwks_cooldown_seconds'
>;

export interface JwtVerifierDeps {
  clock: Clock;
  logger: Logger;
  /** Timeout of one JWKS fetch. Default 5000 ms. */
  jwksTimeoutMs?: number;
}

export interface JwtVerifierStatus {
  source: 'url' | 'file';
  /** Why keys could not be had the last time they were needed (fetch failed, file invalid), else null. */
  lastKeyError: string | null;
}

export interface JwtVerifier {
  /**
   * The verified claims set; otherwise throws ApiError UNAUTHENTICATED, or UNAVAILABLE (with
   * Retry-After) when the signing keys cannot be had.
   */
  verify(token: string): Promise<JWTPayload>;
  status(): JwtVerifierStatus;
}

/** Signature algorithms with a public verification key. HMAC and `none` can never be configured. */
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);

/** Key resolution errors caused by the token (its `alg`/`kid`), not by the key source. */
const TOKEN_SIDE_KEY_ERRORS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

const KEYS_UNAVAILABLE = 'ERR_GPUCAP_KEYS_UNAVAILABLE';

/** The key source failed (fetch error, timeout, bad JWKS): an operator problem, a 503 for the caller. */
class KeysUnavailable extends Error {
  readonly code = KEYS_UNAVAILABLE;
  constructor(cause: unknown) {
    super('JWT signing keys are unavailable', { cause });
    this.name = 'KeysUnavailable';
  }
}

/** Throws an Error naming the setting when the configuration cannot verify anything. */
export function createJwtVerifier(config: JwtVerifierConfig, deps: JwtVerifierDeps): JwtVerifier {
  const { clock, logger } = deps;
  const algorithms = checkedAlgorithms(config);
  const cooldownMs = config.jwks_cooldown_seconds * 1000;
  // Retry-After takes whole seconds; 0 would invite an immediate retry storm against the provider.
  const retryAfter = String(Math.max(1, Math.ceil(config.jwks_cooldown_seconds)));
  const keys = keySource(config, { ...deps, cooldownMs });
  const failures = keyFailureLog(keys.source, { clock, logger, cooldownMs });
  const getKey = keyGetter(keys.resolveKey, failures);

  return {
    async verify(token) {
      const options: JWTVerifyOptions = {
        algorithms,
        issuer: config.jwt_issuer,
        audience: config.jwt_audience,
        clockTolerance: config.jwt_clock_tolerance_seconds,
        currentDate: new Date(clock.now()),
        requiredClaims: ['exp', 'sub'],
      };
      try {
        const { payload } = await jwtVerify<JWTPayload>(token, getKey, options).catch(
          (error: unknown) => verifyWithEachKey(error, token, options),
        );
        return payload;
      } catch (error) {
        if (codeOf(error) === KEYS_UNAVAILABLE) {
          failures.report((error as Error).cause);
          throw keysUnavailable(retryAfter);
        }
        const rejection = rejectionOf(error, algorithms);
        if (rejection === null) {
          logger.error({ err: error }, 'Unexpected error while verifying a JWT');
          throw invalidToken('Token could not be verified');
        }
        throw rejection;
      }
    },
    status() {
      return { source: config.jwks_url !== undefined ? 'url' : 'file', lastKeyError: keys.sourceError() ?? failures.last() };
    },
  };
}

/**
 * The configured algorithms; throws unless the configuration names one key source, an issuer and an
 * audience, and asymmetric algorithms only.
 */
function checkedAlgorithms(config: JwtVerifierConfig): string[] {
  if ((config.jwks_url === undefined) === (config.jwks_file === undefined)) {
    throw new Error('JWT verification needs exactly one of jwks_url and jwks_file');
  }
  if (config.jwt_issuer === undefined || config.jwt_audience === undefined) {
    throw new Error('JWT verification needs jwt_issuer and jwt_audience');
  }
  const symmetric = config.jwt_algorithms.filter((alg) => !ASYMMETRIC.has(alg));
  if (config.jwt_algorithms.length === 0 || symmetric.length > 0) {
    throw new Error(`jwt_algorithms must list asymmetric algorithms only${symmetric.length > 0 ? ` (not ${symmetric.join(', ')})` : ''}`);
  }
  return [...config.jwt_algorithms];
}

interface KeySource {
  /** The JWKS URL or file, as logged. */
  source: string;
  resolveKey: JWTVerifyGetKey;
  /** Why the file's keys could not be loaded the last time, else null (a URL reports through its fetches). */
  sourceError: () => string | null;
}

/** The signing keys of the JWKS URL (fetched and cached on the injected clock) or of the JWKS file (re-read when it changes). */
function keySource(config: JwtVerifierConfig, deps: JwtVerifierDeps & { cooldownMs: number }): KeySource {
  if (config.jwks_url !== undefined) {
    const resolveKey = createRemoteKeySet(
      {
        url: new URL(config.jwks_url),
        cacheMs: config.jwks_cache_seconds * 1000,
        cooldownMs: deps.cooldownMs,
        timeoutMs: deps.jwksTimeoutMs ?? 5000,
      },
      { clock: deps.clock },
    );
    return { source: config.jwks_url, resolveKey, sourceError: () => null };
  }
  const path = config.jwks_file as string;
  const file = createReloadingFile(
    { path, what: 'JWKS file', checkIntervalMs: deps.cooldownMs, parse: parseJwksFile },
    { clock: deps.clock, logger: deps.logger },
  );
  return { source: path, resolveKey: (header, token) => file.current()(header, token), sourceError: () => file.status().lastLoadError };
}

interface KeyFailureLog {
  /** The key source failed: remembered for status(), and logged. */
  report(error: unknown): void;
  /** The keys were had again. */
  clear(): void;
  last(): string | null;
}

function keyFailureLog(source: string, deps: { clock: Clock; logger: Logger; cooldownMs: number }): KeyFailureLog {
  let keyError: string | null = null;
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return {
    report(error) {
      keyError = reasonChain(error);
      const now = deps.clock.now();
      // One line per cooldown: with the identity provider down, every request would log otherwise.
      if (now - lastLoggedAt < deps.cooldownMs) {
        suppressed += 1;
        return;
      }
      deps.logger.error(
        { jwks: source, reason: keyError, suppressed },
        'Cannot get the JWT signing keys; JWTs are rejected until this is fixed',
      );
      lastLoggedAt = now;
      suppressed = 0;
    },
    clear() {
      keyError = null;
    },
    last: () => keyError,
  };
}

/** The key for a token, where a failure of the key source (not of the token) becomes KeysUnavailable. */
function keyGetter(resolveKey: JWTVerifyGetKey, failures: KeyFailureLog): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      const key = await resolveKey(header, token);
      failures.clear();
      return key;
    } catch (error) {
      if (TOKEN_SIDE_KEY_ERRORS.has(codeOf(error))) throw error;
      throw new KeysUnavailable(error);
    }
  };
}

/** Not `invalid_token`: that makes clients fetch new tokens in a loop although theirs may be fine. */
function keysUnavailable(retryAfterSeconds: string): ApiError {
  return new ApiError('UNAVAILABLE', "The identity provider's keys cannot be fetched right now; retry shortly", {
    headers: { 'Retry-After': retryAfterSeconds },
  });
}

/**
 * Without a `kid`, several keys of the set may fit the token's `alg`; jose then hands us the
 * candidates and each is tried in turn (the documented pattern).
 */
async function verifyWithEachKey(error: unknown, token: string, options: JWTVerifyOptions): Promise<{ payload: JWTPayload }> {
  if (codeOf(error) !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || !isAsyncIterable(error)) throw error;
  for await (const key of error) {
    try {
      return await jwtVerify<JWTPayload>(token, key as CryptoKey, options);
    } catch (inner) {
      if (codeOf(inner) !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw inner;
    }
  }
  throw new errors.JWSSignatureVerificationFailed();
}

/** The 401 for a jose error, or null for an error jose does not describe (a bug, not a bad token). */
function rejectionOf(error: unknown, algorithms: readonly string[]): ApiError | null {
  switch (codeOf(error)) {
    case 'ERR_JWT_EXPIRED':
      return invalidToken('Token has expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const { claim, reason } = error as { claim?: unknown; reason?: unknown };
      if (reason === 'missing') return invalidToken(`Token claim "${String(claim)}" is missing`);
      if (claim === 'nbf' && reason === 'check_failed') return invalidToken('Token is not yet valid');
      if (claim === 'iss') return invalidToken('Token issuer is not accepted');
      if (claim === 'aud') return invalidToken('Token audience is not accepted');
      return invalidToken(`Token claim "${String(claim)}" is invalid`);
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return invalidToken('Token signature is invalid');
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return invalidToken('Token signing key is not known');
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return invalidToken('Token signing key is ambiguous');
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return invalidToken(`Token algorithm is not accepted (accepted: ${algorithms.join(', ')})`);
    case 'ERR_JOSE_NOT_SUPPORTED':
      return invalidToken('Token algorithm is not supported');
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return invalidToken('Token is malformed');
    default:
      return null;
  }
}

/** A JWKS file holds public signature keys only; anything else is refused when the file is loaded. */
export function parseJwksFile(text: string): LocalJWKSet {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new Error(`not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('must be a JSON object with a "keys" array');
  keys.forEach((key: unknown, index) => {
    const jwk = key as Record<string, unknown> | null;
    if (jwk === null || typeof jwk !== 'object' || typeof jwk.kty !== 'string') throw new Error(`keys[${index}]: "kty" is missing`);
    if (jwk.kty === 'oct') throw new Error(`keys[${index}]: symmetric keys ("kty": "oct") are not accepted`);
    if ('d' in jwk) throw new Error(`keys[${index}]: holds a private key ("d"); publish public keys only`);
  });
  try {
    return createLocalJWKSet(doc as Parameters<typeof createLocalJWKSet>[0]);
  } catch (error) {
    throw new Error((error as Error).message, { cause: error });
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:9` from an error and its causes. */
function reasonChain(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 4; depth += 1) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ');
}
