// `gpucap migrate --verify`: the source and the target compared per organization, in figures that are
// exact on both engines, and the target's rollups compared with its rows.
//
// - Rows, in total and per status.
// - GPU-ms at one time T: gpuMsSql of the readers (each row read at its completion, or at T while it
//   runs, floored at 0) is whole GPU-ms in doubles for whole GPUs; each row's figure is rounded to a
//   64-bit integer and summed as one, so the totals are exact, and are compared as decimal text.
// - Pods and their GPUs, in millionths of a GPU (shares since schema v12); lifetime totals and their
//   samples (of workloads the source holds: the copy leaves out totals without a workload, and says
//   how many).
// - The fleet's history: its hours and their GPU-ms (every state summed, rounded to whole ones per
//   organization), of the clusters the source's history names.
// - The rollups: workload_totals' rows and GPU-ms at T per organization against the same figures
//   summed over the target's rows; then every row of every rollup table against a recomputation
//   (rollup-rebuild.ts's SQL run into temporary tables of the same names, which a session's
//   search_path finds before the real ones), in one snapshot that is rolled back.
//
// The target side counts the rows of the source's clusters only, so that a database shared with other
// clusters compares like with like; the rollups cover every cluster, so their checks read every row.
import { ROLLUP_COLUMN_TYPES, ROLLUPS } from '../../store/rollups/definitions.js';
import { POSTGRES, SQLITE } from '../../store/sql/dialect.js';
import { DAY_MS } from '../../store/sql/rollup-sql.js';
import { gpuMsAt, gpuMsSql } from '../../store/sql/workload-sql.js';
import { rollupRebuildSql } from '../../store/postgres/rollup-rebuild.js';
import { USAGE_ROLLUPS, USAGE_VALUES } from '../../store/usage/usage-columns.js';
import type { Queryable } from '../../store/postgres/transaction.js';
import type { SourceIndex } from './source.js';

export interface Check {
  organization: string;
  check: string;
  /** The source's figure, or for a rollup check the target's rows. */
  expected: string;
  /** The target's figure, or for a rollup check the rollup's. */
  found: string;
  ok: boolean;
}

export interface Verification {
  /** T, epoch ms. */
  at: number;
  clusters: string[];
  checks: Check[];
  /** Lifetime totals of the source whose workload it does not hold (not copied). */
  orphanLifetimes: number;
  ok: boolean;
}

interface StatusRow { org: string; status: string; n: number; gpu_ms: string | null }
interface CountRow { org: string; n: number; sum: string | null }

// Each row's GPU-ms rounded to the nearest whole one, halves up, the same way on both sides: shares of
// a GPU (schema v12) make them fractions. Whole-GPU figures are integers and stay exact.
const SOURCE_GPU_MS = `CAST(SUM(CAST(floor(${gpuMsSql(SQLITE, '@t')} + 0.5) AS INTEGER)) AS TEXT)`;
const SOURCE_ROWS = `SELECT organization_id AS org, status, COUNT(*) AS n, ${SOURCE_GPU_MS} AS gpu_ms
  FROM workloads w GROUP BY organization_id, status`;
// GPUs held in micro-GPUs: shares of a GPU sum in a different order on each side, equal to far below that.
const SOURCE_PODS = `SELECT w.organization_id AS org, COUNT(*) AS n,
  CAST(CAST(floor(SUM(p.gpus) * 1000000 + 0.5) AS INTEGER) AS TEXT) AS sum
  FROM workload_pods p JOIN workloads w ON w.workload_id = p.workload_id GROUP BY w.organization_id`;
const SOURCE_LIFETIMES = `SELECT w.organization_id AS org, COUNT(*) AS n, CAST(SUM(l.sample_count) AS TEXT) AS sum
  FROM workload_gpu_lifetime l JOIN workloads w ON w.workload_id = l.workload_id GROUP BY w.organization_id`;
const SOURCE_ORPHANS = 'SELECT COUNT(*) AS n FROM workload_gpu_lifetime WHERE workload_id NOT IN (SELECT workload_id FROM workloads)';

const FLEET_SUM = 'capacity_ms + unavailable_ms + allocated_ms + idle_ms';
const SOURCE_FLEET_CLUSTERS = 'SELECT DISTINCT cluster_id FROM fleet_days UNION SELECT cluster_id FROM fleet_marks';
const SOURCE_FLEET = `SELECT organization_id AS org, COUNT(*) AS n, CAST(CAST(floor(SUM(${FLEET_SUM}) + 0.5) AS INTEGER) AS TEXT) AS sum
  FROM fleet_hours GROUP BY organization_id`;
