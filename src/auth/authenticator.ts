// The one entry point of the auth layer: `Authorization` header in, Principal out, or a 401 ApiError
// with an RFC 6750 challenge (a 503 when the JWT signing keys cannot be fetched). A `gca_` token goes
// to the API token store, a compact JWS to the JWT verifier; whichever source is not configured
// rejects its tokens with a message that says so.
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../access/principal.js';
import { createApiTokenStore, type ApiTokenStore, type ApiTokenStoreStatus } from './api-token-store.js';
import { createJwtVerifier, type JwtVerifier, type JwtVerifierStatus } from './jwt-verifier.js';
import { principalFromClaims, type ClaimNames } from './principal-from-claims.js';
import { hasApiTokenPrefix } from './token-format.js';
import { invalidToken, missingCredentials } from './unauthenticated.js';

export type AuthConfig = Pick<
  Config,
  | 'jwks_url'
  | 'jwks_file'
  | 'jwt_issuer'
  | 'jwt_audience'
  | 'jwt_algorithms'
  | 'jwt_clock_tolerance_seconds'
  | 'jwks_cache_seconds'
  | 'jwks_cooldown_seconds'
  | 'claim_organization'
  | 'claim_role'
  | 'claim_initiatives'
  | 'api_tokens_file'
  | 'api_tokens_reload_seconds'
  | 'auth_failure_rate_per_second'
  | 'auth_failure_burst'
>;

export interface Authenticator {
  /**
   * The caller's Principal; otherwise throws ApiError UNAUTHENTICATED (with a WWW-Authenticate header),
   * or UNAVAILABLE (with Retry-After) when a JWT cannot be checked because its signing keys cannot be had.
   */
  authenticate(authorization: string | undefined): Promise<Principal>;
  /**
   * How many failed authentications a client address may have: `burst` at once, refilled at
   * `perSecond` (0: no limit). The HTTP layer enforces it, since only it knows the address.
   */
  readonly failureLimit: { perSecond: number; burst: number };
  close(): void;
}

/** For the admin port: which sources are on and whether their keys/records are healthy. */
export interface AuthenticatorStatus {
  jwt: JwtVerifierStatus | null;
  apiTokens: ApiTokenStoreStatus | null;
}

export interface StatusReportingAuthenticator extends Authenticator {
  status(): AuthenticatorStatus;
}

export interface AuthenticatorDeps {
  clock: Clock;
  logger: Logger;
  /** Timeout of one JWKS fetch. Default 5000 ms. */
  jwksTimeoutMs?: number;
}

// Three base64url parts; the signature may be empty so that an unsecured (`alg: none`) token reaches
// jose and is refused for its algorithm, with a message that says so.
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const BEARER = /^Bearer +(\S+) *$/i;
const MAX_TOKEN_LENGTH = 8192;

/**
 * Loads the API token file and the JWKS file (if configured) now: an invalid file throws, so the
 * service refuses to start. A JWKS URL is first fetched by the first JWT that needs it.
 */
export function createAuthenticator(config: AuthConfig, deps: AuthenticatorDeps): StatusReportingAuthenticator {
  const logger = deps.logger.child({ component: 'auth' });
  const jwtOn = config.jwks_url !== undefined || config.jwks_file !== undefined;
  if (!jwtOn && config.api_tokens_file === undefined) {
    throw new Error('No credential source: set jwks_url, jwks_file or api_tokens_file');
  }
  const jwt: JwtVerifier | null = jwtOn ? createJwtVerifier(config, { ...deps, logger }) : null;
  const apiTokens: ApiTokenStore | null =
    config.api_tokens_file !== undefined
      ? createApiTokenStore(
        { file: config.api_tokens_file, reloadSeconds: config.api_tokens_reload_seconds },
        { clock: deps.clock, logger },
      )
      : null;
  const claims: ClaimNames = { organization: config.claim_organization, role: config.claim_role, initiatives: config.claim_initiatives };
  let closed = false;

  const principalOf = async (token: string): Promise<Principal> => {
    if (hasApiTokenPrefix(token)) {
      if (apiTokens === null) throw invalidToken('API tokens are not accepted by this server');
      return apiTokens.authenticate(token);
    }
    if (COMPACT_JWS.test(token)) {
      if (jwt === null) throw invalidToken('JWTs are not accepted by this server');
      return principalFromClaims(await jwt.verify(token), claims);
    }
    throw invalidToken('Token is neither a JWT nor an API token');
  };

  return {
    failureLimit: { perSecond: config.auth_failure_rate_per_second, burst: config.auth_failure_burst },
    async authenticate(authorization) {
      if (closed) throw new Error('Authenticator is closed');
      if (authorization === undefined || authorization.trim() === '') throw missingCredentials();
      const token = BEARER.exec(authorization.trim())?.[1];
      if (token === undefined) throw invalidToken('Authorization header must be "Bearer <token>"');
      if (token.length > MAX_TOKEN_LENGTH) throw invalidToken('Token is too long');
      try {
        return await principalOf(token);
      } catch (error) {
        logger.debug({ reason: (error as Error).message }, 'Credential rejected');
        throw error;
      }
    },
    close() {
      closed = true;
    },
    status() {
      return { jwt: jwt?.status() ?? null, apiTokens: apiTokens?.status() ?? null };
    },
  };
}
