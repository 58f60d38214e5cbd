// The service's secrets in the SQLite file (src/store/sql/service-secrets.ts): made on the first
// open that needs one, read back on every open. Two processes opening the file together both insert
// unless a row is there, under SQLite's write lock, and both read the one that won.
import { randomBytes } from 'node:crypto';
import { missingSecretError, SECRET_BYTES } from '../sql/service-secrets.js';
import type { Database } from './database.js';

/** The secret `name`, made now if the file has none; `db` must be open read-write. */
export function ensureServiceSecret(db: Database, name: string): Buffer {
  db.prepare('INSERT INTO service_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, randomBytes(SECRET_BYTES));
  const row = db.prepare('SELECT value FROM service_secrets WHERE name = ?').get(name) as { value: Buffer } | undefined;
  if (row === undefined) throw missingSecretError(name);
  return row.value;
}
