// Schema of the index on PostgreSQL, versioned in schema_migrations. Like SQLite's list
// (src/store/sqlite/migrations/migrate.ts), migrations only ever get appended and a released version's SQL
// never changes. Each runs in one transaction under the schema lock (migrate.ts); DDL is transactional
// in PostgreSQL, so a failed step leaves nothing behind.
//
// Version 1 is SQLite's v4: the same tables, columns and rollups, with these differences:
// - workloads and workload_pods are partitioned by month of submitted_at (partitions.ts), so that
//   retention drops a whole month. A unique key must hold the partition key, hence the primary keys
//   (workload_id, submitted_at) and (pod_uid, submitted_at): writers never change a row's
//   submitted_at, and a pod carries its workload's, so both land in the same month.
// - No triggers: the rollup tables are plain tables, written by the application from rollup deltas
//   (src/store/rollups/), and pods are deleted with their workload's month, not by a cascade.
// - Times stay bigint epoch ms and flags smallint 0/1, so the SQL builders shared with SQLite compare
//   and compute the same way (`is_managed = @managed` with 0 or 1; integer GPU-ms arithmetic).
// - Text keys are COLLATE "C": ordering, keyset cursors and the merges done in JavaScript compare
//   bytes, as SQLite does, whatever the database's default collation.
// - Sums are float8 (SQLite REAL), counts bigint (SQLite INTEGER). connection.ts reads both as JS
//   numbers; the figures stay below 2^53 (src/store/sqlite/migrations/v03-rollups.ts explains why they are exact).

import { V1 } from './v01-partitioned-workloads.js';
import { V2 } from './v02-gpu-buckets.js';
import { V3 } from './v03-row-keys.js';
import { V4 } from './v04-team-status-index.js';
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
  /**
   * The oldest version whose builds can still run on this schema: a migration that only adds (a table,
   * a nullable column, an index) keeps the previous value, so a rolling upgrade's old replicas keep
   * running beside the new ones.
   */
  compatibleSince: number;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'workloads and pods partitioned by month, the rollups, writer leases and their indexes (SQLite v4)',
    compatibleSince: 1,
    sql: V1,
  },
  {
    version: 2,
    description: 'GPU telemetry buckets per workload and their last-hour figures, shared by the replicas',
    compatibleSince: 1,
    sql: V2,
  },
  {
    version: 3,
    description: 'the month of each workload and pod by id (workload_keys, pod_keys), kept by statement triggers',
    compatibleSince: 1,
    sql: V3,
  },
  {
    version: 4,
    description: 'the index of a team\'s workloads of one status, in list order',
    compatibleSince: 1,
    sql: V4,
  },
  {
    version: 5,
    description: 'failure reasons of failed and cancelled workloads, and their daily rollup',
    compatibleSince: 5,
    sql: V5,
  },
  {
    version: 6,
    description: 'what each workload\'s GPUs did (idle, efficiency, energy, XID errors), and its daily rollup',
    compatibleSince: 6,
    sql: V6,
  },
  {
    version: 7,
    description: 'the queue figures of the daily rollups: workloads waiting and the base of their queue time',
    compatibleSince: 7,
    sql: V7,
  },
  {
    version: 8,
    description: 'the queue figures of workload_totals and the index of the waits that ended, for the queue ranking',
    compatibleSince: 8,
    sql: V8,
  },
  {
    version: 9,
    description: 'the idle index of usage covers the sums of the usage rankings',
    compatibleSince: 8,
    sql: V9,
  },
  {
    version: 10,
    description: 'the daily rollups of workloads and usage per initiative, for the summary and the groups by initiative',
    compatibleSince: 10,
    sql: V10,
  },
  {
    version: 11,
    description: 'the weekly rollups of workloads and usage by submitter, for the groups by submitter over whole weeks',
    compatibleSince: 11,
    sql: V11,
  },
  {
    version: 12,
    description: 'GPU-hours in whole-GPU equivalents: float8 open GPUs, and each row\'s allocated GPUs, sharing and model',
    compatibleSince: 12,
    sql: V12,
  },
  {
    version: 13,
    description: 'secrets of the service kept in the index: the key of next_token\'s MAC',
    compatibleSince: 12,
    sql: V13,
  },
  {
    version: 14,
    description: 'the fleet\'s history: each node\'s GPU time by state, by hour and by day, and each cluster\'s mark',
    compatibleSince: 12,
    sql: V14,
  },
  {
    version: 15,
    description: 'how each workload\'s node and each node of the fleet\'s history is sold: on-demand, spot or reserved',
    compatibleSince: 12,
    sql: V15,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
