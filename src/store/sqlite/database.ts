// Opens the SQLite index file with the settings the service relies on and brings its schema up to date.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { LATEST_VERSION, migrate, newerSchemaError, schemaVersion } from './migrations/migrate.js';

export type { Database } from 'better-sqlite3';

export interface OpenOptions {
  /** Open for reads only (a query worker, a debugging tool): no migration, the schema must be current. */
  readonly?: boolean;
  /** Fail rather than create a missing file (a worker's connection: the main thread created the file). */
  mustExist?: boolean;
  /**
   * Whether the connection answers the API's reads (default true): such a connection maps the file and
   * keeps a large page cache. One that only writes, or reads a little beside the write worker, does
   * neither: the mapped pages a connection touches count in the process's RSS once per mapping (the
   * full-scale bench saw 1.6 GiB of them at 1M rows with every connection mapping the file), and
   * writes go through SQLite's page cache, never through the map.
   */
  servesReads?: boolean;
}

const BUSY_TIMEOUT_MS = 5000;
// Negative cache_size is KiB: 64 MiB of page cache per connection keeps the list indexes of a large
// organization hot. mmap lets reads use the OS page cache in place instead of copying each page
// through a read() call: on a 1 GB index (a million workloads) random lookups ran 2-3 times faster
// with the whole file mapped than with 256 MiB. The pages are file-backed and reclaimable, so this
// costs address space, not memory. SQLite clamps the value to its compile-time maximum (2 GiB).
const CACHE_KIB = 65536;
// A connection that does not answer reads: enough for the B-tree pages one write step walks.
const WRITER_CACHE_KIB = 16384;
const MMAP_BYTES = 2 * 1024 * 1024 * 1024;
// Bounds the WAL file after a checkpoint, so a burst of upserts does not leave a huge file behind.
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function openDatabase(path: string, options: OpenOptions = {}): Database {
  const readonly = options.readonly === true;
  const inMemory = path === ':memory:' || path === '';
  if (!inMemory && !readonly && options.mustExist !== true) mkdirSync(dirname(path), { recursive: true });

  const db = new BetterSqlite3(path, { readonly, fileMustExist: readonly || options.mustExist === true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // The first statement that touches the file is where SQLite notices it is not a database.
    const version = readVersion(db, path);
    if (version > LATEST_VERSION) throw newerSchemaError(path, version, LATEST_VERSION);
    if (readonly) {
      if (version !== LATEST_VERSION) {
        throw new Error(
          `Cannot read index database "${path}": its schema version ${version} is not ${LATEST_VERSION}; ` +
            'open it once read-write (start the service) to migrate it',
        );
      }
    } else {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    }
    db.pragma('foreign_keys = ON');
    const servesReads = options.servesReads ?? true;
    db.pragma(`cache_size = -${servesReads ? CACHE_KIB : WRITER_CACHE_KIB}`);
    db.pragma(`mmap_size = ${servesReads ? MMAP_BYTES : 0}`);
    db.pragma('temp_store = MEMORY');
    if (!readonly) migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function readVersion(db: Database, path: string): number {
  try {
    // sqlite_schema is read so that a non-database file fails here, not in the first query.
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return schemaVersion(db);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      const problem = code === 'SQLITE_NOTADB' ? 'is not an SQLite database' : 'is a damaged SQLite database';
      throw new Error(
        `Cannot open index database "${path}": the file ${problem} (${code}); ` +
          'move it away (the index is rebuilt from the cluster, history older than the cluster\'s objects is lost) ' +
          'or point db_path (GPUCAP_DB_PATH) at another file',
        { cause: error },
      );
    }
    throw error;
  }
}
