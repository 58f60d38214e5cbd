// next_token: an opaque keyset cursor. It carries the position (submitted_at, workload_id) and a
// digest of the filters it was issued for, so reusing it with other filters is detected rather than
// silently paging through a different result set (DECISIONS "Lists").
import { createHash } from 'node:crypto';
import type { Keyset } from './ports.js';

const VERSION = 1;

export function filterDigest(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(Object.keys(filters).sort().map((k) => [k, filters[k] ?? null]));
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

export function encodeCursor(position: Keyset, digest: string): string {
  return Buffer.from(JSON.stringify([VERSION, position.submittedAt, position.workloadId, digest])).toString('base64url');
}

export type CursorProblem = 'malformed' | 'other_filters';

export function decodeCursor(token: string, digest: string): Keyset | CursorProblem {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(token)) return 'malformed';
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return 'malformed';
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return 'malformed';
  const [version, submittedAt, workloadId, tokenDigest] = parsed as unknown[];
  if (
    version !== VERSION ||
    !Number.isSafeInteger(submittedAt) ||
    typeof workloadId !== 'string' ||
    workloadId === '' ||
    typeof tokenDigest !== 'string'
  ) {
    return 'malformed';
  }
  if (tokenDigest !== digest) return 'other_filters';
  return { submittedAt: submittedAt as number, workloadId };
}
