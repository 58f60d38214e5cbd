// The service's secrets in the PostgreSQL index (src/store/sql/service-secrets.ts): made by the first
// replica that opens the database, read back by every one. Replicas starting together each insert
// unless a row is there; the primary key lets one row in, and each reads that one.
import { randomBytes } from 'node:crypto';
import { missingSecretError, SECRET_BYTES } from '../sql/service-secrets.js';
import type { Queryable } from './transaction.js';

/** The secret `name`, made now if the database has none; `client` must be on the primary, not in a transaction. */
export async function ensureServiceSecret(client: Queryable, name: string): Promise<Buffer> {
  await client.query(
    'INSERT INTO service_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
    [name, randomBytes(SECRET_BYTES)],
  );
  const { rows: [row] } = await client.query<{ value: Buffer }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
  if (row === undefined) throw missingSecretError(name);
  return row.value;
}
