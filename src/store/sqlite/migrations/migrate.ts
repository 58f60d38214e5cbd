// Schema of the index, versioned by `PRAGMA user_version`. Migrations only ever get appended: a
// released version's SQL never changes, because files on PersistentVolumes already carry it.
import type { Database } from 'better-sqlite3';
import { V1 } from './v01-workloads.js';
import { V2 } from './v02-gpu-lifetimes.js';
import { V3 } from './v03-rollups.js';
import { V4, WRITER_ROLLUPS_SINCE } from './v04-writer-rollups.js';
import { V5 } from './v05-failure-reasons.js';
import { V6 } from './v06-usage.js';
import { V7 } from './v07-queue-rollups.js';
import { V8 } from './v08-queue-ranking.js';
import { V9 } from './v09-usage-index.js';
import { V10 } from './v10-initiative-rollups.js';
import { V11 } from './v11-weekly-submitter-rollups.js';
import { V12 } from './v12-gpu-shares.js';
import { V13 } from './v13-service-secrets.js';
import { V14 } from './v14-fleet-history.js';
import { V15 } from './v15-capacity-types.js';

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'workloads, workload_pods, the count rollup and their indexes', sql: V1 },
  { version: 2, description: 'GPU metric totals over each workload\'s life', sql: V2 },
  { version: 3, description: 'rollups for statistics, the GPU-hours ranking, list counts and capacity since ever', sql: V3 },
  { version: WRITER_ROLLUPS_SINCE, description: 'rollups kept by the writer per batch: the rollup triggers dropped', sql: V4 },
  { version: 5, description: 'failure reasons of failed and cancelled workloads, and their daily rollup', sql: V5 },
  { version: 6, description: 'what each workload\'s GPUs did (idle, efficiency, energy, XID errors), and its daily rollup', sql: V6 },
  { version: 7, description: 'the queue figures of the daily rollups: workloads waiting and the base of their queue time', sql: V7 },
  { version: 8, description: 'the queue figures of workload_totals and the index of the waits that ended, for the queue ranking', sql: V8 },
  { version: 9, description: 'the idle index of usage covers the sums of the usage rankings', sql: V9 },
  {
    version: 10,
    description: 'the daily rollups of workloads and usage per initiative, for the summary and the groups by initiative',
    sql: V10,
  },
  {
    version: 11,
    description: 'the weekly rollups of workloads and usage by submitter, for the groups by submitter over whole weeks',
    sql: V11,
  },
  {
    version: 12,
    description: 'GPU-hours in whole-GPU equivalents: REAL open GPUs, and each row\'s allocated GPUs, sharing and model',
    sql: V12,
  },
  { version: 13, description: 'secrets of the service kept in the index: the key of next_token\'s MAC', sql: V13 },
  {
    version: 14,
    description: 'the fleet\'s history: each node\'s GPU time by state, by hour and by day, and each cluster\'s mark',
    sql: V14,
  },
  {
    version: 15,
    description: 'how each workload\'s node and each node of the fleet\'s history is sold: on-demand, spot or reserved',
    sql: V15,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

export function schemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Applies the pending migrations, one transaction each. IMMEDIATE takes the write lock before the
 * version is re-read, so two processes opening the same file cannot both apply a step.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const step = db.transaction(() => {
      const current = schemaVersion(db);
      if (current > latest) throw newerSchemaError(db.name, current, latest);
      if (current >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    step.immediate();
  }
  return schemaVersion(db);
}

export function newerSchemaError(path: string, found: number, known: number): Error {
  return new Error(
    `Cannot use index database "${path}": its schema version ${found} is newer than this build knows (${known}); ` +
      'run a newer gpu-capacity-api or point db_path (GPUCAP_DB_PATH) at another file',
  );
}
