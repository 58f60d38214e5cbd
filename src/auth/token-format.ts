// The API token format, shared by the token store (verification) and the CLI (minting).
// A token is `gca_` + base64url of 32 random bytes; only its SHA-256 (hex) is ever stored.
import { createHash, randomBytes } from 'node:crypto';

export const API_TOKEN_PREFIX = 'gca_';

const API_TOKEN_SHAPE = /^gca_[A-Za-z0-9_-]{43}$/;

/** A new random API token: `gca_` followed by 43 base64url characters (256 bits). */
export function generateApiToken(): string {
  return API_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** True when the text carries the API token prefix (it may still be malformed). */
export function hasApiTokenPrefix(text: string): boolean {
  return text.startsWith(API_TOKEN_PREFIX);
}

/** True when the text has exactly the shape `generateApiToken` produces. */
export function isApiTokenShape(text: string): boolean {
  return API_TOKEN_SHAPE.test(text);
}

/** SHA-256 of the whole token string (prefix included), as 64 lowercase hex characters. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
