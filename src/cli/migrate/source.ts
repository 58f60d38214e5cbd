// The SQLite side of `gpucap migrate`: the index file opened read-only at the latest schema, what
// identifies its contents, and its rows in keyset chunks.
//
// Every walk follows an index SQLite already has, so that a chunk costs its own rows and not a scan:
// workloads by (organization_id, submitted_at, workload_id), the leading columns of
// workloads_org_submitted (there is no index on submitted_at alone), pods by pod_uid and lifetime
// totals by (workload_id, metric), their primary keys.
import { USAGE_FIGURES } from '../../store/usage/usage-columns.js';
import { openDatabase, type Database } from '../../store/sqlite/database.js';
import { monthStart, nextMonthStart } from '../../store/postgres/partitions.js';

/** What the source holds, as far as resuming cares: a different value means different contents. */
export interface SourceState {
  schemaVersion: number;
  /** The newest updated_at of any workload (0 without rows). */
  maxUpdatedAt: number;
  workloads: number;
  /** Σ sample_count of the lifetime totals: they change without any workload's updated_at. */
  lifetimeSamples: number;
  /** The clusters of the rows, sorted: what the copy owns in a target shared with other clusters. */
  clusters: string[];
  /** `v<schema>:<max updated_at>:<workloads>:<lifetime samples>`, the checkpoints' source_id. */
  id: string;
}

/** A workloads row as stored, every column. */
export interface SourceWorkload {
  workload_id: string;
  organization_id: string;
  cluster_id: string;
  namespace: string;
  name: string;
  kind: string;
  status: string;
  submitted_by: string;
  initiative_id: string;
  instance_type: string;
  gpu_count: number;
  submitted_at: number;
  started_at: number | null;
  completed_at: number | null;
  exit_code: number | null;
  is_managed: number;
  resource_version: string;
  failure_reason: string | null;
  allocated_gpus: number | null;
  gpu_sharing: string | null;
  gpu_model: string | null;
  capacity_type: string | null;
  gpu_seconds_closed: number;
  open_gpus: number;
  open_gpu_start_sum: number;
  updated_at: number;
}

export const WORKLOAD_COLUMNS = [
  'workload_id', 'organization_id', 'cluster_id', 'namespace', 'name', 'kind', 'status', 'submitted_by', 'initiative_id',
  'instance_type', 'gpu_count', 'submitted_at', 'started_at', 'completed_at', 'exit_code', 'is_managed', 'resource_version',
  'failure_reason', 'allocated_gpus', 'gpu_sharing', 'gpu_model', 'capacity_type', 'gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum',
  'updated_at',
] as const satisfies readonly (keyof SourceWorkload)[];