const TARGET_FLEET = `SELECT organization_id AS org, COUNT(*) AS n, floor(SUM(${FLEET_SUM}) + 0.5)::bigint::text AS sum
  FROM fleet_hours WHERE cluster_id = ANY($1::text[]) GROUP BY organization_id`;

const TARGET_GPU_MS = `SUM(floor(${gpuMsSql(POSTGRES, '$2::bigint')} + 0.5)::bigint)::text`;
const TARGET_ROWS = `SELECT organization_id AS org, status, COUNT(*) AS n, ${TARGET_GPU_MS} AS gpu_ms
  FROM workloads w WHERE w.cluster_id = ANY($1::text[]) GROUP BY organization_id, status`;
const TARGET_PODS = `SELECT w.organization_id AS org, COUNT(*) AS n, floor(SUM(p.gpus) * 1000000 + 0.5)::bigint::text AS sum
  FROM workload_pods p JOIN workloads w ON w.workload_id = p.workload_id AND w.submitted_at = p.submitted_at
  WHERE w.cluster_id = ANY($1::text[]) GROUP BY w.organization_id`;
const TARGET_LIFETIMES = `SELECT w.organization_id AS org, COUNT(*) AS n, SUM(l.sample_count)::text AS sum
  FROM workload_gpu_lifetime l JOIN workloads w ON w.workload_id = l.workload_id
  WHERE w.cluster_id = ANY($1::text[]) GROUP BY w.organization_id`;

// What workload_totals holds of the rows: every row counted, and GPU-ms at T before the floor while a
// row runs (a rollup cannot floor per row what grows with T), floored at its completion once finished.
const FINISHED_GPU_MS = `GREATEST(0.0::float8, ${gpuMsAt(POSTGRES, 'w.completed_at')})`;
const RUNNING_GPU_MS = gpuMsAt(POSTGRES, '$1::bigint');
const ROWS_AS_TOTALS = `SELECT organization_id AS org, COUNT(*) AS n,
  SUM(floor((CASE WHEN w.completed_at IS NOT NULL THEN ${FINISHED_GPU_MS} ELSE ${RUNNING_GPU_MS} END) + 0.5)::bigint)::text AS sum
  FROM workloads w GROUP BY organization_id`;
// totalsGpuMs (shared/rollup-sql.ts) summed in exact integers: whole-GPU sums are whole numbers. With shares
// of a GPU (schema v12) each side rounds its own parts, so the check allows a GPU-ms per row.
const TOTALS = `SELECT organization_id AS org, SUM(workloads)::bigint AS n,
  (SUM(floor(gpu_base_ms + 0.5)::bigint) + floor($1::bigint * SUM(open_gpus) - ${DAY_MS} * SUM(open_gpu_days) + 0.5)::bigint)::text AS sum
  FROM workload_totals GROUP BY organization_id`;

