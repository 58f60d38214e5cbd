// Workloads that come and go in a simulated cluster at a steady rate, for the fault tests, and the
// ground truth they leave (issue 16 plan §6.2): which workloads exist, their statuses and times, and
// their GPU time, exact because every start, finish and deletion carries an explicit timestamp (pods'
// startTime and containers' finishedAt, Jobs' startTime and condition times, deletionTimestamp). Then
// the checks of an index against that truth, in SQL: every row as the truth says, no duplicate, every
// rollup equal to a recomputation from the rows.
//
// Lives: a standalone pod is created (pending), runs, finishes (completed or failed) or is deleted while
// running (deletionTimestamp first, as a graceful deletion, then gone), and is deleted some time after
// it finished. A Job (parallelism 1 or 2) is created, then its pods; the pods run and the Job records
// its start; the pods finish and the Job its Complete or Failed condition; later its pods and the Job
// are deleted. Each store change is one event.
//
// Finished objects stay 20–30 s by default (Jobs kept by ttlSecondsAfterFinished, say), longer than
// any takeover: a replica that takes a cluster over writes what its caches hold, and an object that
// finished and was deleted while no replica wrote is not among them (see the pending case of
// test/ha/writer-kill.test.ts). Draining deletes them as soon as they finish.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import type { KubeStore } from '../../sim/kube-api/store.js';
import { mulberry32 } from '../../sim/random.js';
import { ROLLUPS } from '../../src/store/rollups/definitions.js';
import { rollupRebuildSql } from '../../src/store/postgres/rollup-rebuild.js';
import { aGpuJob, aGpuNode, aGpuPod, aNamespace, finished, running } from './sim-cluster.js';

export const ORGANIZATION = 'acme';
const NAMESPACES = [
  { name: 'llm-train', initiative: 'llm' },
  { name: 'vision-lab', initiative: 'vision' },
] as const;
const NODES = [
  { name: 'h100-1', instanceType: 'p5.48xlarge' },
  { name: 'a100-1', instanceType: 'p4d.24xlarge' },
] as const;
const USERS = ['alice', 'bob', 'carol'] as const;

/** The namespaces and nodes the workloads run in and on. */
export function prepareCluster(store: KubeStore): void {
  for (const ns of NAMESPACES) store.create('namespaces', aNamespace(ns.name, { 'gpucap.io/initiative': ns.initiative, 'gpucap.io/organization': ORGANIZATION }));
  for (const node of NODES) store.create('nodes', aGpuNode(node.name, node.instanceType));
}

