import { base64url, exportSPKI, SignJWT } from 'jose';
import { expect } from 'chai';
import { createAuthenticator, type StatusReportingAuthenticator } from '../../src/auth/authenticator.js';
import {
  AUDIENCE,
  baseConfig,
  bearer,
  captureLogger,
  claims,
  ERROR_LEVEL,
  expectInvalidToken,
  expectKeysUnavailable,
  ISSUER,
  jwksOf,
  makeKey,
  signToken,
  startJwksServer,
  T0_SECONDS,
  TestClock,
  type JwksServer,
  type LogLine,
  type TestKey,
} from './auth-helpers.js';
import type { AuthConfig } from '../../src/auth/authenticator.js';

describe('JWT authentication against a JWKS URL', () => {
  let rsaKey: TestKey;
  let ecKey: TestKey;
  let server: JwksServer;
  let clock: TestClock;
  let lines: LogLine[];
  let auth: StatusReportingAuthenticator;

  const build = (overrides: Partial<AuthConfig> = {}): StatusReportingAuthenticator => {
    const captured = captureLogger();
    lines = captured.lines;
    return createAuthenticator(baseConfig({ jwks_url: server.url, ...overrides }), { clock, logger: captured.logger, jwksTimeoutMs: 300 });
  };

  before(async () => {
    rsaKey = await makeKey('RS256');
    ecKey = await makeKey('ES256');
  });

  beforeEach(async () => {
    server = await startJwksServer(jwksOf(rsaKey, ecKey));
    clock = new TestClock();
    auth = build();
  });

  afterEach(async () => {
    auth.close();
    await server.close();
  });

  it('accepts a valid RS256 token and returns its principal', async () => {
    const principal = await auth.authenticate(bearer(await signToken(rsaKey)));
    expect(principal).to.deep.equal({ id: `jwt:${ISSUER}:alice`, kind: 'jwt', organizationId: 'acme', role: 'TEAM_LEAD', initiatives: ['llm', 'vision'] });
  });

  it('accepts a valid ES256 token and reuses the cached key set', async () => {
    await auth.authenticate(bearer(await signToken(ecKey)));
    await auth.authenticate(bearer(await signToken(ecKey, { sub: 'bob' })));
    expect(server.requests).to.equal(1);
  });

  it('accepts the scheme name in any case', async () => {
    const principal = await auth.authenticate(`bearer ${await signToken(rsaKey)}`);
    expect(principal.role).to.equal('TEAM_LEAD');
  });

  it('rejects an expired token', async () => {
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { exp: T0_SECONDS - 3600 }))), 'Token has expired');
  });

  it('rejects a token once the injected clock passes its expiry', async () => {
    const token = await signToken(rsaKey);
    await auth.authenticate(bearer(token));
    clock.advance(2 * 3600 * 1000);
    await expectInvalidToken(auth.authenticate(bearer(token)), 'Token has expired');
  });

  it('rejects a token that is not yet valid (nbf)', async () => {
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { nbf: T0_SECONDS + 600 }))), 'Token is not yet valid');
  });

  it('honours the clock tolerance for exp and nbf', async () => {
    // Tolerance is 30 s: 20 s past expiry or 20 s before nbf still passes, 40 s does not.
    await auth.authenticate(bearer(await signToken(rsaKey, { exp: T0_SECONDS - 20 })));
    await auth.authenticate(bearer(await signToken(rsaKey, { nbf: T0_SECONDS + 20 })));
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { exp: T0_SECONDS - 40 }))), 'Token has expired');
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { nbf: T0_SECONDS + 40 }))), 'Token is not yet valid');
  });

  it('applies no leeway when the tolerance is 0', async () => {
    auth = build({ jwt_clock_tolerance_seconds: 0 });
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { exp: T0_SECONDS - 1 }))), 'Token has expired');
  });

  it('rejects a token from another issuer', async () => {
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { iss: 'https://evil.example.com' }))), 'Token issuer is not accepted');
  });

  it('rejects a token for another audience', async () => {
    await expectInvalidToken(auth.authenticate(bearer(await signToken(rsaKey, { aud: 'some-other-api' }))), 'Token audience is not accepted');
  });

  it('accepts an audience array that contains ours', async () => {
    const principal = await auth.authenticate(bearer(await signToken(rsaKey, { aud: ['other', AUDIENCE] })));
    expect(principal.organizationId).to.equal('acme');
  });

  it('rejects a token signed by another key that claims the same kid', async () => {
    const impostor = await makeKey('RS256', rsaKey.kid);
    await expectInvalidToken(auth.authenticate(bearer(await signToken(impostor))), 'Token signature is invalid');
  });

  it('rejects an unsecured token (alg "none")', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify(claims({ role: 'ORG_ADMIN' })));
    await expectInvalidToken(auth.authenticate(bearer(`${header}.${payload}.`)), 'Token algorithm is not accepted (accepted: RS256, ES256)');
  });

  it('rejects an HS256 token whose HMAC secret is the public key (algorithm confusion)', async () => {
    const secret = new TextEncoder().encode(await exportSPKI(rsaKey.publicKey));
    const forged = await new SignJWT(claims({ role: 'ORG_ADMIN' })).setProtectedHeader({ alg: 'HS256', kid: rsaKey.kid }).sign(secret);
    await expectInvalidToken(auth.authenticate(bearer(forged)), 'Token algorithm is not accepted (accepted: RS256, ES256)');
  });

  it('rejects an algorithm outside jwt_algorithms even when the key exists', async () => {
    auth = build({ jwt_algorithms: ['RS256'] });
    await expectInvalidToken(auth.authenticate(bearer(await signToken(ecKey))), 'Token algorithm is not accepted (accepted: RS256)');
  });

  it('refuses to start with a symmetric algorithm in jwt_algorithms', () => {
    expect(() => build({ jwt_algorithms: ['RS256', 'HS256'] as unknown as AuthConfig['jwt_algorithms'] })).to.throw(
      'jwt_algorithms must list asymmetric algorithms only (not HS256)',
    );
  });

  it('rejects a token whose kid is unknown', async () => {
    const stranger = await makeKey('RS256', 'unknown-kid');
    await expectInvalidToken(auth.authenticate(bearer(await signToken(stranger))), 'Token signing key is not known');
  });

  it('picks up a rotated key after the cooldown, not before, by the injected clock', async () => {
    const next = await makeKey('RS256');
    const rotated = await signToken(next);
    await auth.authenticate(bearer(await signToken(rsaKey)));
    expect(server.requests).to.equal(1);

    server.serve(jwksOf(next, rsaKey));
    // Within the cooldown (30 s) an unknown kid does not trigger another fetch (abuse protection).
    await expectInvalidToken(auth.authenticate(bearer(rotated)), 'Token signing key is not known');
    clock.advance(29_999);
    await expectInvalidToken(auth.authenticate(bearer(rotated)), 'Token signing key is not known');
    expect(server.requests).to.equal(1);

    clock.advance(1);
    const principal = await auth.authenticate(bearer(rotated));
    expect(principal.id).to.equal(`jwt:${ISSUER}:alice`);
    expect(server.requests).to.equal(2);
  });

  it('fetches the keys again once they are older than the cache age, by the injected clock', async () => {
    auth = build({ jwks_cache_seconds: 600, jwks_cooldown_seconds: 30 });
    const token = await signToken(rsaKey, { exp: T0_SECONDS + 7200 });
    await auth.authenticate(bearer(token));
    clock.advance(599_999);
    await auth.authenticate(bearer(token));
    expect(server.requests).to.equal(1);
    clock.advance(1);
    await auth.authenticate(bearer(token));
    expect(server.requests).to.equal(2);
  });

  it('does not follow a redirect, and says so', async () => {
    // The same keys behind another URL: following the redirect would accept the token.
    const target = await startJwksServer(jwksOf(rsaKey, ecKey));
    try {
      server.redirectTo(target.url);
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      expect(target.requests).to.equal(0);
      expect(auth.status().jwt?.lastKeyError).to.equal(
        `JWKS URL answered a redirect (HTTP 302 to ${target.url}); redirects are not followed: configure the final URL`,
      );
    } finally {
      await target.close();
    }
  });

  it('tries each key when the token has no kid and several keys fit its algorithm', async () => {
    const second = await makeKey('RS256');
    server.serve(jwksOf(second, rsaKey));
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(rsaKey.privateKey);
    const principal = await auth.authenticate(bearer(token));
    expect(principal.role).to.equal('TEAM_LEAD');
  });

  describe('when the keys cannot be fetched', () => {
    // A key-source failure says nothing about the token: 401 invalid_token would send clients into a
    // token-refresh loop, so they get 503 with Retry-After (the cooldown, 30 s here) instead.

    it('answers 503 with Retry-After while the JWKS server is down, and accepts the same token once it is back', async () => {
      const token = await signToken(rsaKey);
      await server.down();
      await expectKeysUnavailable(auth.authenticate(bearer(token)), '30');
      expect(auth.status().jwt?.lastKeyError).to.match(/ECONNREFUSED/);

      await server.up();
      const principal = await auth.authenticate(bearer(token));
      expect(principal.id).to.equal(`jwt:${ISSUER}:alice`);
      expect(auth.status().jwt?.lastKeyError).to.equal(null);
    });

    it('answers 503 and logs at error once per cooldown when the JWKS endpoint answers an HTTP error', async () => {
      server.failWith(500);
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');

      const errors = lines.filter((line) => line.level === ERROR_LEVEL);
      expect(errors).to.have.length(1, 'a second failure within the cooldown is counted, not logged');
      expect(errors[0]?.msg).to.equal('Cannot get the JWT signing keys; JWTs are rejected until this is fixed');
      expect(errors[0]?.reason).to.equal('JWKS URL answered HTTP 500, expected 200 OK');
      expect(auth.status().jwt?.lastKeyError).to.equal('JWKS URL answered HTTP 500, expected 200 OK');
    });

    it('accepts tokens again once the JWKS endpoint stops answering an HTTP error', async () => {
      server.failWith(503);
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      server.serve(jwksOf(rsaKey));
      await auth.authenticate(bearer(await signToken(rsaKey)));
      expect(auth.status().jwt?.lastKeyError).to.equal(null);
    });

    it('answers 503 and logs at error when the JWKS fetch times out', async () => {
      server.hang();
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      const errors = lines.filter((line) => line.level === ERROR_LEVEL);
      expect(errors).to.have.length(1);
      expect(String(errors[0]?.reason)).to.match(/^JWKS request timed out after 300 ms/);
    });

    it('answers 503 when the JWKS URL serves something other than a key set', async () => {
      server.serveRaw('<html>Sign in</html>');
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      expect(auth.status().jwt?.lastKeyError).to.match(/^JWKS URL answered something that is not JSON: /);

      server.serveRaw('{"keys": "none"}');
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '30');
      expect(auth.status().jwt?.lastKeyError).to.match(/JSON Web Key Set malformed/);
    });

    it('answers 503 when the cached keys have expired and fetching them again fails', async () => {
      const token = await signToken(rsaKey);
      await auth.authenticate(bearer(token));
      await server.down();
      clock.advance(600_000);
      await expectKeysUnavailable(auth.authenticate(bearer(token)), '30');
    });

    it('answers 503 for an unknown kid when the refetch it triggers fails (the key may have been rotated)', async () => {
      await auth.authenticate(bearer(await signToken(rsaKey)));
      await server.down();
      clock.advance(30_000);
      const rotated = await makeKey('RS256');
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rotated))), '30');
    });

    it('states Retry-After in whole seconds, rounded up from the cooldown', async () => {
      await server.down();
      auth = build({ jwks_cooldown_seconds: 0.2 });
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '1');
      auth = build({ jwks_cooldown_seconds: 2.5 });
      await expectKeysUnavailable(auth.authenticate(bearer(await signToken(rsaKey))), '3');
    });

    it('still answers 401 for an unknown kid when the server is healthy and the refetch succeeds', async () => {
      await auth.authenticate(bearer(await signToken(rsaKey)));
      clock.advance(30_000);
      const stranger = await makeKey('RS256', 'unknown-kid');
      await expectInvalidToken(auth.authenticate(bearer(await signToken(stranger))), 'Token signing key is not known');
      expect(server.requests).to.equal(2, 'the unknown kid caused a successful refetch');
      expect(auth.status().jwt?.lastKeyError).to.equal(null);
    });
  });

  it('never puts the token in the message or the log', async () => {
    const token = await signToken(rsaKey, { exp: T0_SECONDS - 3600 });
    const error = await expectInvalidToken(auth.authenticate(bearer(token)), 'Token has expired');
    const signature = token.split('.')[2] as string;
    expect(JSON.stringify(error.headers)).not.to.include(signature);
    expect(JSON.stringify(lines)).not.to.include(signature);
  });
});
