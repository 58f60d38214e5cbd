// PostgreSQL side of bench/telemetry-ha.ts: a throwaway server (scripts/postgres/start.sh through the
// tests' support), databases migrated as the service's start migrates them, a GpuSummaryStore that
// times the writer's statements, WAL position and table sizes, the CPU of one server backend, and the
// fleet-scale flush (synthetic bucket rows for many running workloads, written and refreshed as the
// flusher does). The summary stores run on pools of the benchmark's own, not on an openBackend's: the
// CPU measured is that of the backend behind the writer's one connection, which must keep its pid.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { GpuBucketRow, GpuSummaryStore } from '../../../src/domain/telemetry.js';
import { PostgresGpuSummaries } from '../../../src/store/tooling.js';
import { SharedTelemetryReader } from '../../../src/telemetry/summaries/shared-telemetry.js';
import { databaseUrl } from '../../../test/support/postgres-database.js';
import { POSTGRES_INSTALL_HINT, startPostgres, type PostgresServer } from '../../../test/support/postgres.js';
import { summarize, timeCalls, type LatencySummary } from '../measure/load.js';
import { migrateToServiceSchema } from '../store/service-schema.js';

const MINUTE_MS = 60_000;

export interface BenchDatabase {
  url: string;
  /** A pool of `max` connections that never closes an idle one (a backend keeps its pid). */
  pool(max: number): pg.Pool;
  close(): Promise<void>;
}

export async function startBenchPostgres(): Promise<{ server: PostgresServer; database(name: string): Promise<BenchDatabase> }> {
  if ((process.env.PG_BIN ?? '') === '') throw new Error(`The telemetry-ha benchmark needs PostgreSQL: ${POSTGRES_INSTALL_HINT}`);
  const server = await startPostgres();
  return {
    server,
    async database(name: string): Promise<BenchDatabase> {
      if (name !== 'gpucap') {
        const admin = new pg.Client({ connectionString: server.url });
        await admin.connect();
        await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
      }
      const url = databaseUrl(server.url, name);
      await migrateToServiceSchema({ kind: 'postgres', url, readUrl: undefined }, { now: Date.now() });
      const pools: pg.Pool[] = [];
      return {
        url,
        pool(max: number) {
          const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 0 });
          pools.push(pool);
          return pool;
        },
        close: async () => void (await Promise.all(pools.map((p) => p.end()))),
      };
    },
  };
}

/** The server's WAL position, in bytes. */
export async function walBytes(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ at: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS at");
  return Number(rows[0]?.at ?? 0);
}

/** pg_total_relation_size (table, indexes, TOAST) of each telemetry table, in bytes. */
export async function tableBytes(pool: pg.Pool): Promise<Record<string, number>> {
  const tables = ['workload_gpu_buckets', 'workload_gpu_last_hour', 'workload_gpu_lifetime'];
  const { rows } = await pool.query<{ name: string; bytes: string }>('SELECT t AS name, pg_total_relation_size(t)::text AS bytes FROM unnest($1::text[]) AS t', [tables]);
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
}

/** CPU seconds (user + system) of the server backend behind a one-connection pool, from /proc. */
export async function backendCpu(pool: pg.Pool): Promise<() => number> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = rows[0]?.pid;
  return () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
    } catch {
      return NaN;
    }
  };
}

export interface StatementTimes {
  writeMs: number[];
  refreshMs: number[];
  /** Per stored bucket: its start and the (simulated) time its rows were written. */
  written: { bucketAt: number; at: number; rows: number }[];
}

/** `store` with the writer's statements timed, and each stored bucket noted at `now()`. */
export function timedStore(store: GpuSummaryStore, now: () => number): { store: GpuSummaryStore; times: StatementTimes } {
  const times: StatementTimes = { writeMs: [], refreshMs: [], written: [] };
  const timed: GpuSummaryStore = {
    writeBucket: async (bucketAt, rows) => {
      const began = performance.now();
      const stored = await store.writeBucket(bucketAt, rows);
      times.writeMs.push(performance.now() - began);
      times.written.push({ bucketAt, at: now(), rows: stored });
      return stored;
    },
    refreshLastHour: async (clusterId, to) => {
      const began = performance.now();
      await store.refreshLastHour(clusterId, to);
      times.refreshMs.push(performance.now() - began);
    },
    pruneBuckets: (clusterId, before) => store.pruneBuckets(clusterId, before),
    window: (workloadId, window) => store.window(workloadId, window),
    buckets: (workloadId, window) => store.buckets(workloadId, window),
    lifetimeBuckets: (workloadId) => store.lifetimeBuckets(workloadId),
    lastHour: (slot, now) => store.lastHour(slot, now),
    lifetime: (workloadId) => store.lifetime(workloadId),
  };
  return { store: timed, times };
}

/**
 * Copies the stored buckets back in time, `span` at a time, `copies` times (the 2 simulated hours
 * become 24): reads then walk a day of rows shaped as the writer writes them. The lifetime totals are
 * left alone. Returns the rows added.
 */
export async function extendBucketsBack(pool: pg.Pool, spanMs: number, copies: number): Promise<number> {
  const result = await pool.query(
    `INSERT INTO workload_gpu_buckets (workload_id, bucket_at, cluster_id, count, sum, min, max, latest_sum, latest_count)
     SELECT workload_id, bucket_at - k * $1::bigint, cluster_id, count, sum, min, max, latest_sum, latest_count
     FROM workload_gpu_buckets CROSS JOIN generate_series(1, $2::int) AS k`,
    [spanMs, copies],
  );
  await pool.query('VACUUM ANALYZE workload_gpu_buckets');
  return result.rowCount ?? 0;
}