/** A pod with its workload's submitted_at, the month PostgreSQL keeps it in. */
export interface SourcePod {
  pod_uid: string;
  workload_id: string;
  submitted_at: number;
  gpus: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface SourceLifetime {
  workload_id: string;
  metric: string;
  sample_count: number;
  sum: number;
  min: number;
  max: number;
  current: number | null;
}

export type WorkloadKey = [organizationId: string, submittedAt: number, workloadId: string];
/** A row of the fleet's history: its table's grain, then its primary key. */
export type FleetKey = [grain: 'hour' | 'day', organizationId: string, at: number, clusterId: string, node: string];

/** A row of fleet_hours or fleet_days (schema v14, capacity_type v15), its hour or day as `at`. */
export interface SourceFleetRow {
  grain: 'hour' | 'day';
  organization_id: string;
  at: number;
  cluster_id: string;
  node: string;
  gpu_model: string | null;
  instance_type: string;
  capacity_type: string | null;
  capacity_ms: number;
  unavailable_ms: number;
  allocated_ms: number;
  idle_ms: number;
}
export type LifetimeKey = [workloadId: string, metric: string];

/** What a workload's GPUs did (schema v6): the figures, not the keys, which the target takes from its own rows. */
export interface SourceUsage {
  workload_id: string;
  util_seconds: number;
  util_weighted: number;
  idle_seconds: number;
  power_seconds: number;
  energy_dj: number;
  gpu_errors: number;
}

// Every figure gpucap migrate copies is a field of SourceUsage (checked at compile time).
USAGE_FIGURES satisfies readonly (keyof SourceUsage)[];

/**
 * Rows changed since a time: a workload whose updated_at is at or after it. SQLite's writer sets
 * updated_at on every change of a row, of its pods (the aggregates' refresh) and of a pod that left it.
 */
export type Since = number | null;

const SINCE = (alias: string) => `(@since IS NULL OR ${alias}.updated_at >= @since)`;

const WORKLOADS_FIRST = `SELECT ${WORKLOAD_COLUMNS.join(', ')} FROM workloads w WHERE ${SINCE('w')}
  ORDER BY organization_id, submitted_at, workload_id LIMIT @limit`;
const WORKLOADS_AFTER = `SELECT ${WORKLOAD_COLUMNS.join(', ')} FROM workloads w
  WHERE (organization_id, submitted_at, workload_id) > (@org, @at, @id) AND ${SINCE('w')}
  ORDER BY organization_id, submitted_at, workload_id LIMIT @limit`;
const PODS = `SELECT p.pod_uid, p.workload_id, w.submitted_at, p.gpus, p.started_at, p.finished_at
  FROM workload_pods p JOIN workloads w ON w.workload_id = p.workload_id
  WHERE p.pod_uid > @after AND ${SINCE('w')} ORDER BY p.pod_uid LIMIT @limit`;
// Totals of workloads the index does not hold (samples flushed before the row, and the row never
// came) are left out: nothing reads them, and PostgreSQL removes totals with their workload's month.
// A running workload's totals change without its row changing, so a delta takes every unfinished one.
const LIFETIMES = `SELECT l.workload_id, l.metric, l.sample_count, l.sum, l.min, l.max, l.current
  FROM workload_gpu_lifetime l JOIN workloads w ON w.workload_id = l.workload_id
  WHERE (l.workload_id, l.metric) > (@id, @metric) AND (w.completed_at IS NULL OR ${SINCE('w')})
  ORDER BY l.workload_id, l.metric LIMIT @limit`;

// As the lifetime totals: usage of workloads the index holds, every unfinished one's in a delta.
const USAGE = `SELECT u.workload_id, ${USAGE_FIGURES.map((f) => `u.${f}`).join(', ')}
  FROM workload_usage u JOIN workloads w ON w.workload_id = u.workload_id
  WHERE u.workload_id > @id AND (w.completed_at IS NULL OR ${SINCE('w')})
  ORDER BY u.workload_id LIMIT @limit`;

// The fleet's history by its primary key, hours then days. Rows change only while their hour (day) is
// open, so a delta takes those of the hour (day) of `since` and later.
const FLEET_COLUMNS =
  'organization_id, cluster_id, node, gpu_model, instance_type, capacity_type, capacity_ms, unavailable_ms, allocated_ms, idle_ms';
const fleetAfter = (grain: 'hour' | 'day') => `SELECT '${grain}' AS grain, ${grain} AS at, ${FLEET_COLUMNS}
  FROM fleet_${grain}s WHERE (organization_id, ${grain}, cluster_id, node) > (@org, @at, @cluster, @node) AND ${grain} >= @from
  ORDER BY organization_id, ${grain}, cluster_id, node LIMIT @limit`;
const FLEET_GRAIN_MS = { hour: 3_600_000, day: 86_400_000 } as const;

export class SourceIndex {
  readonly db: Database;
  readonly path: string;

  constructor(db: Database, path: string) {
    this.db = db;
    this.path = path;
  }

  state(): SourceState {
    const schemaVersion = this.db.pragma('user_version', { simple: true }) as number;
    const clusters = this.db
      .prepare(
        'SELECT cluster_id, COUNT(*) AS n, COALESCE(MAX(updated_at), 0) AS max ' +
          'FROM workloads GROUP BY cluster_id ORDER BY cluster_id',
      )
      .all() as { cluster_id: string; n: number; max: number }[];
    const workloads = clusters.reduce((sum, c) => sum + c.n, 0);
    const maxUpdatedAt = clusters.reduce((max, c) => Math.max(max, c.max), 0);
    const { samples } = this.db
      .prepare('SELECT COALESCE(SUM(sample_count), 0) AS samples FROM workload_gpu_lifetime')
      .get() as { samples: number };
    return {
      schemaVersion,
      maxUpdatedAt,
      workloads,
      lifetimeSamples: samples,
      clusters: clusters.map((c) => c.cluster_id),
      id: `v${schemaVersion}:${maxUpdatedAt}:${workloads}:${samples}`,
    };
  }

  /** The organizations, by seeks on the list index. */
  organizations(): string[] {
    const first = this.db.prepare<[], { org: string }>('SELECT organization_id AS org FROM workloads ORDER BY organization_id LIMIT 1');
    const next = this.db.prepare<[string], { org: string }>(
      'SELECT organization_id AS org FROM workloads WHERE organization_id > ? ORDER BY organization_id LIMIT 1',
    );
    const found: string[] = [];
    for (let row = first.get(); row !== undefined; row = next.get(row.org)) found.push(row.org);
    return found;
  }

  /** The first ms of each UTC month that has a submission, by seeks on the list index per organization. */
  months(): number[] {
    const next = this.db.prepare<[string, number], { at: number }>(
      'SELECT submitted_at AS at FROM workloads WHERE organization_id = ? AND submitted_at >= ? ' +
        'ORDER BY organization_id, submitted_at LIMIT 1',
    );
    const months = new Set<number>();
    for (const org of this.organizations()) {
      for (let row = next.get(org, Number.MIN_SAFE_INTEGER); row !== undefined; row = next.get(org, nextMonthStart(row.at))) {
        months.add(monthStart(row.at));
      }
    }
    return [...months].sort((a, b) => a - b);
  }

