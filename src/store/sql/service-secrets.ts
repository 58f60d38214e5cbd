// The secrets of the service that the index keeps (service_secrets, schema v13). Each is made once,
// by the first process that opens the index and needs it (a random value inserted unless a row is
// there, then read back), so that every replica on one PostgreSQL, and every run of a pod on its
// SQLite file, holds the same one. `gpucap migrate` copies none: the target makes its own.

/** The key of next_token's MAC (src/query/cursor.ts). */
export const CURSOR_KEY_SECRET = 'next_token_mac';

/** Bytes of a new secret: HMAC-SHA-256 takes a key of this size as it is. */
export const SECRET_BYTES = 32;

/** The read of one secret; `@name` its name. */
export const SECRET_SQL = 'SELECT value FROM service_secrets WHERE name = @name';

export interface SecretRow {
  value: Uint8Array;
}

/** A secret that should be there and is not: the index was opened without making it. */
export function missingSecretError(name: string): Error {
  return new Error(
    `The index holds no secret "${name}" (table service_secrets): it is made when the service opens the index read-write; ` +
      'open it through openBackend (src/store/backend.ts)',
  );
}
