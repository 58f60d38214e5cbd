// The index on the test backend without the rest of the service, opened through the service's own
// openBackend (src/store/backend.ts): the read side, a seed writer, and each cluster's writer as the
// indexer gets it once it holds the cluster's write lock. SQLite: a file in a temporary folder;
// PostgreSQL: a fresh database on the process's shared server (GPUCAP_TEST_BACKEND, backend.ts).
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { Clock } from '../../src/domain/clock.js';
import type { WorkloadIndex } from '../../src/query/ports.js';
import { Disposables } from '../../src/runtime/disposables.js';
import { openBackend } from '../../src/store/backend.js';
import { type BackendLocation, type IndexBackend } from '../../src/store/index-backend.js';
import { type SeedWriter } from '../../src/store/ports.js';
import { TYPES } from '../../src/store/postgres/connection.js';
import type { WorkloadSink } from '../../src/workloads/workload-sink.js';
import { TEST_BACKEND, testIndexLocation, type TestBackend, type TestIndexLocation } from './backend.js';
import { makeTempDir } from './temp-dir.js';

/** A cluster's writer: what the indexer writes through while it holds the cluster's lock. */
export type ClusterWriter = WorkloadSink & { release(): Promise<void> };

type Row = Record<string, unknown>;

export interface TestIndex {
  backend: TestBackend;
  /** Where the index is, for the seeds that write as another part of the service does (usage-seed.ts). */
  location: TestIndexLocation;
  /** The read side, as the API reads it (SQLite: on the main thread). */
  index: WorkloadIndex;
  /** Writes outside any cluster's lock, as tests seed a running service (RunningService.store). */
  seed: SeedWriter;
  /** Cluster `clusterId`'s writer, taking its lock on first use; the same one until nextRun(). */
  writer(clusterId: string): Promise<ClusterWriter>;
  /** One statement with `?` placeholders, on a connection of the test's own. */
  sql(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Rows of the workloads table. */
  countRows(): Promise<number>;
  /**
   * The next run of the service over the same index: the writers of this run let their locks go,
   * as a stopped replica's do, and a new backend is opened beside this one (which stays readable).
   */
  nextRun(): Promise<TestIndex>;
  /** Closes every run and removes the index. */
  close(): Promise<void>;
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

export async function openTestIndex(options: { clock: Clock }): Promise<TestIndex> {
  const temp = makeTempDir('gpucap-index-');
  let location: TestIndexLocation;
  try {
    location = await testIndexLocation(temp.path);
  } catch (error) {
    temp.remove();
    throw error;
  }
  const sql = rawSql(location);
  const runs: Run[] = [];
  // Every step runs, whatever failed before it (Disposables): a close that fails half-way must not
  // leave a database or a folder behind for the tests after it.
  const closeAll = async (): Promise<void> => {
    const steps = new Disposables(silent);
    steps.add('temporary folder', () => temp.remove());
    steps.add('database', () => location.remove());
    steps.add('connection', () => sql.close());
    for (const run of runs.splice(0)) steps.add('run', () => run.close());
    await steps.disposeAll();
  };
  const open = async (): Promise<TestIndex> => {
    let run: Run;
    try {
      run = await Run.open(location, options.clock, runs.length);
    } catch (error) {
      await closeAll();
      throw error;
    }
    runs.push(run);
    return {
      backend: TEST_BACKEND,
      location,
      index: run.backend.index,
      seed: run.backend.seed,
      writer: (clusterId) => run.writer(clusterId),
      sql: (text, params = []) => sql.query(text, params),
      countRows: async () => Number((await sql.query('SELECT count(*) AS n FROM workloads', []))[0]?.n),
      nextRun: async () => {
        await run.releaseWriters();
        return open();
      },
      close: closeAll,
    };
  };
  return open();
}

/** One run of the service's index: its backend and the clusters' writers it took. */
class Run {
  readonly backend: IndexBackend;
  readonly #writers = new Map<string, Promise<ClusterWriter>>();

  private constructor(backend: IndexBackend) {
    this.backend = backend;
  }

  static async open(location: TestIndexLocation, clock: Clock, run: number): Promise<Run> {
    const where: BackendLocation = location.kind === 'sqlite' ? { kind: 'sqlite', path: location.path } : { kind: 'postgres', url: location.url, readUrl: undefined };
    const backend = await openBackend(where, {
      instanceId: `test-run-${run}`,
      clock,
      readWorkers: 0,
      poolSize: 4,
      leaseSeconds: 10,
      logger: silent,
      gauge: () => undefined,
    });
    return new Run(backend);
  }

  writer(clusterId: string): Promise<ClusterWriter> {
    let writer = this.#writers.get(clusterId);
    if (writer === undefined) {
      writer = this.#acquire(clusterId);
      this.#writers.set(clusterId, writer);
    }
    return writer;
  }

  async releaseWriters(): Promise<void> {
    const writers = [...this.#writers.values()];
    this.#writers.clear();
    for (const writer of writers) await (await writer.catch(() => null))?.release();
  }

  async close(): Promise<void> {
    await this.releaseWriters();
    await this.backend.close();
  }

  async #acquire(clusterId: string): Promise<ClusterWriter> {
    const leases = this.backend.leases as { lease(id: string): { acquire(): Promise<ClusterWriter | null> } };
    const session = await leases.lease(clusterId).acquire();
    if (session === null) throw new Error(`Cannot write cluster "${clusterId}" in this test: another run holds its write lock`);
    return session;
  }
}

/** A connection of the test's own to the index, for the few checks no port answers. */
function rawSql(location: TestIndexLocation): { query(text: string, params: readonly unknown[]): Promise<Row[]>; close(): Promise<void> } {
  if (location.kind === 'sqlite') {
    let db: BetterSqlite3.Database | undefined;
    return {
      // Opened on first use: the service's backend creates the file.
      query: async (text, params) => {
        db ??= new BetterSqlite3(location.path);
        return db.prepare(text).all(...params) as Row[];
      },
      close: async () => {
        db?.close();
      },
    };
  }
  let client: Promise<pg.Client> | undefined;
  return {
    query: async (text, params) => {
      client ??= (async () => {
        const connected = new pg.Client({ connectionString: location.url, types: TYPES });
        await connected.connect();
        return connected;
      })();
      let n = 0;
      return (await (await client).query(text.replace(/\?/g, () => `$${++n}`), [...params])).rows as Row[];
    },
    close: async () => {
      await (await client)?.end();
    },
  };
}