export interface ExpectedPod {
  podUid: string;
  gpus: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** A workload as the index must hold it. */
export interface ExpectedWorkload {
  workloadId: string;
  kind: 'Pod' | 'Job';
  namespace: string;
  name: string;
  gpuCount: number;
  submittedAt: number;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
  startedAt: number | null;
  completedAt: number | null;
  exitCode: number | null;
  pods: ExpectedPod[];
}

export interface EventDriverOptions {
  store: KubeStore;
  eventsPerSecond: number;
  seed?: number;
  /** Workloads alive (not yet deleted) at most at once (default 250). */
  maxLive?: number;
  /** How long a finished object stays before it is deleted, [min, max] ms (default 20–30 s). */
  deleteAfterMs?: readonly [number, number];
  /** How long a workload runs, [min, max] ms (default 1–4 s). */
  runMs?: readonly [number, number];
  /** The share of standalone pods deleted while they run (default 0.15). */
  deletedWhileRunning?: number;
}

interface Step {
  at: number;
  run: (now: number) => void;
}

interface Life {
  workload: ExpectedWorkload;
  steps: Step[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const TICK_MS = 10;

export class EventDriver {
  readonly #options: Required<Omit<EventDriverOptions, 'seed'>>;
  readonly #random: () => number;
  readonly #truth = new Map<string, ExpectedWorkload>();
  readonly #live = new Set<Life>();
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  #sent = 0;
  #draining = false;
  #serial = 0;
  #failure: Error | null = null;
  #rate: number;
  #steady: number | null = null;

  constructor(options: EventDriverOptions) {
    this.#options = { maxLive: 250, deleteAfterMs: [20_000, 30_000], runMs: [1_000, 4_000], deletedWhileRunning: 0.15, ...options };
    this.#random = mulberry32(options.seed ?? 16);
    this.#rate = options.eventsPerSecond;
  }

  /** Events sent so far. */
  get sent(): number {
    return this.#sent;
  }

  /** Events per second from start() to drain() (or now). */
  rate(): number {
    if (this.#steady !== null) return this.#steady;
    const seconds = (Date.now() - this.#startedAt) / 1000;
    return seconds > 0 ? this.#sent / seconds : 0;
  }

  start(): void {
    this.#startedAt = Date.now();
    this.#sent = 0;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  /**
   * Stops creating workloads and plays the lives under way to their end: what is pending starts, what
   * runs finishes, and what finished is deleted, each step as soon as the one before it (at
   * `eventsPerSecond`, default 4 × the driver's rate); resolves when none is left. Every row the truth
   * holds is then finished. Only while a replica writes: a deletion right after a finish is the case
   * a takeover cannot recover (see above).
   */
  async drain(options: { eventsPerSecond?: number; timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    this.#steady = this.rate();
    this.#draining = true;
    for (const life of this.#live) for (const step of life.steps) step.at = 0;
    this.#rate = options.eventsPerSecond ?? this.#options.eventsPerSecond * 4;
    this.#startedAt = Date.now() - (this.#sent / this.#rate) * 1000;
    const deadline = Date.now() + timeoutMs;
    while (this.#live.size > 0) {
      if (this.#failure !== null) throw this.#failure;
      if (Date.now() > deadline) throw new Error(`The event driver did not finish its ${this.#live.size} workloads within ${timeoutMs} ms`);
      await sleep(50);
    }
    this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#failure !== null) throw this.#failure;
  }

  /** Every workload created so far, as the index must hold it now. */
  truth(): ExpectedWorkload[] {
    return [...this.#truth.values()].map((w) => ({ ...w, pods: w.pods.map((p) => ({ ...p })) }));
  }

  #tick(): void {
    try {
      const budget = Math.floor(((Date.now() - this.#startedAt) / 1000) * this.#rate) - this.#sent;
      // A starved timer catches up, but by a bounded burst.
      for (let i = 0; i < Math.min(budget, 20); i++) {
        if (!this.#step()) break;
        this.#sent += 1;
      }
    } catch (error) {
      this.#failure = error as Error;
      clearInterval(this.#timer);
    }
  }

  /** Runs one event: the most overdue step of a life, else a new workload. False when there was nothing to do. */
  #step(): boolean {
    const now = Date.now();
    let due: Life | undefined;
    for (const life of this.#live) {
      const next = life.steps[0];
      if (next !== undefined && next.at <= now && (due === undefined || next.at < (due.steps[0]?.at ?? Infinity))) due = life;
    }
    if (due !== undefined) {
      const step = due.steps.shift();
      step?.run(now);
      if (due.steps.length === 0) this.#live.delete(due);
      else if (due.steps[0] !== undefined) due.steps[0].at = Math.max(due.steps[0].at, now);
      return true;
    }
    if (this.#draining || this.#live.size >= this.#options.maxLive) return false;
    this.#live.add(this.#random() < 0.5 ? this.#podLife(now) : this.#jobLife(now));
    return true;
  }

  #between(range: readonly [number, number]): number {
    return Math.round(range[0] + this.#random() * (range[1] - range[0]));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)] as T;
  }

  #labels(): Record<string, string> {
    return { 'gpucap.io/submitted-by': this.#pick(USERS), ...(this.#random() < 0.3 ? { 'gpucap.io/managed': 'true' } : {}) };
  }

  /** Creates a standalone pod now; returns the rest of its life, timed from now. */
  #podLife(now: number): Life {
    const { store } = this.#options;
    const ns = this.#pick(NAMESPACES).name;
    const node = this.#pick(NODES).name;
    const gpus = 1 + Math.floor(this.#random() * 4);
    const name = `pod-${++this.#serial}`;
    const created = store.create('pods', aGpuPod(ns, name, { gpus, node, labels: this.#labels() }));
    const uid = created.metadata.uid ?? '';
    const pod: ExpectedPod = { podUid: uid, gpus, startedAt: null, finishedAt: null };
    const workload = this.#expect(created, { kind: 'Pod', gpuCount: gpus, pods: [pod] });
    const key = { namespace: ns, name };
    const runAt = now + this.#between([100, 800]);
    const endAt = runAt + this.#between(this.#options.runMs);
    const deleteAt = endAt + this.#between(this.#options.deleteAfterMs);
    const steps: Step[] = [
      {
        at: runAt,
        run: (t) => {
          store.patchStatus('pods', key, running(t));
          Object.assign(workload, { status: 'running', startedAt: t });
          pod.startedAt = t;
        },
      },
    ];
    if (this.#random() < this.#options.deletedWhileRunning) {
      // A graceful deletion: the deletion timestamp first (grace 0), the object goes later.
      steps.push({
        at: endAt,
        run: (t) => {
          const current = store.get('pods', key) as KubeObject;
          store.update('pods', { ...current, metadata: { ...current.metadata, deletionTimestamp: iso(t), deletionGracePeriodSeconds: 0 } });
          Object.assign(workload, { status: 'cancelled', completedAt: t, exitCode: 0 });
          pod.finishedAt = t;
        },
      });
    } else {
      const failed = this.#random() < 0.25;
      steps.push({
        at: endAt,
        run: (t) => {
          const exitCode = failed ? 3 : 0;
          store.patchStatus('pods', key, finished(pod.startedAt ?? t, t, exitCode));
          Object.assign(workload, { status: failed ? 'failed' : 'completed', completedAt: t, exitCode });
          pod.finishedAt = t;
        },
      });
    }
    steps.push({ at: deleteAt, run: () => void store.delete('pods', key) });
    return { workload, steps };
  }

  /** Creates a Job now; returns the rest of its life (its pods included), timed from now. */
  #jobLife(now: number): Life {
    const { store } = this.#options;
    const ns = this.#pick(NAMESPACES).name;
    const node = this.#pick(NODES).name;
    const perPod = 1 + Math.floor(this.#random() * 2);
    const parallelism = this.#random() < 0.7 ? 1 : 2;
    const name = `job-${++this.#serial}`;
    const template = aGpuJob(ns, name, perPod);
    const job = store.create('jobs', {
      ...template,
      metadata: { ...template.metadata, labels: this.#labels() },
      spec: { ...(template.spec as object), parallelism },
    });
    const workload = this.#expect(job, { kind: 'Job', gpuCount: perPod * parallelism, pods: [] });
    const jobKey = { namespace: ns, name };
    const podKeys = Array.from({ length: parallelism }, (_, i) => ({ namespace: ns, name: `${name}-${i}` }));
    const podsOf = new Map<string, ExpectedPod>();
    let at = now + this.#between([50, 300]);
    const steps: Step[] = podKeys.map((key) => ({
      at,
      run: () => {
        const created = store.create('pods', aGpuPod(ns, key.name, { gpus: perPod, node, job }));
        const pod: ExpectedPod = { podUid: created.metadata.uid ?? '', gpus: perPod, startedAt: null, finishedAt: null };
        podsOf.set(key.name, pod);
        workload.pods.push(pod);
      },
    }));
    at += this.#between([100, 800]);
    for (const key of podKeys) {
      steps.push({
        at,
        run: (t) => {
          store.patchStatus('pods', key, running(t));
          const pod = podsOf.get(key.name);
          if (pod !== undefined) pod.startedAt = t;
        },
      });
    }
    steps.push({
      at,
      run: (t) => {
        store.patchStatus('jobs', jobKey, { startTime: iso(t), active: parallelism });
        Object.assign(workload, { status: 'running', startedAt: t });
      },
    });
    at += this.#between(this.#options.runMs);
    const failed = this.#random() < 0.25;
    const exitCode = failed ? 2 : 0;
    for (const key of podKeys) {
      steps.push({
        at,
        run: (t) => {
          const pod = podsOf.get(key.name);
          store.patchStatus('pods', key, finished(pod?.startedAt ?? t, t, exitCode));
          if (pod !== undefined) pod.finishedAt = t;
        },
      });
    }
    steps.push({
      at,
      run: (t) => {
        const type = failed ? 'Failed' : 'Complete';
        store.patchStatus('jobs', jobKey, {
          active: 0,
          [failed ? 'failed' : 'succeeded']: parallelism,
          conditions: [{ type, status: 'True', lastTransitionTime: iso(t) }],
          ...(failed ? {} : { completionTime: iso(t) }),
        });
        Object.assign(workload, { status: failed ? 'failed' : 'completed', completedAt: t, exitCode });
      },
    });
    at += this.#between(this.#options.deleteAfterMs);
    for (const key of podKeys) steps.push({ at, run: () => void store.delete('pods', key) });
    steps.push({ at, run: () => void store.delete('jobs', jobKey) });
    return { workload, steps };
  }

  #expect(object: KubeObject, shape: Pick<ExpectedWorkload, 'kind' | 'gpuCount' | 'pods'>): ExpectedWorkload {
    const workload: ExpectedWorkload = {
      workloadId: object.metadata.uid ?? '',
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
      submittedAt: Date.parse(object.metadata.creationTimestamp ?? ''),
      status: 'pending',
      startedAt: null,
      completedAt: null,
      exitCode: null,
      ...shape,
    };
    this.#truth.set(workload.workloadId, workload);
    return workload;
  }
}

// ---- The index against the truth ----

export type Sql = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** GPU-ms of a workload's pods: closed intervals, and the open ones' GPUs and Σ gpus × start. */
function gpuFigures(pods: readonly ExpectedPod[]): { closedMs: number; openGpus: number; openStartMs: number } {
  let closedMs = 0;
  let openGpus = 0;
  let openStartMs = 0;
  for (const pod of pods) {
    if (pod.startedAt === null) continue;
    if (pod.finishedAt === null) {
      openGpus += pod.gpus;
      openStartMs += pod.gpus * pod.startedAt;
    } else closedMs += pod.gpus * Math.max(0, pod.finishedAt - pod.startedAt);
  }
  return { closedMs, openGpus, openStartMs };
}

/** The cluster's rows and every pod row, read in one snapshot. */
async function snapshotOf(sql: Sql, clusterId: string): Promise<{ rows: Record<string, unknown>[]; podRows: Record<string, unknown>[] }> {
  await sql('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const { rows } = await sql(
      `SELECT workload_id, kind, namespace, name, status, gpu_count, submitted_at, started_at, completed_at, exit_code,
              ROUND(gpu_seconds_closed * 1000)::bigint AS closed_ms, open_gpus, ROUND(open_gpu_start_sum * 1000)::bigint AS open_start_ms
       FROM workloads WHERE cluster_id = $1`,
      [clusterId],
    );
    const { rows: podRows } = await sql('SELECT pod_uid, workload_id, gpus, started_at, finished_at FROM workload_pods');
    return { rows, podRows };
  } finally {
    await sql('COMMIT');
  }
}

/**
 * How the cluster's rows differ from the truth: rows missing, rows nobody created, and every field
 * that differs (status, times, exit code, GPU count, GPU-ms in whole ms, pods). Empty when they agree.
 * `sql` must be one connection (a snapshot spans the calls).
 */
export async function truthMismatches(sql: Sql, clusterId: string, truth: readonly ExpectedWorkload[]): Promise<string[]> {
  const { rows, podRows } = await snapshotOf(sql, clusterId);
  const stored = new Map(rows.map((row) => [row.workload_id as string, row]));
  const pods = new Map(podRows.map((row) => [row.pod_uid as string, row]));
  const problems: string[] = [];
  for (const expected of truth) {
    const row = stored.get(expected.workloadId);
    stored.delete(expected.workloadId);
    const label = `${expected.kind} ${expected.namespace}/${expected.name} (${expected.workloadId})`;
    if (row === undefined) {
      problems.push(`${label}: missing (expected ${expected.status})`);
      continue;
    }
    const gpu = gpuFigures(expected.pods);
    const want: Record<string, unknown> = {
      kind: expected.kind, status: expected.status, gpu_count: expected.gpuCount, submitted_at: expected.submittedAt,
      started_at: expected.startedAt, completed_at: expected.completedAt, exit_code: expected.exitCode,
      closed_ms: gpu.closedMs, open_gpus: gpu.openGpus, open_start_ms: gpu.openStartMs,
    };
    for (const [field, value] of Object.entries(want)) {
      if (row[field] !== value) problems.push(`${label}: ${field} is ${String(row[field])}, expected ${String(value)}`);
    }
    for (const pod of expected.pods) {
      const stored = pods.get(pod.podUid);
      if (stored === undefined) {
        if (pod.startedAt !== null) problems.push(`${label}: pod ${pod.podUid} missing`);
        continue;
      }
      if (stored.workload_id !== expected.workloadId || stored.gpus !== pod.gpus || stored.started_at !== pod.startedAt || stored.finished_at !== pod.finishedAt) {
        problems.push(`${label}: pod ${pod.podUid} is ${JSON.stringify(stored)}, expected ${JSON.stringify(pod)}`);
      }
    }
  }
  for (const [id, row] of stored) problems.push(`${row.kind as string} ${row.namespace as string}/${row.name as string} (${id}): in the index, never created`);
  return problems;
}

/** workload_id and pod_uid values held by more than one row, across every partition. */
export async function duplicateKeys(sql: Sql): Promise<string[]> {
  const workloads = await sql('SELECT workload_id AS id, count(*)::int AS n FROM workloads GROUP BY workload_id HAVING count(*) > 1');
  const pods = await sql('SELECT pod_uid AS id, count(*)::int AS n FROM workload_pods GROUP BY pod_uid HAVING count(*) > 1');
  return [...workloads.rows.map((r) => `workload ${r.id as string} ×${r.n as number}`), ...pods.rows.map((r) => `pod ${r.id as string} ×${r.n as number}`)];
}

/**
 * Rows where a rollup table differs from the same table rebuilt from the rows (rollup-rebuild.ts's
 * SQL, run into copies of the tables in a scratch schema), all in one snapshot, rolled back after. A
 * stored row whose count is 0 must hold only zeros, and is otherwise ignored: the writers leave such
 * rows behind, a rebuild does not. `sql` must be one connection (a transaction spans the calls).
 */
export async function rollupMismatches(sql: Sql): Promise<string[]> {
  const problems: string[] = [];
  await sql('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    await sql('CREATE SCHEMA rollup_check');
    for (const { table } of ROLLUPS) await sql(`CREATE TABLE rollup_check.${table} (LIKE public.${table} INCLUDING ALL)`);
    // The rebuild's unqualified names: the rollup tables resolve to the copies, workloads to public's.
    await sql('SET LOCAL search_path = rollup_check, public');
    for (const statement of rollupRebuildSql()) await sql(statement);
    for (const { table, values } of ROLLUPS) {
      const count = values[0] ?? 'n';
      const figures = values.filter((v) => v !== count).map((v) => `${v} <> 0`);
      if (figures.length > 0) {
        const leftovers = await sql(`SELECT * FROM public.${table} WHERE ${count} = 0 AND (${figures.join(' OR ')})`);
        for (const row of leftovers.rows) problems.push(`${table}: a row of count 0 holds figures: ${JSON.stringify(row)}`);
      }
      const extra = await sql(`SELECT * FROM public.${table} WHERE ${count} <> 0 EXCEPT SELECT * FROM rollup_check.${table}`);
      const lacking = await sql(`SELECT * FROM rollup_check.${table} EXCEPT SELECT * FROM public.${table} WHERE ${count} <> 0`);
      for (const row of extra.rows) problems.push(`${table}: stored, not recomputed: ${JSON.stringify(row)}`);
      for (const row of lacking.rows) problems.push(`${table}: recomputed, not stored: ${JSON.stringify(row)}`);
    }
  } finally {
    await sql('ROLLBACK');
  }
  return problems;
}