  countWorkloads(since: Since): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM workloads w WHERE ${SINCE('w')}`).get({ since }) as { n: number }).n;
  }

  countPods(since: Since): number {
    const sql = since === null
      ? 'SELECT COUNT(*) AS n FROM workload_pods'
      : `SELECT COUNT(*) AS n FROM workload_pods p JOIN workloads w ON w.workload_id = p.workload_id WHERE ${SINCE('w')}`;
    return (this.db.prepare(sql).get(since === null ? {} : { since }) as { n: number }).n;
  }

  countLifetimes(since: Since): number {
    const sql = `SELECT COUNT(*) AS n FROM workload_gpu_lifetime l JOIN workloads w ON w.workload_id = l.workload_id
      WHERE w.completed_at IS NULL OR ${SINCE('w')}`;
    return (this.db.prepare(sql).get({ since }) as { n: number }).n;
  }

  workloads(after: WorkloadKey | null, limit: number, since: Since): SourceWorkload[] {
    if (after === null) return this.db.prepare(WORKLOADS_FIRST).all({ since, limit }) as SourceWorkload[];
    const [org, at, id] = after;
    return this.db.prepare(WORKLOADS_AFTER).all({ org, at, id, since, limit }) as SourceWorkload[];
  }

  pods(after: string | null, limit: number, since: Since): SourcePod[] {
    // '' sorts before every uid; a pod_uid of '' itself does not occur (Kubernetes UIDs).
    return this.db.prepare(PODS).all({ after: after ?? '', since, limit }) as SourcePod[];
  }

  lifetimes(after: LifetimeKey | null, limit: number, since: Since): SourceLifetime[] {
    const [id, metric] = after ?? ['', ''];
    // ('', '') sorts before every key but ('', ''), which no workload has.
    return this.db.prepare(LIFETIMES).all({ id, metric, since, limit }) as SourceLifetime[];
  }

  countUsage(since: Since): number {
    const sql = `SELECT COUNT(*) AS n FROM workload_usage u JOIN workloads w ON w.workload_id = u.workload_id
      WHERE w.completed_at IS NULL OR ${SINCE('w')}`;
    return (this.db.prepare(sql).get({ since }) as { n: number }).n;
  }

  usage(after: string | null, limit: number, since: Since): SourceUsage[] {
    // '' sorts before every id.
    return this.db.prepare(USAGE).all({ id: after ?? '', since, limit }) as SourceUsage[];
  }

  countFleet(since: Since): number {
    let n = 0;
    for (const grain of ['hour', 'day'] as const) {
      const sql = `SELECT COUNT(*) AS n FROM fleet_${grain}s WHERE ${grain} >= @from`;
      n += (this.db.prepare(sql).get({ from: fleetFrom(grain, since) }) as { n: number }).n;
    }
    return n;
  }

  /** The fleet's history after `after`: the hours, then the days. */
  fleet(after: FleetKey | null, limit: number, since: Since): SourceFleetRow[] {
    const [grain, org, at, cluster, node] = after ?? ['hour', '', Number.MIN_SAFE_INTEGER, '', ''];
    const read = (g: 'hour' | 'day', key: { org: string; at: number; cluster: string; node: string }, wanted: number) =>
      this.db.prepare(fleetAfter(g)).all({ ...key, from: fleetFrom(g, since), limit: wanted }) as SourceFleetRow[];
    const rows = read(grain, { org, at, cluster, node }, limit);
    if (grain === 'day' || rows.length === limit) return rows;
    return [...rows, ...read('day', { org: '', at: Number.MIN_SAFE_INTEGER, cluster: '', node: '' }, limit - rows.length)];
  }

  /** Every cluster's mark of the fleet's history. */
  fleetMarks(): { cluster_id: string; covered_to: number }[] {
    const marks = this.db.prepare('SELECT cluster_id, covered_to FROM fleet_marks ORDER BY cluster_id');
    return marks.all() as { cluster_id: string; covered_to: number }[];
  }

  /** Those of `ids` that the source does not hold. */
  missing(ids: readonly string[]): string[] {
    const rows = this.db
      .prepare('SELECT value AS id FROM json_each(?) WHERE value NOT IN (SELECT workload_id FROM workloads)')
      .all(JSON.stringify(ids)) as { id: string }[];
    return rows.map((row) => row.id);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The first hour (day) a delta since `since` copies: the one `since` falls in. */
function fleetFrom(grain: 'hour' | 'day', since: Since): number {
  return since === null ? Number.MIN_SAFE_INTEGER : Math.floor(since / FLEET_GRAIN_MS[grain]) * FLEET_GRAIN_MS[grain];
}

/**
 * Opens an index file for reading. It must be at this build's SQLite schema: an older file is
 * migrated by this release's service when it starts on it, and copying one here would need the
 * read-write open that migrates it, which a live pod's file must not get from a second process.
 */
export function openSource(path: string): SourceIndex {
  try {
    return new SourceIndex(openDatabase(path, { readonly: true }), path);
  } catch (error) {
    throw new Error(
      `Cannot read the SQLite index "${path}": ${(error as Error).message}. ` +
        'gpucap migrate copies files of the schema this release writes: run this release\'s service on the file once, then migrate',
      { cause: error },
    );
  }
}
