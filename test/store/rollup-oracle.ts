// The rollups' answers at a time of reading, two ways, for the property tests: read from the stored
// rollup rows as the readers read them (src/store/sql/rollup-sql.ts), and worked out here, in plain
// TypeScript, from the raw rows alone: each workload's own columns and its pods' GPU intervals. The
// second uses none of the product's figures (src/store/rollups/figures.ts), GPU aggregates
// (gpu_seconds_closed, open_gpus, open_gpu_start_sum) or backfill SQL, so that a mistake shared by
// the writer's deltas and the recomputation cannot hide. Every figure is a whole number of ms or
// GPU-ms (GPU-hours are GPU-ms / 3 600 000), so the two must be equal to the last ms.
//
// What a rollup answers at time t, per key, summed over the workloads of the key:
//   gpu_ms       a finished workload (completed_at set): its GPU-ms at the completion, at least 0 — the
//                closed pods' gpus × (end − start, at least 0), plus the open pods' gpus × (completion −
//                start); an unfinished one: the same at t, not floored (readers floor per row);
//   open_gpus    the GPUs of an unfinished workload's open, started pods;
//   duration_ms  completion − start (at least 0), or t − start while unfinished, 0 if never started;
//   queue_ms     from submission to the start, else to the completion (at least 0), or to t while waiting;
//   counts       workloads, completed, failed, started, running (started, not finished), waiting.
// Keys: the day of submission (UTC), or the Monday of its ISO week in the weekly rollup; failure
// reasons only for the rows that have one.
const DAY_MS = 86_400_000;

/** A workloads row: the columns that place it and say what it did. */
export interface RawWorkload {
  workload_id: string;
  organization_id: string;
  initiative_id: string;
  status: string;
  submitted_by: string;
  is_managed: number;
  instance_type: string;
  submitted_at: number;
  started_at: number | null;
  completed_at: number | null;
  failure_reason: string | null;
}

