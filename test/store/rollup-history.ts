// A seeded history of workloads for the rollup tests: each workload written as the indexer would
// over its life (pending with an unscheduled pod, running with open pods, then finished), with the
// shapes that make rollups hard: submissions on and around midnight, ms remainders, pods that start
// after the time of reading (clock skew), open pods left in finished workloads, pods started after
// their workload completed, 0-GPU pods, workloads moved to another initiative or instance type.
// And the rollups as stored (rollupContents) and as recomputed from the rows (recomputedRollups).
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { mulberry32 } from '../../sim/random.js';
import type { PodGpuInterval, WorkloadRecord, WorkloadStatus } from '../../src/domain/workload.js';
import { ROLLUPS } from '../../src/store/rollups/definitions.js';
import type { Database } from '../../src/store/sqlite/database.js';
import { migrate, MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { SqliteWorkloadStore } from '../../src/store/sqlite/workload-store.js';
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
    isManaged: random() < 0.5,
    resourceVersion: '1',
  };
  const podUid = (k: number) => `${id}-pod-${k}`;
  const steps: Step[] = [
    { workloads: [base] },
    { pods: [{ podUid: podUid(0), workloadId: id, gpus: gpuCount, startedAt: null, finishedAt: null }] },
  ];
  if (startedAt === null) {
    if (finished) steps.push({ workloads: [{ ...base, status, completedAt, exitCode: 0, resourceVersion: '3' }] });
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
  steps.push({ workloads: [{ ...running, status, completedAt, exitCode: status === 'failed' ? 1 : 0, resourceVersion: '3' }] }, { pods: [...leftOpen, ...late] });
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
export async function write(store: SqliteWorkloadStore, steps: readonly Step[], batch = 25): Promise<void> {
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
 * over the rows with the figures SQL of migration-v3.ts. As rollupContents reads them.
 */
export function recomputedRollups(db: Database): Record<string, unknown[]> {
  const fresh = new BetterSqlite3(':memory:');
  try {
    migrate(fresh, MIGRATIONS.filter((m) => m.version <= 2));
    for (const table of ['workloads', 'workload_pods']) {
      const columns = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
      const insert = fresh.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
      for (const row of db.prepare(`SELECT * FROM ${table}`).iterate()) insert.run(row as Record<string, unknown>);
    }
    migrate(fresh, MIGRATIONS.filter((m) => m.version <= 3));
    return rollupContents(fresh);
  } finally {
    fresh.close();
  }
}
