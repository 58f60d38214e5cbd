// next_token: an opaque keyset cursor. It carries the position (submitted_at, workload_id) and a
// digest of the filters it was issued for, so reusing it with other filters is detected rather than
// silently paging through a different result set (DECISIONS "Lists"). A MAC under the index's key
// (WorkloadIndex.cursorKey) binds the three: only a token this service issued pages on, so nobody can
// recompute the digest of their own filters and start a page at a position of their choosing. Every
// replica on one index shares the key; a token of another index, or of version 1 (which had no
// MAC), is refused as one the service did not issue.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyset } from './ports.js';

const VERSION = 2;
/** Bytes of HMAC-SHA-256 kept: 128 bits, beyond guessing at any request rate. */
const MAC_BYTES = 16;
const MAC_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** What the MAC covers besides the fields: a key that ever signed anything else still signs no cursor. */
const MAC_CONTEXT = 'gpucap next_token\n';

/** The filters' digest, not keyed: it tells a token reused with other filters apart; the MAC makes it binding. */
export function filterDigest(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(Object.keys(filters).sort().map((k) => [k, filters[k] ?? null]));
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

function macOf(key: Uint8Array, fields: readonly [number, number, string, string]): Buffer {
  return createHmac('sha256', key).update(MAC_CONTEXT).update(JSON.stringify(fields)).digest().subarray(0, MAC_BYTES);
}

export function encodeCursor(position: Keyset, digest: string, key: Uint8Array): string {
  const fields = [VERSION, position.submittedAt, position.workloadId, digest] as const;
  return Buffer.from(JSON.stringify([...fields, macOf(key, fields).toString('base64url')])).toString('base64url');
}

/** 'malformed': not a token issued with this key (forged, altered, of another index or version); 'other_filters': issued for others. */
export type CursorProblem = 'malformed' | 'other_filters';

export function decodeCursor(token: string, digest: string, key: Uint8Array): Keyset | CursorProblem {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(token)) return 'malformed';
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return 'malformed';
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) return 'malformed';
  const [version, submittedAt, workloadId, tokenDigest, mac] = parsed as unknown[];
  if (
    version !== VERSION ||
    !Number.isSafeInteger(submittedAt) ||
    typeof workloadId !== 'string' ||
    workloadId === '' ||
    typeof tokenDigest !== 'string' ||
    typeof mac !== 'string' ||
    !MAC_PATTERN.test(mac)
  ) {
    return 'malformed';
  }
  const expected = macOf(key, [VERSION, submittedAt as number, workloadId, tokenDigest]);
  const given = Buffer.from(mac, 'base64url');
  // The last of 22 characters carries 2 bits: only the one spelling of the MAC is the service's.
  if (given.length !== expected.length || given.toString('base64url') !== mac || !timingSafeEqual(given, expected)) return 'malformed';
  if (tokenDigest !== digest) return 'other_filters';
  return { submittedAt: submittedAt as number, workloadId };
}
