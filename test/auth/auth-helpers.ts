// Shared pieces of the auth tests: a settable clock, a logger whose lines can be inspected, temp
// folders, a real JWKS server on loopback, token signing, and checks for the 401 and 503 a caller sees.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';
import { pino, type Logger } from 'pino';
import type { AuthConfig } from '../../src/auth/authenticator.js';
import { ApiError } from '../../src/domain/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { rejectionOf as anyRejectionOf } from '../support/rejection.js';

export const T0 = Date.parse('2026-11-22T10:00:00Z');
export const T0_SECONDS = T0 / 1000;
export const ISSUER = 'https://idp.example.com/realms/acme';
export const AUDIENCE = 'gpu-capacity-api';

export class TestClock {
  constructor(private ms: number = T0) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (text: string) => void lines.push(JSON.parse(text) as LogLine) });
  return { logger, lines };
}

export const ERROR_LEVEL = 50;

/** A fresh folder under the OS temp dir; remove it with `removeDir` in afterEach. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'gpucap-auth-'));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The service's real defaults, minus the credential source the loader insists on. */
const { api_tokens_file: _required, ...DEFAULTS } = loadConfig({ GPUCAP_API_TOKENS_FILE: '/unused' });

/** Config with JWT and API tokens off; tests switch on what they need. */
export function baseConfig(overrides: Partial<AuthConfig>): AuthConfig {
  return { ...DEFAULTS, jwt_issuer: ISSUER, jwt_audience: AUDIENCE, ...overrides };
}

export interface TestKey {
  alg: 'RS256' | 'ES256';
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export async function makeKey(alg: 'RS256' | 'ES256', kid?: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const exported = await exportJWK(publicKey);
  const keyId = kid ?? (await calculateJwkThumbprint(exported));
  return { alg, kid: keyId, privateKey, publicKey, publicJwk: { ...exported, kid: keyId, alg, use: 'sig' } };
}

export function jwksOf(...keys: TestKey[]): JSONWebKeySet {
  return { keys: keys.map((key) => key.publicJwk) };
}

/** Claims of a valid TEAM_LEAD token at T0; an `undefined` override removes the claim. */
export function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const all: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'alice',
    iat: T0_SECONDS,
    exp: T0_SECONDS + 3600,
    org_id: 'acme',
    role: 'TEAM_LEAD',
    initiatives: ['llm', 'vision'],
    ...overrides,
  };
  for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
  return all;
}

export async function signToken(key: TestKey, overrides: Record<string, unknown> = {}, header: { kid?: string } = {}): Promise<string> {
  return new SignJWT(claims(overrides)).setProtectedHeader({ alg: key.alg, kid: header.kid ?? key.kid, typ: 'JWT' }).sign(key.privateKey);
}

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** The ApiError a rejected call produced; fails the test when the call succeeds or throws anything else. */
export async function rejectionOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await anyRejectionOf(promise);
  expect(error).to.be.instanceOf(ApiError);
  return error as ApiError;
}

/** Asserts the 401 a client sees: code, status, message and the RFC 6750 challenge. */
export async function expectInvalidToken(promise: Promise<unknown>, message: string): Promise<ApiError> {
  const error = await rejectionOf(promise);
  expect(error.code).to.equal('UNAUTHENTICATED');
  expect(error.status).to.equal(401);
  expect(error.message).to.equal(message);
  expect(error.headers['WWW-Authenticate']).to.equal(
    `Bearer realm="gpu-capacity-api", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`,
  );
  return error;
}

/** Asserts the 503 a client sees when the identity provider's keys cannot be had: a retry, not a new token. */
export async function expectKeysUnavailable(promise: Promise<unknown>, retryAfterSeconds: string): Promise<ApiError> {
  const error = await rejectionOf(promise);
  expect(error.code).to.equal('UNAVAILABLE');
  expect(error.status).to.equal(503);
  expect(error.message).to.equal("The identity provider's keys cannot be fetched right now; retry shortly");
  expect(error.headers).to.deep.equal({ 'Retry-After': retryAfterSeconds });
  return error;
}

export interface JwksServer {
  url: string;
  /** JWKS requests served so far. */
  requests: number;
  serve(jwks: JSONWebKeySet): void;
  /** Answer with this HTTP status instead of the key set (500: the identity provider is broken). */
  failWith(status: number): void;
  /** Answer 302 to this URL instead of the key set. */
  redirectTo(url: string): void;
  /** Answer 200 with this body instead of the key set (an identity provider serving garbage). */
  serveRaw(body: string): void;
  /** Accept requests and never answer them. */
  hang(): void;
  /** Stop listening, so that connections are refused, until `up`. */
  down(): Promise<void>;
  /** Listen again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startJwksServer(initial: JSONWebKeySet): Promise<JwksServer> {
  let body = JSON.stringify(initial);
  let status = 200;
  let hanging = false;
  let location: string | null = null;
  const state = { requests: 0 };
  const server: Server = createServer((_req, res) => {
    state.requests += 1;
    if (hanging) return;
    if (location !== null) {
      res.writeHead(302, { location });
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? body : '{"error":"boom"}');
  });
  const listen = (port: number): Promise<void> => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const stop = async (): Promise<void> => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get requests() {
      return state.requests;
    },
    serve(jwks) {
      body = JSON.stringify(jwks);
      status = 200;
      hanging = false;
      location = null;
    },
    failWith(code) {
      status = code;
    },
    redirectTo(url) {
      location = url;
    },
    serveRaw(text) {
      body = text;
      status = 200;
      hanging = false;
    },
    hang() {
      hanging = true;
    },
    down: stop,
    async up() {
      if (!server.listening) await listen(port);
    },
    close: stop,
  };
}
