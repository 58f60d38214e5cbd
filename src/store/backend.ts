// The index's backend, chosen once from its location (config db_url / db_path): SQLite in one pod's
// file, or a PostgreSQL database that many replicas and many clusters' releases share. This is the
// only module that knows both backends; each builds the same parts (index-backend.ts).
import type { BackendLocation, BackendOptions, IndexBackend } from './index-backend.js';
import { openPostgres } from './postgres/open-postgres.js';
import { openSqlite } from './sqlite/open-sqlite.js';

export async function openBackend(location: BackendLocation, options: BackendOptions): Promise<IndexBackend> {
  return location.kind === 'sqlite' ? openSqlite(location.path, options) : openPostgres(location, options);
}