/** A workload_pods row: one pod's GPU interval. */
export interface RawPod {
  workload_id: string;
  gpus: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface RawRows {
  workloads: RawWorkload[];
  pods: RawPod[];
}

export const RAW_WORKLOAD_COLUMNS = 'workload_id, organization_id, initiative_id, status, submitted_by, is_managed, instance_type, submitted_at, started_at, completed_at, failure_reason';
export const RAW_POD_COLUMNS = 'workload_id, gpus, started_at, finished_at';

/** Per table, per key (a JSON array of its values), what the rollup answers. */
export type RollupAnswers = Record<string, Record<string, Record<string, number>>>;

type Kind = 'counts' | 'daily' | 'weekly' | 'totals';
type Key = 'organization_id' | 'initiative_id' | 'status' | 'submitted_by' | 'is_managed' | 'instance_type' | 'failure_reason' | 'day';

/** The rollup tables, by what they group: written here rather than read from the definitions. */
const TABLES: readonly { table: string; kind: Kind; keys: readonly Key[]; failedOnly?: true }[] = [
  { table: 'workload_counts', kind: 'counts', keys: ['organization_id', 'initiative_id', 'status', 'submitted_by', 'is_managed'] },
  { table: 'stats_daily_submitter', kind: 'daily', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'] },
  { table: 'stats_daily_instance_type', kind: 'daily', keys: ['organization_id', 'day', 'initiative_id', 'instance_type'] },
  { table: 'workload_totals', kind: 'totals', keys: ['organization_id', 'initiative_id', 'status', 'instance_type'] },
  { table: 'stats_daily_failure_reason', kind: 'daily', keys: ['organization_id', 'day', 'initiative_id', 'failure_reason'], failedOnly: true },
  { table: 'stats_daily_initiative', kind: 'daily', keys: ['organization_id', 'day', 'initiative_id'] },
  { table: 'stats_weekly_submitter', kind: 'weekly', keys: ['organization_id', 'day', 'initiative_id', 'submitted_by'] },
];

/** The tables answered here: the property test holds them against the product's (a new rollup must be added here). */
export const ORACLE_TABLES: readonly string[] = TABLES.map((t) => t.table);

const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);
/** The Monday of the ISO week of a UTC day number (day 0, 1970-01-01, was a Thursday). */
const monday = (day: number): number => day - ((((day + 3) % 7) + 7) % 7);

/** What one workload adds to its rollup rows at `t`. */
function answersOf(w: RawWorkload, pods: readonly RawPod[], t: number): Record<string, number> {
  const finished = w.completed_at !== null;
  const started = pods.filter((p) => p.started_at !== null) as (RawPod & { started_at: number })[];
  const closed = started.filter((p) => p.finished_at !== null).reduce((sum, p) => sum + p.gpus * Math.max(0, (p.finished_at as number) - p.started_at), 0);
  const open = started.filter((p) => p.finished_at === null);
  const openUntil = (end: number) => open.reduce((sum, p) => sum + p.gpus * (end - p.started_at), 0);
  const queueEnd = w.started_at ?? w.completed_at;
  return {
    workloads: 1,
    completed: w.status === 'completed' ? 1 : 0,
    failed: w.status === 'failed' ? 1 : 0,
    started: w.started_at === null ? 0 : 1,
    running: !finished && w.started_at !== null ? 1 : 0,
    waiting: queueEnd === null ? 1 : 0,
    open_gpus: finished ? 0 : open.reduce((sum, p) => sum + p.gpus, 0),
    gpu_ms: finished ? Math.max(0, closed + openUntil(w.completed_at as number)) : closed + openUntil(t),
    duration_ms: w.started_at === null ? 0 : finished ? Math.max(0, (w.completed_at as number) - w.started_at) : t - w.started_at,
    queue_ms: queueEnd === null ? t - w.submitted_at : Math.max(0, queueEnd - w.submitted_at),
  };
}

/** Which of a workload's answers each kind of rollup holds. */
const FIGURES: Record<Kind, readonly string[]> = {
  counts: ['workloads'],
  daily: ['workloads', 'completed', 'failed', 'started', 'running', 'waiting', 'open_gpus', 'gpu_ms', 'duration_ms', 'queue_ms'],
  weekly: ['workloads', 'completed', 'failed', 'started', 'running', 'waiting', 'open_gpus', 'gpu_ms', 'duration_ms', 'queue_ms'],
  totals: ['workloads', 'waiting', 'open_gpus', 'gpu_ms', 'queue_ms'],
};

/** The rollups' answers at `t`, from the raw rows. */
export function expectedAnswers(raw: RawRows, t: number): RollupAnswers {
  const podsOf = new Map<string, RawPod[]>();
  for (const pod of raw.pods) podsOf.set(pod.workload_id, [...(podsOf.get(pod.workload_id) ?? []), pod]);
  const answers: RollupAnswers = {};
  for (const { table, kind, keys, failedOnly } of TABLES) {
    const rows: Record<string, Record<string, number>> = {};
    for (const w of raw.workloads) {
      if (failedOnly === true && w.failure_reason === null) continue;
      const day = kind === 'weekly' ? monday(utcDay(w.submitted_at)) : utcDay(w.submitted_at);
      const key = JSON.stringify(keys.map((k) => (k === 'day' ? day : w[k])));
      const figures = answersOf(w, podsOf.get(w.workload_id) ?? [], t);
      const sums = (rows[key] ??= Object.fromEntries(FIGURES[kind].map((f) => [f, 0])));
      for (const figure of FIGURES[kind]) sums[figure] += figures[figure];
    }
    answers[table] = rows;
  }
  return answers;
}

/**
 * The rollups' answers at `t`, from their stored rows (those that hold a workload), as the readers
 * compute them (rollup-sql.ts): a daily row's open figures grow from its day's start, workload_totals'
 * from the days they hold.
 */
export function storedAnswers(contents: Record<string, unknown[]>, t: number): RollupAnswers {
  const answers: RollupAnswers = {};
  for (const { table, kind, keys } of TABLES) {
    const rows: Record<string, Record<string, number>> = {};
    for (const stored of (contents[table] ?? []) as Record<string, number>[]) {
      const key = JSON.stringify(keys.map((k) => stored[k]));
      const sinceDay = t - stored.day * DAY_MS;
      if (kind === 'counts') {
        rows[key] = { workloads: stored.n };
      } else if (kind === 'totals') {
        rows[key] = {
          workloads: stored.workloads,
          waiting: stored.waiting,
          open_gpus: stored.open_gpus,
          gpu_ms: stored.gpu_base_ms + stored.open_gpus * t - stored.open_gpu_days * DAY_MS,
          queue_ms: stored.queue_base_ms + stored.waiting * t - stored.waiting_days * DAY_MS,
        };
      } else {
        rows[key] = {
          workloads: stored.workloads,
          completed: stored.completed,
          failed: stored.failed,
          started: stored.started,
          running: stored.open_started,
          waiting: stored.waiting,
          open_gpus: stored.open_gpus,
          gpu_ms: stored.gpu_base_ms + stored.open_gpus * sinceDay,
          duration_ms: stored.duration_base_ms + stored.open_started * sinceDay,
          queue_ms: stored.queue_base_ms + stored.waiting * sinceDay,
        };
      }
    }
    answers[table] = rows;
  }
  return answers;
}
