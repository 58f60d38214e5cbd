import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { exportJWK } from 'jose';
import { createAuthenticator, type StatusReportingAuthenticator } from '../../src/auth/authenticator.js';
import {
  baseConfig,
  bearer,
  captureLogger,
  ERROR_LEVEL,
  expectInvalidToken,
  expectKeysUnavailable,
  jwksOf,
  makeKey,
  removeDir,
  signToken,
  tempDir,
  TestClock,
  type LogLine,
  type TestKey,
} from './auth-helpers.js';
import type { JSONWebKeySet } from 'jose';

describe('JWT authentication against a local JWKS file', () => {
  let dir: string;
  let file: string;
  let keyA: TestKey;
  let keyB: TestKey;
  let clock: TestClock;
  let lines: LogLine[];
  let auth: StatusReportingAuthenticator;

  const write = (jwks: JSONWebKeySet | string): void => writeFileSync(file, typeof jwks === 'string' ? jwks : JSON.stringify(jwks));
  const build = (): StatusReportingAuthenticator => {
    const captured = captureLogger();
    lines = captured.lines;
    // The file is checked for changes at most every jwks_cooldown_seconds (10 s here), by the clock.
    return createAuthenticator(baseConfig({ jwks_file: file, jwks_cooldown_seconds: 10 }), { clock, logger: captured.logger });
  };

  before(async () => {
    keyA = await makeKey('ES256');
    keyB = await makeKey('ES256');
  });

  beforeEach(() => {
    dir = tempDir();
    file = join(dir, 'jwks.json');
    clock = new TestClock();
    write(jwksOf(keyA));
    auth = build();
  });

  afterEach(() => {
    auth.close();
    removeDir(dir);
  });

  it('accepts a token signed by a key in the file', async () => {
    const principal = await auth.authenticate(bearer(await signToken(keyA)));
    expect(principal).to.include({ kind: 'jwt', organizationId: 'acme', role: 'TEAM_LEAD' });
    expect(auth.status().jwt).to.deep.equal({ source: 'file', lastKeyError: null });
  });

  it('rejects a token signed by a key that is not in the file', async () => {
    await expectInvalidToken(auth.authenticate(bearer(await signToken(keyB))), 'Token signing key is not known');
  });

  it('picks up a key added to the file once the check interval has passed', async () => {
    const token = await signToken(keyB);
    write(jwksOf(keyB, keyA));
    await expectInvalidToken(auth.authenticate(bearer(token)), 'Token signing key is not known');
    clock.advance(10_000);
    const principal = await auth.authenticate(bearer(token));
    expect(principal.id).to.match(/:alice$/);
  });

  it('stops accepting a key removed from the file', async () => {
    const token = await signToken(keyA);
    await auth.authenticate(bearer(token));
    write(jwksOf(keyB));
    clock.advance(10_000);
    await expectInvalidToken(auth.authenticate(bearer(token)), 'Token signing key is not known');
  });

  it('keeps the last valid keys and logs at error when the file turns invalid', async () => {
    write('{"keys": [');
    clock.advance(10_000);
    const principal = await auth.authenticate(bearer(await signToken(keyA)));
    expect(principal.role).to.equal('TEAM_LEAD');
    const errors = lines.filter((line) => line.level === ERROR_LEVEL);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ msg: 'JWKS file is invalid; the last valid version stays in force', file });
    expect(String(errors[0]?.reason)).to.match(/^not valid JSON/);
    expect(auth.status().jwt?.lastKeyError).to.match(/^not valid JSON/);
  });

  it('answers 503 with Retry-After, not 401, when the key in the file cannot be imported', async () => {
    // Valid JSON of the right shape passes the load; the broken key material shows only when used.
    write({ keys: [{ ...keyA.publicJwk, x: 'AAAA' }] });
    auth = build();
    await expectKeysUnavailable(auth.authenticate(bearer(await signToken(keyA))), '10');
    const errors = lines.filter((line) => line.level === ERROR_LEVEL);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ msg: 'Cannot get the JWT signing keys; JWTs are rejected until this is fixed', jwks: file });
    expect(auth.status().jwt?.lastKeyError).to.match(/Invalid keyData/);
  });

  it('refuses to start when the file holds a private key', async () => {
    const privateJwk = await exportJWK(keyA.privateKey);
    write({ keys: [{ ...privateJwk, kid: 'k1' }] });
    expect(() => build()).to.throw(`Cannot load JWKS file "${file}": keys[0]: holds a private key ("d"); publish public keys only`);
  });

  it('refuses to start when the file is missing', () => {
    removeDir(dir);
    expect(() => build()).to.throw(`Cannot load JWKS file "${file}": file not found`);
  });

  it('refuses to start with a symmetric key in the file', () => {
    write({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' }] });
    expect(() => build()).to.throw('keys[0]: symmetric keys ("kty": "oct") are not accepted');
  });
});