/** Compares `source` with the target's rows of `clusters`, and the target's rollups with its rows, at time `at`. */
export async function verifyIndex(
  source: SourceIndex,
  target: Queryable,
  options: { at: number; clusters: readonly string[] },
): Promise<Verification> {
  const t = options.at;
  if (!Number.isSafeInteger(t)) throw new Error(`Cannot verify at time ${t}: it must be a whole epoch ms`);
  const clusters = [...options.clusters];
  const sourceRows = source.db.prepare(SOURCE_ROWS).all({ t }) as StatusRow[];
  const sourcePods = source.db.prepare(SOURCE_PODS).all() as CountRow[];
  const sourceLifetimes = source.db.prepare(SOURCE_LIFETIMES).all() as CountRow[];
  const orphanLifetimes = (source.db.prepare(SOURCE_ORPHANS).get() as { n: number }).n;
  const targetRows = (await target.query<StatusRow>(TARGET_ROWS, [clusters, t])).rows;
  const targetPods = (await target.query<CountRow>(TARGET_PODS, [clusters])).rows;
  const targetLifetimes = (await target.query<CountRow>(TARGET_LIFETIMES, [clusters])).rows;
  const rowsAsTotals = (await target.query<CountRow>(ROWS_AS_TOTALS, [t])).rows;
  const totals = (await target.query<CountRow>(TOTALS, [t])).rows;
  const sourceFleet = source.db.prepare(SOURCE_FLEET).all() as CountRow[];
  const fleetClusters = source.db.prepare(SOURCE_FLEET_CLUSTERS).pluck().all() as string[];
  const targetFleet = (await target.query<CountRow>(TARGET_FLEET, [fleetClusters])).rows;

  const orgs = [...new Set([...sourceRows, ...targetRows, ...rowsAsTotals, ...totals, ...sourceFleet].map((r) => r.org))].sort();
  const checks: Check[] = [];
  const add = (organization: string, check: string, expected: bigint, found: bigint, tolerance = 0n) => checks.push({
    organization,
    check,
    expected: expected.toLocaleString('en-US'),
    found: found.toLocaleString('en-US'),
    ok: (expected > found ? expected - found : found - expected) <= tolerance,
  });
  for (const org of orgs) {
    const mine = <R extends { org: string }>(rows: readonly R[]) => rows.filter((r) => r.org === org);
    const count = (rows: readonly StatusRow[]) => mine(rows).reduce((sum, r) => sum + BigInt(r.n), 0n);
    const gpuMs = (rows: readonly StatusRow[]) => mine(rows).reduce((sum, r) => sum + BigInt(r.gpu_ms ?? 0), 0n);
    const one = (rows: readonly CountRow[]) => mine(rows)[0];
    add(org, 'workloads', count(sourceRows), count(targetRows));
    const statuses = [...new Set([...mine(sourceRows), ...mine(targetRows)].map((r) => r.status))].sort();
    for (const status of statuses) {
      add(org, `  ${status}`, count(sourceRows.filter((r) => r.status === status)), count(targetRows.filter((r) => r.status === status)));
    }
    // A share of a GPU can leave a row's aggregates on a half GPU-ms, which the engines' ROUND breaks
    // differently (away from zero, to even): a GPU-ms per row is allowed, whole GPUs never differ.
    add(org, 'GPU-ms at T', gpuMs(sourceRows), gpuMs(targetRows), count(sourceRows));
    add(org, 'pods', BigInt(one(sourcePods)?.n ?? 0), BigInt(one(targetPods)?.n ?? 0));
    add(org, 'pod GPUs (millionths)', BigInt(one(sourcePods)?.sum ?? 0), BigInt(one(targetPods)?.sum ?? 0));
    add(org, 'lifetime totals', BigInt(one(sourceLifetimes)?.n ?? 0), BigInt(one(targetLifetimes)?.n ?? 0));
    add(org, 'lifetime samples', BigInt(one(sourceLifetimes)?.sum ?? 0), BigInt(one(targetLifetimes)?.sum ?? 0));
    if (one(sourceFleet) !== undefined || one(targetFleet) !== undefined) {
      add(org, 'fleet hours', BigInt(one(sourceFleet)?.n ?? 0), BigInt(one(targetFleet)?.n ?? 0));
      // Shares of a GPU make fractions of a GPU-ms, summed in another order: a GPU-ms per hour row is allowed.
      add(org, 'fleet GPU-ms', BigInt(one(sourceFleet)?.sum ?? 0), BigInt(one(targetFleet)?.sum ?? 0), BigInt(one(sourceFleet)?.n ?? 0));
    }
    add(org, 'rollup: rows = workload_totals', BigInt(one(rowsAsTotals)?.n ?? 0), BigInt(one(totals)?.n ?? 0));
    const rows = BigInt(one(rowsAsTotals)?.n ?? 0);
    add(org, 'rollup: GPU-ms at T = workload_totals', BigInt(one(rowsAsTotals)?.sum ?? 0), BigInt(one(totals)?.sum ?? 0), rows);
  }
  for (const table of await compareRollupTables(target)) {
    const stored = `${table.stored.toLocaleString('en-US')} rows`;
    checks.push({
      organization: '(all)',
      check: `rollup: ${table.table} = recomputed`,
      expected: `${table.recomputed.toLocaleString('en-US')} rows`,
      found: table.differing === 0 ? stored : `${stored}, ${table.differing.toLocaleString('en-US')} differ`,
      ok: table.differing === 0,
    });
  }
  return { at: t, clusters, checks, orphanLifetimes, ok: checks.every((c) => c.ok) };
}

// Every rollup, usage's included (its rows hold something while either sum does).
const COMPARED: { table: string; keys: readonly string[]; values: readonly string[]; nonEmpty: string }[] = [
  ...ROLLUPS.map(({ table, keys, values }) => ({ table, keys, values, nonEmpty: `${values[0]} <> 0` })),
  ...USAGE_ROLLUPS.map(({ table, keys }) => ({ table, keys, values: USAGE_VALUES, nonEmpty: '(util_seconds <> 0 OR power_seconds <> 0)' })),
];

/**
 * A rollup value as the comparison reads it. Shares of a GPU (schema v12) make the float columns sums
 * of fractions, which a recomputation adds in another order: equal to far below these grains, so each
 * is compared at its grain (whole ms and GPU-ms; millionths of a GPU), and every whole-GPU figure,
 * an integer, exactly as before.
 */
