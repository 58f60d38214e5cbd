// The writes of workload_usage and its rollups (usage-columns.ts) on PostgreSQL (migrations/v06-usage.ts), as
// SQLite's triggers do them: the bucket writer adds (gpu-summaries.ts), the row writers move a
// workload's usage with its keys, retention takes it out. Each statement locks usage rows in
// workload_id order and then rollup rows in key order.
import type pg from 'pg';
import { USAGE_KEYS, USAGE_ROLLUPS, USAGE_VALUES, usageKeySql } from '../usage/usage-columns.js';
import { dayOf } from '../rollups/figures.js';
import type { UsageKeySource } from '../rollups/usage-keys.js';

/**
 * WITH clauses (named `name`_rollup0, …) adding the rows of `source` (a WITH clause with the
 * USAGE_KEYS and USAGE_VALUES columns; rows whose day is NULL are skipped) to each usage rollup,
 * summed per key and in key order, one rollup after the other as every writer takes them.
 */
export function addToUsageRollups(source: string, name: string): string {
  return USAGE_ROLLUPS.map((rollup, i) => {
    const columns = rollup.keys.join(', ');
    // By position: a weekly rollup's `day` is the Monday of the source's day.
    const positions = rollup.keys.map((_, k) => k + 1).join(', ');
    const keys = rollup.keys.map((k) => usageKeySql(rollup, k, k)).join(', ');
    const sums = USAGE_VALUES.map((v) => `SUM(${v})`).join(', ');
    return `${name}_rollup${i} AS (
    INSERT INTO ${rollup.table} AS s (${columns}, ${USAGE_VALUES.join(', ')})
    SELECT ${keys}, ${sums} FROM ${source} WHERE day IS NOT NULL
    GROUP BY ${positions} ORDER BY ${positions}
    ON CONFLICT (${columns}) DO UPDATE SET ${USAGE_VALUES.map((v) => `${v} = s.${v} + excluded.${v}`).join(', ')}
    RETURNING 1)`;
  }).join(',\n');
}

// The usage rows whose keys differ from their workloads row's, locked, with both keys; then the row
// moved, and its figures taken from the old keys and added at the new ones.
const SYNC_KEYS = `
WITH target AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
    AS t(workload_id, organization_id, day, initiative_id, submitted_by, instance_type, failure_reason)
), old AS (
  SELECT u.workload_id, ${USAGE_KEYS.map((k) => `u.${k}`).join(', ')}, ${USAGE_VALUES.map((v) => `u.${v}`).join(', ')},
    ${USAGE_KEYS.map((k) => `t.${k} AS new_${k}`).join(', ')}
  FROM workload_usage u JOIN target t ON t.workload_id = u.workload_id
  WHERE (${USAGE_KEYS.map((k) => `u.${k}`).join(', ')}) IS DISTINCT FROM (${USAGE_KEYS.map((k) => `t.${k}`).join(', ')})
  ORDER BY u.workload_id FOR UPDATE OF u
), moved AS (
  UPDATE workload_usage u SET ${USAGE_KEYS.map((k) => `${k} = old.new_${k}`).join(', ')} FROM old WHERE u.workload_id = old.workload_id
), deltas AS (
  SELECT ${USAGE_KEYS.join(', ')}, ${USAGE_VALUES.map((v) => `-${v} AS ${v}`).join(', ')} FROM old
  UNION ALL
  SELECT ${USAGE_KEYS.map((k) => `new_${k}`).join(', ')}, ${USAGE_VALUES.join(', ')} FROM old
), ${addToUsageRollups('deltas', 'moved')}
SELECT 1`;

/** Moves the usage of each written row whose keys it does not have yet (new rows included: samples may come first). */
export async function syncUsageKeys(client: pg.ClientBase, rows: readonly UsageKeySource[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => (a.workload_id < b.workload_id ? -1 : a.workload_id > b.workload_id ? 1 : 0));
  await client.query(SYNC_KEYS, [
    sorted.map((r) => r.workload_id), sorted.map((r) => r.organization_id), sorted.map((r) => dayOf(r.submitted_at)),
    sorted.map((r) => r.initiative_id), sorted.map((r) => r.submitted_by), sorted.map((r) => r.instance_type),
    sorted.map((r) => r.failure_reason ?? ''),
  ]);
}

const DELETE_USAGE = `
WITH locked AS (
  SELECT workload_id FROM workload_usage WHERE workload_id = ANY($1::text[]) ORDER BY workload_id FOR UPDATE
), gone AS (
  DELETE FROM workload_usage u USING locked WHERE u.workload_id = locked.workload_id
  RETURNING ${USAGE_KEYS.map((k) => `u.${k}`).join(', ')}, ${USAGE_VALUES.map((v) => `-u.${v} AS ${v}`).join(', ')}
), ${addToUsageRollups('gone', 'gone')}
SELECT 1`;

/** Deletes the usage of these workloads (retention), and takes it out of the rollup. */
export async function deleteUsage(client: pg.ClientBase, workloadIds: readonly string[]): Promise<void> {
  if (workloadIds.length > 0) await client.query(DELETE_USAGE, [workloadIds]);
}
