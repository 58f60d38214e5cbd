// JWTs for local runs (the `npm run token` CLI, the demo): an ES256 key pair kept in a dev folder,
// its public half published as a JWKS file the service reads with GPUCAP_JWKS_FILE. Never for production.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Role } from '../access/principal.js';

export const DEV_ISSUER = 'gpucap-dev';
export const DEV_AUDIENCE = 'gpu-capacity-api';
const ALG = 'ES256';

export interface DevJwtOptions {
  role: Role;
  organizationId: string;
  initiatives: readonly string[];
  subject: string;
  ttlSeconds: number;
  /** Folder of `private.jwk` and `jwks.json`; created (mode 0700) when missing. */
  devDir: string;
  /** Make a new signing key; the old public keys stay in jwks.json so tokens already issued stay valid. */
  rotate?: boolean;
  /** Epoch ms used for `iat` and `exp`. Default: now. */
  now?: number;
}

export interface DevJwt {
  token: string;
  kid: string;
  /** Absolute path of the JWKS file to give the service. */
  jwksFile: string;
  /** The environment variables the service needs to accept the token. */
  env: Record<string, string>;
}

/** Signs a JWT with the dev key (creating it on first use) and the default claim names. */
export async function mintDevJwt(options: DevJwtOptions): Promise<DevJwt> {
  const devDir = resolve(options.devDir);
  const { key, kid } = await devSigningKey(devDir, options.rotate ?? false);
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const token = await new SignJWT({ org_id: options.organizationId, role: options.role, initiatives: [...options.initiatives] })
    .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
    .setIssuer(DEV_ISSUER)
    .setAudience(DEV_AUDIENCE)
    .setSubject(options.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + options.ttlSeconds)
    .sign(key);
  const jwksFile = join(devDir, 'jwks.json');
  return {
    token,
    kid,
    jwksFile,
    env: { GPUCAP_JWKS_FILE: jwksFile, GPUCAP_JWT_ISSUER: DEV_ISSUER, GPUCAP_JWT_AUDIENCE: DEV_AUDIENCE },
  };
}

async function devSigningKey(devDir: string, rotate: boolean): Promise<{ key: CryptoKey; kid: string }> {
  mkdirSync(devDir, { recursive: true, mode: 0o700 });
  const privatePath = join(devDir, 'private.jwk');
  const jwksPath = join(devDir, 'jwks.json');
  let privateJwk: JWK;
  if (!rotate && existsSync(privatePath)) {
    privateJwk = JSON.parse(readFileSync(privatePath, 'utf8')) as JWK;
    if (typeof privateJwk.kid !== 'string' || typeof privateJwk.d !== 'string') {
      throw new Error(`${privatePath} is not an ES256 private JWK with a "kid"; delete it or use --rotate`);
    }
  } else {
    const pair = await generateKeyPair(ALG, { extractable: true });
    const kid = await calculateJwkThumbprint(await exportJWK(pair.publicKey));
    privateJwk = { ...(await exportJWK(pair.privateKey)), kid, alg: ALG, use: 'sig' };
  }
  const publicJwk: JWK = { ...privateJwk };
  delete publicJwk.d;
  const kid = privateJwk.kid as string;
  // Public keys first, so the JWKS names the key in force first; old keys stay for tokens already issued.
  const known = readKeys(jwksPath);
  if (!known.some((jwk) => jwk.kid === kid)) {
    writeAtomically(jwksPath, `${JSON.stringify({ keys: [publicJwk, ...known] }, null, 2)}\n`, 0o644);
  }
  if (rotate || !existsSync(privatePath)) writeAtomically(privatePath, `${JSON.stringify(privateJwk, null, 2)}\n`, 0o600);
  return { key: (await importJWK(privateJwk, ALG)) as CryptoKey, kid };
}

function readKeys(jwksPath: string): JWK[] {
  if (!existsSync(jwksPath)) return [];
  const doc = JSON.parse(readFileSync(jwksPath, 'utf8')) as { keys?: unknown };
  if (!Array.isArray(doc.keys)) throw new Error(`${jwksPath} has no "keys" array; delete it to start over`);
  return doc.keys as JWK[];
}

/** Write-then-rename, so a service reading the file never sees half of it. */
export function writeAtomically(path: string, text: string, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
}
