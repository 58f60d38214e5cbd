// writeWorkloads on SQLite: rows and pod intervals in one IMMEDIATE transaction, each row written once.
// upsertWorkloads then upsertPodIntervals write a row whose pods changed twice, its record and then
// its aggregates (an UPDATE through the table and the covering index that carries them). Here the
// stored rows and pods are read first, the write is planned in code (common/write-plan.ts), the pods
// are written, and then each row once: its record with its aggregates summed from its pods in the
// same statement, its record alone when its pods did not change, its aggregates alone when only its
// pods did. A stored row is updated in the columns that change (stored-row-update.ts), a new one
// inserted. The tables end as the two calls would leave them, updated_at and the aggregates' last
// bits included (test/store/rows-with-pods.test.ts).
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../domain/clock.js';
import type { PodGpuInterval, WorkloadRecord } from '../../domain/workload.js';
import { AGGREGATE_COLUMNS, RECORD_COLUMNS, type GpuAggregates, type WorkloadRow } from '../common/row-mapping.js';
import { planWrite, workloadsMet } from '../common/write-plan.js';
import type { PodRow } from '../common/write-rules.js';
import { AGGREGATES_OF_PODS, refreshAggregates } from './gpu-aggregates.js';
import { applyGpuErrors } from './gpu-errors.js';
import { SOURCE_COLUMNS, type SourceRow, type SqliteRollups } from './rollup-apply.js';
import { storedRowUpdateSql } from './stored-row-update.js';
import type { StatementCache } from './workload-sql.js';

const STORED_ROWS = `
  SELECT ${[...RECORD_COLUMNS, ...AGGREGATE_COLUMNS].join(', ')} FROM workloads
  WHERE workload_id IN (SELECT value FROM json_each(@ids))`;
const STORED_PODS = `
  SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods
  WHERE pod_uid IN (SELECT value FROM json_each(@uids))`;

// The plan has applied the write rules: each statement writes what it is given.
const UPSERT_POD = `
  INSERT INTO workload_pods (pod_uid, workload_id, gpus, started_at, finished_at)
  VALUES (@pod_uid, @workload_id, @gpus, @started_at, @finished_at)
  ON CONFLICT (pod_uid) DO UPDATE SET
    workload_id = excluded.workload_id, gpus = excluded.gpus, started_at = excluded.started_at, finished_at = excluded.finished_at`;

const WRITTEN_COLUMNS = [...RECORD_COLUMNS, 'updated_at'];
const SET_WRITTEN = WRITTEN_COLUMNS.filter((c) => c !== 'workload_id').map((c) => `${c} = excluded.${c}`).join(', ');
const UPSERT_RECORD = `
  INSERT INTO workloads (${WRITTEN_COLUMNS.join(', ')})
  VALUES (${WRITTEN_COLUMNS.map((c) => `@${c}`).join(', ')})
  ON CONFLICT (workload_id) DO UPDATE SET ${SET_WRITTEN}
  RETURNING ${SOURCE_COLUMNS}`;
// `WHERE true`: without it SQLite would read ON CONFLICT as a join constraint of the FROM.
const UPSERT_RECORD_WITH_AGGREGATES = `
  INSERT INTO workloads (${[...WRITTEN_COLUMNS, ...AGGREGATE_COLUMNS].join(', ')})
  SELECT ${WRITTEN_COLUMNS.map((c) => `@${c}`).join(', ')}, a.closed, a.open_gpus, a.open_start
  FROM (${AGGREGATES_OF_PODS}
  ) AS a WHERE true
  ON CONFLICT (workload_id) DO UPDATE SET ${SET_WRITTEN}, ${AGGREGATE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}
  RETURNING ${SOURCE_COLUMNS}`;

// A pod may be written before its workload's row is (a new row is written once, after its pods,
// with their aggregates): the foreign key is checked at the commit instead, where every pod the plan
// writes has its row. SQLite turns the setting off again at the end of the transaction.
const DEFER_FOREIGN_KEYS = 'PRAGMA defer_foreign_keys = ON';

type StoredRow = WorkloadRow & GpuAggregates;

/** The function behind SqliteWorkloadStore.writeWorkloads: one IMMEDIATE transaction per call. */
export function rowsWithPodsWriter(
  db: Database,
  statements: StatementCache,
  rollups: SqliteRollups,
  clock: Clock,
): (records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]) => { rows: number; intervals: number } {
  const write = db.transaction((records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]) => {
    const storedPods = new Map(
      (statements.get(STORED_PODS).all({ uids: JSON.stringify(intervals.map((i) => i.podUid)) }) as PodRow[]).map((pod) => [pod.pod_uid, pod]),
    );
    const ids = workloadsMet(records, intervals, storedPods.values());
    const storedRows = new Map(
      (statements.get(STORED_ROWS).all({ ids: JSON.stringify([...ids]) }) as StoredRow[]).map((row) => [row.workload_id, row]),
    );
    const plan = planWrite(storedRows, storedPods, records, intervals);
    applyGpuErrors(statements, plan.rows.values());

    if ([...plan.pods.values()].some((pod) => !storedRows.has(pod.workload_id))) statements.get(DEFER_FOREIGN_KEYS).run();
    const upsertPod = statements.get(UPSERT_POD);
    for (const pod of plan.pods.values()) upsertPod.run(pod);

    const updatedAt = clock.now();
    const after = new Map<string, SourceRow>();
    const withAggregates = statements.get(UPSERT_RECORD_WITH_AGGREGATES);
    const recordOnly = statements.get(UPSERT_RECORD);
    for (const [id, row] of plan.rows) {
      const stored = storedRows.get(id);
      const touched = plan.touched.has(id);
      const statement = stored !== undefined ? statements.get(storedRowUpdateSql(stored, row, touched)) : touched ? withAggregates : recordOnly;
      after.set(id, statement.get({ ...row, updated_at: updatedAt }) as SourceRow);
    }
    const aggregatesOnly = [...plan.touched].filter((id) => !plan.rows.has(id));
    for (const [id, row] of refreshAggregates(statements, aggregatesOnly, updatedAt)) after.set(id, row);
    rollups.addChanges(storedRows, after);
    return plan.written;
  });
  return (records, intervals) => write.immediate(records, intervals);
}