function comparable(column: string): string {
  if (column === 'open_gpus' || column === 'open_gpu_days') return `ROUND(${column} * 1e6::float8) AS ${column}`;
  if ((ROLLUP_COLUMN_TYPES as Record<string, string | undefined>)[column] === 'real') return `ROUND(${column}) AS ${column}`;
  return column;
}

interface TableComparison {
  table: string;
  stored: number;
  recomputed: number;
  /** Rows in one and not the other, both ways. */
  differing: number;
}

/**
 * Every rollup table against its recomputation from the rows, in one REPEATABLE READ snapshot, so
 * that a writer's commit between the reads cannot make them differ. Rows a writer emptied (their
 * count 0) are left out: a recomputation has none. Nothing is written: the temporary tables go with
 * the rollback.
 */
async function compareRollupTables(client: Queryable): Promise<TableComparison[]> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const { rows: [home] } = await client.query<{ schema: string }>(
      'SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace ' +
        "WHERE c.oid = to_regclass('workload_totals')",
    );
    if (home === undefined) throw new Error('Cannot compare the rollups: the target has no table workload_totals');
    const stored = (table: string) => `"${home.schema.replaceAll('"', '""')}".${table}`;
    for (const { table } of COMPARED) await client.query(`CREATE TEMPORARY TABLE ${table} (LIKE ${stored(table)}) ON COMMIT DROP`);
    // The rebuild sets usage's keys before it sums them: on a copy, so that nothing real is written.
    await client.query(`CREATE TEMPORARY TABLE workload_usage ON COMMIT DROP AS SELECT * FROM ${stored('workload_usage')}`);
    // Unqualified names now find the temporary tables: the rebuild writes into them, and reads the
    // real workloads, which has no temporary twin.
    for (const sql of rollupRebuildSql()) await client.query(sql);
    const results: TableComparison[] = [];
    for (const { table, keys, values, nonEmpty } of COMPARED) {
      const columns = [...keys, ...values.map(comparable)].join(', ');
      const real = `SELECT ${columns} FROM ${stored(table)} WHERE ${nonEmpty}`;
      const again = `SELECT ${columns} FROM pg_temp.${table} WHERE ${nonEmpty}`;
      const { rows: [row] } = await client.query<{ stored: number; recomputed: number; differing: number }>(
        `SELECT (SELECT COUNT(*) FROM (${real}) s) AS stored, (SELECT COUNT(*) FROM (${again}) r) AS recomputed,
                (SELECT COUNT(*) FROM ((${real} EXCEPT ALL ${again}) UNION ALL (${again} EXCEPT ALL ${real})) d) AS differing`,
      );
      results.push({ table, stored: row?.stored ?? 0, recomputed: row?.recomputed ?? 0, differing: row?.differing ?? 0 });
    }
    return results;
  } finally {
    await client.query('ROLLBACK');
  }
}

/** The verification as a table, one line per check, and a last line with the verdict. */
export function formatVerification(verification: Verification): string {
  const header = { organization: 'organization', check: 'check', expected: 'expected', found: 'found', ok: true };
  const lines = [header, ...verification.checks];
  const width = (key: 'organization' | 'check' | 'expected' | 'found') => Math.max(...lines.map((l) => l[key].length));
  const [wo, wc, we, wf] = [width('organization'), width('check'), width('expected'), width('found')];
  const text = lines.map((l, i) => {
    const result = i === 0 ? 'result' : l.ok ? 'ok' : 'MISMATCH';
    return `${l.organization.padEnd(wo)}  ${l.check.padEnd(wc)}  ${l.expected.padStart(we)}  ${l.found.padStart(wf)}  ${result}`;
  });
  const failed = verification.checks.filter((c) => !c.ok).length;
  const { clusters, orphanLifetimes } = verification;
  const orphans = `${orphanLifetimes} lifetime totals of the source belong to no workload it holds; they were not copied`;
  return [
    `Verification at T = ${new Date(verification.at).toISOString()} (${verification.at}); ` +
      'expected: the SQLite source (rollup checks: the PostgreSQL rows), ' +
      `found: PostgreSQL, rows of cluster${clusters.length === 1 ? '' : 's'} ${clusters.map((c) => `"${c}"`).join(', ') || '(none)'}`,
    ...text,
    ...(orphanLifetimes > 0 ? [orphans] : []),
    failed === 0 ? `All ${verification.checks.length} checks match` : `${failed} of ${verification.checks.length} checks do not match`,
  ].join('\n');
}
