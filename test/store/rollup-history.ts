// A seeded history of workloads for the rollup tests: each workload written as the indexer would
// over its life (pending with an unscheduled pod, running with open pods, then finished), with the
// shapes that make rollups hard: submissions on and around midnight, ms remainders, pods that start
// after the time of reading (clock skew), open pods left in finished workloads, pods started after
// their workload completed, 0-GPU pods, workloads moved to another initiative or instance type.
// And the rollups as stored (rollupContents) and as recomputed from the rows (recomputedRollups).
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { mulberry32 } from '../../sim/random.js';
import type { FailureReason } from '../../src/domain/failure-reason.js';
import type { PodGpuInterval, WorkloadRecord, WorkloadStatus } from '../../src/domain/workload.js';
import { ROLLUPS } from '../../src/store/rollups/definitions.js';
import type { Database } from '../../src/store/sqlite/database.js';
import { migrate, MIGRATIONS } from '../../src/store/sqlite/migrations/migrate.js';
import { V5 } from '../../src/store/sqlite/migrations/v05-failure-reasons.js';
import { V7 } from '../../src/store/sqlite/migrations/v07-queue-rollups.js';
import type { IndexWriter } from '../../src/store/ports.js';
import { at, HOUR_MS } from './temp-store.js';

export const DAY_MS = 24 * HOUR_MS;
/** Around this time: submissions over the 12 days before it, running pods up to 6 h after it. */
export const T0 = at('2026-11-10T00:00:00Z');
export const ORGS = ['acme', 'globex'] as const;
export const INITIATIVES = ['llm', 'vision', 'audio', 'infra'] as const;
const USERS = ['alice', 'bob', 'carol', 'dan', 'erin'];
const TYPES = ['p5', 'a3', 'g6'];

export type Step = { workloads: WorkloadRecord[] } | { pods: PodGpuInterval[] };

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function reasonOf(random: () => number, status: WorkloadStatus): FailureReason | null {
  if (status === 'cancelled') return pick(random, ['deleted', 'preempted', 'evicted'] as const);
  return status === 'failed' ? pick(random, ['oom_killed', 'nonzero_exit', 'backoff_limit_exceeded'] as const) : null;
}

/** The writes of `count` workloads, their lives interleaved as a watch would deliver them. */
export function history(seed: number, count: number): Step[] {
  const random = mulberry32(seed);
  const lives: Step[][] = [];
  for (let i = 0; i < count; i += 1) lives.push(life(random, i));
  const steps: Step[] = [];
  while (lives.some((l) => l.length > 0)) {
    const open = lives.filter((l) => l.length > 0);
    // A few steps of one life at a time, so that batches mix workloads at different stages.
    const chosen = pick(random, open);
    steps.push(...chosen.splice(0, 1 + Math.floor(random() * 2)));
  }
  return steps;
}

function submission(random: () => number): number {
  const day = T0 - (1 + Math.floor(random() * 12)) * DAY_MS;
  const roll = random();
  if (roll < 0.1) return day; // exactly midnight
  if (roll < 0.15) return day - 1; // the last ms of the day before
  return day + Math.floor(random() * DAY_MS);
}

