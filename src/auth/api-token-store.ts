// Verifies API tokens against the records file. Only SHA-256 hashes are stored; the presented
// token's hash is compared with every record in constant time, so neither the time taken nor a
// lookup structure keyed by a secret-derived value tells an attacker how close a guess came.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../access/principal.js';
import { parseApiTokenFile, type ApiTokenRecord } from './api-token-file.js';
import { createReloadingFile } from './reloading-file.js';
import { isApiTokenShape } from './token-format.js';
import { invalidToken } from './unauthenticated.js';

export interface ApiTokenStoreStatus {
  records: number;
  lastLoadError: string | null;
  /** Clock time (ms) the records in force were loaded. */
  loadedAt: number;
}

export interface ApiTokenStore {
  /** The principal of a valid token; otherwise throws ApiError UNAUTHENTICATED. */
  authenticate(token: string): Principal;
  status(): ApiTokenStoreStatus;
}

interface LoadedRecord {
  record: ApiTokenRecord;
  digest: Buffer;
}

/** Loads the file now: an invalid or unreadable file throws (the service should refuse to start). */
export function createApiTokenStore(
  options: { file: string; reloadSeconds: number },
  deps: { clock: Clock; logger: Logger },
): ApiTokenStore {
  const source = createReloadingFile(
    {
      path: options.file,
      what: 'API tokens file',
      checkIntervalMs: options.reloadSeconds * 1000,
      parse: (text) => parseApiTokenFile(text).map((record) => ({ record, digest: Buffer.from(record.sha256, 'hex') })),
      // Deleting the file is how an operator revokes every token at once; a broken file revokes nothing.
      whenDeleted: { value: [], consequence: 'every token from it is rejected' },
    },
    deps,
  );

  return {
    authenticate(token) {
      if (!isApiTokenShape(token)) throw invalidToken('API token is malformed');
      const records = source.current();
      const digest = createHash('sha256').update(token, 'utf8').digest();
      let match: LoadedRecord | undefined;
      // No early exit: every record is compared whatever the outcome.
      for (const candidate of records) {
        const equal = timingSafeEqual(digest, candidate.digest);
        if (equal && match === undefined) match = candidate;
      }
      if (match === undefined) throw invalidToken('Unknown API token');
      const { record } = match;
      if (record.expiresAt !== null && record.expiresAt <= deps.clock.now()) throw invalidToken('API token has expired');
      return {
        id: record.id,
        kind: 'api_token',
        organizationId: record.organizationId,
        role: record.role,
        initiatives: record.initiatives,
      };
    },
    status() {
      return { records: source.peek().length, ...source.status() };
    },
  };
}