/** A plausible bucket row of synthetic workload `i`: 8 GPUs scraped 4 times in the bucket. */
function syntheticRow(i: number, bucket: number, clusterId: string): GpuBucketRow {
  const u = 30 + ((i * 53 + bucket * 7) % 65);
  const perMetric = [u, u * 0.6, 35 + u * 0.4, 90 + u * 6, u * 0.93];
  const samples = 32;
  const gpus = 8;
  return {
    workloadId: `fleet-${String(i).padStart(6, '0')}`,
    clusterId,
    count: perMetric.map(() => samples),
    sum: perMetric.map((v) => v * samples),
    min: perMetric.map((v) => v * 0.9),
    max: perMetric.map((v) => v * 1.1),
    latestSum: perMetric.map((v) => v * gpus),
    latestCount: perMetric.map(() => gpus),
    current: perMetric.map((v) => Math.round(v * 100) / 100),
    // Each sample counts for a 15 s scrape interval; utilization in 0.01 %, power in 0.1 W.
    usage: {
      utilSeconds: samples * 15, utilWeighted: Math.round(u * 100) * samples * 15, idleSeconds: 0,
      powerSeconds: samples * 15, energyDj: Math.round((90 + u * 6) * 10) * samples * 15, gpuErrors: 0,
    },
  };
}

export interface FleetScaleResult {
  workloads: number;
  buckets: number;
  /** Each bucket: writeBucket, then refreshLastHour, as the flusher runs them (ms). */
  writeMs: LatencySummary;
  refreshMs: LatencySummary;
  /** Refreshes once the last hour held `fullHourBuckets` buckets or more (the steady state). */
  refreshFullHourMs: LatencySummary | null;
  flushMs: LatencySummary;
  clientCpuMsPerBucket: number;
  serverCpuMsPerBucket: number;
  walBytesPerBucket: number;
  rowsPerHour: number;
  tableBytes: Record<string, number>;
  tableBytesPerHourOfBuckets: number;
  rankingMs: Record<string, LatencySummary>;
}

/** Writes `buckets` one-minute buckets of `workloads` synthetic running workloads, timing each flush. */
export async function measureFleetScale(
  db: BenchDatabase,
  settings: { workloads: number; buckets: number; readRuns: number },
  startAt: number,
  log: (line: string) => void,
): Promise<FleetScaleResult> {
  const writerPool = db.pool(1);
  const store = new PostgresGpuSummaries({ primary: writerPool, readers: writerPool });
  const serverCpu = await backendCpu(writerPool);
  const clusterId = 'fleet';
  const write: number[] = [];
  const refresh: number[] = [];
  const refreshFull: number[] = [];
  const flush: number[] = [];
  let wal = 0;
  let clientCpu = 0;
  let serverCpuSeconds = 0;
  for (let b = 0; b < settings.buckets; b += 1) {
    const bucketAt = startAt + b * MINUTE_MS;
    const rows = Array.from({ length: settings.workloads }, (_, i) => syntheticRow(i, b, clusterId));
    const walBefore = await walBytes(writerPool);
    const cpuBefore = process.cpuUsage();
    const serverBefore = serverCpu();
    const began = performance.now();
    await store.writeBucket(bucketAt, rows);
    const written = performance.now();
    await store.refreshLastHour(clusterId, bucketAt + MINUTE_MS);
    const done = performance.now();
    const cpu = process.cpuUsage(cpuBefore);
    clientCpu += (cpu.user + cpu.system) / 1000;
    serverCpuSeconds += serverCpu() - serverBefore;
    wal += (await walBytes(writerPool)) - walBefore;
    write.push(written - began);
    refresh.push(done - written);
    if (b + 1 >= 60) refreshFull.push(done - written);
    flush.push(done - began);
    if ((b + 1) % 10 === 0 || b + 1 === settings.buckets) log(`  fleet scale: ${b + 1} of ${settings.buckets} buckets of ${settings.workloads.toLocaleString('en-US')} rows, last flush ${(done - began).toFixed(0)} ms`);
  }
  const sizes = await tableBytes(writerPool);
  const reader = new SharedTelemetryReader(store, { widthMs: MINUTE_MS });
  const now = startAt + settings.buckets * MINUTE_MS;
  const rankingMs: Record<string, LatencySummary> = {};
  for (const metric of ['gpu_utilization', 'memory_utilization', 'power_usage'] as const) {
    rankingMs[metric] = await timeCalls(() => reader.lastHour(metric, now), { runs: settings.readRuns, warmup: 3 });
  }
  const n = settings.buckets;
  return {
    workloads: settings.workloads,
    buckets: n,
    writeMs: summarize(write),
    refreshMs: summarize(refresh),
    refreshFullHourMs: refreshFull.length === 0 ? null : summarize(refreshFull),
    flushMs: summarize(flush),
    clientCpuMsPerBucket: Math.round(clientCpu / n),
    serverCpuMsPerBucket: Math.round((serverCpuSeconds * 1000) / n),
    walBytesPerBucket: Math.round(wal / n),
    rowsPerHour: settings.workloads * 60,
    tableBytes: sizes,
    tableBytesPerHourOfBuckets: Math.round(((sizes.workload_gpu_buckets ?? 0) * 60) / n),
    rankingMs,
  };
}