function life(random: () => number, n: number): Step[] {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const submittedAt = submission(random);
  const roll = random();
  const status: WorkloadStatus = roll < 0.15 ? 'running' : roll < 0.22 ? 'pending' : roll < 0.75 ? 'completed' : roll < 0.9 ? 'failed' : 'cancelled';
  const neverStarted = status === 'pending' || (status === 'cancelled' && random() < 0.5);
  const startedAt = neverStarted ? null : submittedAt + Math.floor(random() * 2 * HOUR_MS);
  const finished = status === 'completed' || status === 'failed' || status === 'cancelled';
  const completedAt = finished ? (startedAt ?? submittedAt) + Math.floor(random() * 30 * HOUR_MS) : null;
  const gpuCount = pick(random, [0, 1, 2, 4, 8]);
  const base: WorkloadRecord = {
    workloadId: id,
    organizationId: random() < 0.8 ? 'acme' : 'globex',
    clusterId: 'local',
    namespace: 'ns',
    name: `w-${n}`,
    kind: 'Job',
    status: 'pending',
    submittedBy: pick(random, USERS),
    initiativeId: pick(random, INITIATIVES),
    instanceType: pick(random, TYPES),
    gpuCount,
    submittedAt,
    startedAt: null,
    completedAt: null,
    exitCode: null,
    failureReason: null,
    isManaged: random() < 0.5,
    resourceVersion: '1',
  };
  const podUid = (k: number) => `${id}-pod-${k}`;
  const steps: Step[] = [
    { workloads: [base] },
    { pods: [{ podUid: podUid(0), workloadId: id, gpus: gpuCount, startedAt: null, finishedAt: null }] },
  ];
  if (startedAt === null) {
    if (finished) steps.push({ workloads: [{ ...base, status, completedAt, exitCode: 0, failureReason: reasonOf(random, status), resourceVersion: '3' }] });
    return steps;
  }
  // Running: one to three pods one after the other, the last one open; sometimes one more started
  // later than the others, up to 6 h after T0 (a cluster clock ahead of the service's).
  const moved = random() < 0.1 ? { initiativeId: pick(random, INITIATIVES), instanceType: pick(random, TYPES) } : {};
  const running: WorkloadRecord = { ...base, ...moved, status: 'running', startedAt, resourceVersion: '2' };
  const pods: PodGpuInterval[] = [];
  let from = startedAt;
  const end = completedAt ?? T0 + Math.floor(random() * 6 * HOUR_MS);
  const podCount = 1 + Math.floor(random() * 3);
  for (let k = 0; k < podCount; k += 1) {
    const last = k === podCount - 1;
    const to = last ? end : from + Math.floor((end - from) * random() * 0.5);
    pods.push({ podUid: podUid(k), workloadId: id, gpus: k === 0 ? gpuCount : pick(random, [0, 1, 8]), startedAt: from, finishedAt: last ? null : to });
    from = Math.min(to + 5000, end);
  }
  if (random() < 0.15) pods.push({ podUid: podUid(9), workloadId: id, gpus: 2, startedAt: T0 + Math.floor(random() * 6 * HOUR_MS), finishedAt: null });
  steps.push({ workloads: [running] }, { pods });
  if (!finished || completedAt === null) return steps;
  // Finished: every pod closed at its end, except sometimes one left open, or one that started
  // after the completion (its aggregate then reads negative at the completion).
  const closed = pods.map((p) => ({ ...p, finishedAt: p.finishedAt ?? Math.max(p.startedAt ?? 0, completedAt) }));
  const leftOpen = random() < 0.1 ? closed.map((p, k) => (k === 0 ? { ...p, finishedAt: null } : p)) : closed;
  const late = random() < 0.05 ? [{ podUid: podUid(8), workloadId: id, gpus: 4, startedAt: completedAt + HOUR_MS, finishedAt: null }] : [];
  const reason = reasonOf(random, status);
  steps.push({ workloads: [{ ...running, status, completedAt, exitCode: status === 'failed' ? 1 : 0, failureReason: reason, resourceVersion: '3' }] }, { pods: [...leftOpen, ...late] });
  // Now and then a reason learnt later (an XID after the failure was written): the row moves between reasons.
  if (reason !== null && random() < 0.1) steps.push({ workloads: [{ ...running, status, completedAt, exitCode: 1, failureReason: 'gpu_error', resourceVersion: '4' }] });
  return steps;
}

/** The steps in batches of about `batch` steps, the later step of a workload or pod winning within one (like the indexer's coalescing buffer). */
export function batches(steps: readonly Step[], batch = 25): { workloads: WorkloadRecord[]; pods: PodGpuInterval[] }[] {
  const out: { workloads: WorkloadRecord[]; pods: PodGpuInterval[] }[] = [];
  for (let i = 0; i < steps.length; i += batch) {
    const workloads = new Map<string, WorkloadRecord>();
    const pods = new Map<string, PodGpuInterval>();
    for (const step of steps.slice(i, i + batch)) {
      if ('workloads' in step) for (const w of step.workloads) workloads.set(w.workloadId, w);
      else for (const p of step.pods) pods.set(p.podUid, p);
    }
    out.push({ workloads: [...workloads.values()], pods: [...pods.values()] });
  }
  return out;
}

