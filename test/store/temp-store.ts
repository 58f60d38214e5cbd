// A store on a real SQLite file in a fresh temporary folder, removed again by close().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../src/domain/clock.js';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { listUnfinished } from '../../src/store/sqlite/unfinished.js';
import { StatementCache } from '../../src/store/sqlite/statement-cache.js';
import type { Scope } from '../../src/access/principal.js';
import type { WorkloadFilter } from '../../src/query/ports.js';
import { openDatabase, type Database } from '../../src/store/sqlite/database.js';
import { sqliteIndex, sqliteWriter } from '../../src/store/sqlite/connection-ports.js';
import type { WorkloadWriter } from '../../src/store/writes/workload-writer.js';
import { boundWriter, type ClusterWrites } from '../../src/store/ports.js';
import type { SqlWorkloadIndex } from '../../src/store/reads/workload-index.js';

export interface TempStore {
  dir: string;
  path: string;
  db: Database;
  /** The store's writer on the connection. */
  store: WorkloadWriter;
  /** The writer with the unfinished rows' read: what a cluster's session gives the indexer. */
  sink: ClusterWrites;
  /** Rows of the workloads table. */
  countRows(): number;
  /** The pending and running rows of a cluster, as the indexer reads them. */
  listUnfinished(clusterId: string): WorkloadRecord[];
  /** The read port on the same connection. */
  index: SqlWorkloadIndex;
  close(): void;
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gpucap-store-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function openTempStore(options: { clock?: Clock } = {}): TempStore {
  const { dir, remove } = tempDir();
  const path = join(dir, 'nested', 'index.db');
  const db = openDatabase(path);
  const store = sqliteWriter(db, { clock: options.clock ?? systemClock });
  return {
    dir,
    path,
    db,
    store,
    sink: { ...boundWriter(store), listUnfinished: (clusterId) => listUnfinished(new StatementCache(db), clusterId) },
    countRows: () => (db.prepare('SELECT COUNT(*) AS n FROM workloads').get() as { n: number }).n,
    listUnfinished: (clusterId) => listUnfinished(new StatementCache(db), clusterId),
    index: sqliteIndex(db),
    close: () => {
      if (db.open) db.close();
      remove();
    },
  };
}

export const ORG = 'acme';
export const ADMIN: Scope = { organizationId: ORG, initiatives: null };

export function inOrg(extra: Partial<WorkloadFilter> = {}, scope: Scope = ADMIN): WorkloadFilter {
  return { scope, ...extra };
}

export const at = (iso: string): number => Date.parse(iso);

export const HOUR_MS = 3_600_000;
