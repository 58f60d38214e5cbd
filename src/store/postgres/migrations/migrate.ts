// Brings a PostgreSQL index up to this build's schema, and refuses one that a newer build has moved
// past what this build understands. There is no migration Job: the first replica to start migrates,
// and the others wait on the schema lock, then find nothing left to do.
import { SCHEMA_LOCK_SQL } from '../locks.js';
import { LATEST_VERSION, MIGRATIONS, type Migration } from './schema.js';
import { ensurePartitions, nextMonthStart } from '../partitions.js';
import { inTransaction, type Queryable } from '../transaction.js';

export interface SchemaVersion {
  /** The newest migration applied; 0 for an empty database. */
  version: number;
  /** The oldest build version that may run on it (the newest migration's compatible_since). */
  compatibleSince: number;
}

export interface MigrateOptions {
  /** Now (epoch ms): the migrator creates the partitions of this month and the next PARTITIONS_AHEAD. */
  now: number;
  /** The list to apply; the build's own by default (tests pass others). */
  migrations?: readonly Migration[];
}

/** Months after the current one that always have their partitions, so that writes never wait on DDL. */
export const PARTITIONS_AHEAD = 2;

// DDL waiting for a table lock holds every reader and writer of that table queued behind it, so a
// migration gives up after this long (the replica's restart tries again) rather than stall traffic.
// The wait for the schema lock itself is not bounded: another replica's migration may take a while.
const DDL_LOCK_TIMEOUT = '5s';

/**
 * Applies the pending migrations, one transaction each under the schema lock, then makes sure the
 * partitions of this month and the next PARTITIONS_AHEAD exist. `client` must be a dedicated
 * connection, not in a transaction. Returns the database's schema version.
 */
export async function migrate(client: Queryable, options: MigrateOptions): Promise<SchemaVersion> {
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  for (;;) {
    const applied = await inTransaction(client, async () => {
      // The session's timeouts are a writer's or a reader's; a migration has its own.
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query('SET LOCAL lock_timeout = 0');
      await client.query(SCHEMA_LOCK_SQL);
      await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
      const current = await schemaVersion(client);
      await assertUsable(client, current, latest);
      const next = migrations.find((m) => m.version > current.version);
      if (next === undefined) return false;
      await client.query(next.sql);
      await client.query('INSERT INTO schema_migrations (version, description, compatible_since) VALUES ($1, $2, $3)', [
        next.version,
        next.description,
        next.compatibleSince,
      ]);
      return true;
    });
    if (!applied) break;
  }
  const months = [options.now];
  for (let i = 0; i < PARTITIONS_AHEAD; i++) months.push(nextMonthStart(months[months.length - 1] ?? options.now));
  await ensurePartitions(client, months);
  return schemaVersion(client);
}

/** The database's schema version; { 0, 0 } before the first migration. */
export async function schemaVersion(client: Queryable): Promise<SchemaVersion> {
  const { rows: [table] } = await client.query<{ found: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS found");
  if (table?.found !== true) return { version: 0, compatibleSince: 0 };
  const { rows: [row] } = await client.query<{ version: number; compatible_since: number }>(
    'SELECT version, compatible_since FROM schema_migrations ORDER BY version DESC LIMIT 1',
  );
  return row === undefined ? { version: 0, compatibleSince: 0 } : { version: row.version, compatibleSince: row.compatible_since };
}

/**
 * Throws when this build (schema `known`) cannot run on `found`: a newer schema is usable only if the
 * migrations since ours kept our version compatible. For replicas that do not migrate (a read URL).
 */
export async function assertUsable(client: Queryable, found: SchemaVersion, known = LATEST_VERSION): Promise<void> {
  if (found.version <= known || found.compatibleSince <= known) return;
  const { rows: [row] } = await client.query<{ name: string }>('SELECT current_database() AS name');
  throw newerSchemaError(row?.name ?? '?', found, known);
}

/** The twin of SQLite's newerSchemaError (src/store/sqlite/migrations/migrate.ts). */
export function newerSchemaError(database: string, found: SchemaVersion, known: number): Error {
  return new Error(
    `Cannot use index database "${database}": its schema version ${found.version} is newer than this build knows (${known}) ` +
      `and needs a build of schema version ${found.compatibleSince} or newer; ` +
      'run a newer gpu-capacity-api or point db_url (GPUCAP_DB_URL) at another database',
  );
}