/** Applies the steps in batches of about `batch` steps, workloads of a batch before its pods (like a flush). */
export async function write(store: Pick<IndexWriter, 'upsertWorkloads' | 'upsertPodIntervals'>, steps: readonly Step[], batch = 25): Promise<void> {
  for (const { workloads, pods } of batches(steps, batch)) {
    await store.upsertWorkloads(workloads);
    await store.upsertPodIntervals(pods);
  }
}

/** The rollups' rows of existing workloads; rows whose workloads are all gone must be 0 in every figure. */
export function rollupContents(db: Database): Record<string, unknown[]> {
  const contents: Record<string, unknown[]> = {};
  for (const { table, values } of ROLLUPS) {
    const count = values[0] as string; // n or workloads
    const rows = db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2, 3, 4`).all() as Record<string, number | string>[];
    for (const row of rows.filter((r) => r[count] === 0)) {
      const nonZero = Object.entries(row).filter(([k, v]) => typeof v === 'number' && v !== 0 && k !== 'day' && k !== 'is_managed');
      expect(nonZero, `${table} ${JSON.stringify(row)}`).to.deep.equal([]);
    }
    contents[table] = rows.filter((r) => r[count] !== 0);
  }
  return contents;
}

/**
 * The rollups recomputed from scratch over the rows of `db`: the rows inserted into a fresh file of
 * schema v2 (whose count triggers fill workload_counts), then migration v3's backfill, a GROUP BY
 * over the rows with the figures SQL of migrations/v03-rollups.ts. As rollupContents reads them.
 */
/**
 * Sets the rows' failure reasons in a file just migrated (to v5 or later), whose backfill derived them
 * from the status, and fills v5's rollup again with its own statement, then v7's queue columns of it
 * with v7's.
 */
export function refillFailureReasons(db: Database, rows: readonly { workload_id: string; failure_reason: string | null }[]): void {
  const set = db.prepare('UPDATE workloads SET failure_reason = @failure_reason WHERE workload_id = @workload_id');
  for (const row of rows) set.run(row);
  db.exec(`DELETE FROM stats_daily_failure_reason; ${V5.slice(V5.indexOf('INSERT INTO stats_daily_failure_reason'))}`);
  db.exec(V7.slice(V7.indexOf('UPDATE stats_daily_failure_reason')));
}

/**
 * Copies the workloads and pods of `from` into `to`, a file of an older schema, with the columns it
 * has: the rows an older release would have written there (its triggers, if any, fire).
 */
export function copyRows(from: Database, to: Database): void {
  for (const table of ['workloads', 'workload_pods']) {
    const known = new Set((to.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name));
    const columns = (from.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name).filter((c) => known.has(c));
    const insert = to.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
    for (const row of from.prepare(`SELECT ${columns.join(', ')} FROM ${table}`).iterate()) insert.run(row as Record<string, unknown>);
  }
}

/** The rollups of schema v4, those an older file and a new one share whatever their failure reasons. */
export function rollupsBeforeV5(contents: Record<string, unknown[]>): Record<string, unknown[]> {
  const { stats_daily_failure_reason: _v5, ...older } = contents;
  return older;
}

export function recomputedRollups(db: Database): Record<string, unknown[]> {
  const fresh = new BetterSqlite3(':memory:');
  try {
    migrate(fresh, MIGRATIONS.filter((m) => m.version <= 2));
    copyRows(db, fresh);
    // The rollups of v3 from the rows in one pass; then v5's from the rows' own failure reasons,
    // not the ones its backfill derives for rows written before it.
    migrate(fresh);
    refillFailureReasons(fresh, db.prepare('SELECT workload_id, failure_reason FROM workloads').all() as { workload_id: string; failure_reason: string | null }[]);
    return rollupContents(fresh);
  } finally {
    fresh.close();
  }
}
