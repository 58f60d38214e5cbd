// `gpucap migrate`: copies an SQLite index into PostgreSQL, history and lifetime totals included, in
// phases that each record their progress with every chunk (checkpoints.ts), then checks the copy
// (verify-index.ts). Design: docs/scaling.md, "Moving from SQLite".
//
// 1. partitions  the months the source has submissions in (there is no DEFAULT partition)
// 2. workloads   by keyset, chunks of `chunkRows` rows, GPU aggregates as SQLite holds them
// 3. pods        with their workload's submitted_at, the month PostgreSQL keeps them in
// 4. prune       rows of the source's clusters that the source no longer holds (a delta after
//                retention ran); skipped when the counts show there are none
// 5. lifetime    lifetime totals, last_minute = the cut-over minute
// 6. usage       what each workload's GPUs did
// 7. fleet       the fleet's history by hour and day, and each cluster's mark (a delta: the hours and
//                days from that of the earlier copy on, the only ones that still change)
// 8. rollups     rebuilt from the rows (rollup-rebuild.ts)
// 9. verify      the checks; the run is done when they pass
//
// A delta (--resume over a finished copy of an earlier state of the source) runs the same phases over
// the rows changed since that copy, replacing what the target holds of them.
import type { ConnectionLogger } from '../../store/postgres/connection.js';
import { ensurePartitions } from '../../store/postgres/partitions.js';
import { rebuildRollups } from '../../store/postgres/rollup-rebuild.js';
import { inTransaction, type Queryable } from '../../store/postgres/transaction.js';
import { dropChains, readChains, saveProgress, startChain, type Chain, type Phase } from './checkpoints.js';
import { chunkWriter, type WriteMode } from './chunk-writer.js';
import { TransferRefused } from './errors.js';
import { prepareSource } from './prepare-source.js';
import { Progress } from './progress.js';
import { SNAPSHOT_FILE } from './snapshot.js';
import { chainsOf, planRun } from './run-plan.js';
import type { FleetKey, LifetimeKey, SourceIndex, SourceState, WorkloadKey } from './source.js';
import { countClusters, deleteClusters, deleteWorkloads, holdsClusters, liveWriters, openTarget } from './target.js';
import { verifyIndex, type Verification } from './verify-index.js';

export interface MigrateIndexOptions {
  /** The live SQLite index file. */
  from: string;
  /** The PostgreSQL URL. */
  to: string;
  /** Folder of the snapshot; null reads `from` itself (--no-snapshot: the service is stopped). */
  snapshotDir: string | null;
  resume: boolean;
  restart: boolean;
  /** Copy even while a writer of the source's clusters heartbeats. */
  force: boolean;
  chunkRows: number;
  clock: { now(): number };
  /** Progress lines. */
  print: (line: string) => void;
  logger: ConnectionLogger;
}

export interface MigrateIndexResult {
  kind: 'full' | 'continued' | 'delta' | 'finished';
  verification: Verification;
}

/**
 * A delta takes the rows changed since a little before the earlier copy's newest change: updated_at
 * is the writer's wall clock, which NTP may step back, and rows written in the same ms as the newest
 * copied one came after the copy. Rows copied twice are only replaced by themselves.
 */
export const DELTA_MARGIN_MS = 10 * 60_000;

const namedClusters = (clusters: readonly string[]) =>
  `cluster${clusters.length === 1 ? '' : 's'} ${clusters.map((c) => `"${c}"`).join(', ')}`;

export async function migrateIndex(options: MigrateIndexOptions): Promise<MigrateIndexResult> {
  const target = await openTarget(options.to, { logger: options.logger, now: options.clock.now() });
  let done = false;
  try {
    const chains = await readChains(target.client);
    const source = prepareSource({
      from: options.from,
      snapshotDir: options.snapshotDir,
      snapshotFile: SNAPSHOT_FILE,
      clock: options.clock,
      print: options.print,
      // The snapshot an interrupted run read, when that is the run to resume.
      reuse: (state) => options.resume && !options.restart && chainsOf(state, chains).some((c) => c.sourceId === state.id && !c.done),
    });
    try {
      const result = await run(target.client, source.index, source.state, chains, options);
      done = result.verification.ok;
      return result;
    } finally {
      source.close({ keepSnapshot: !done });
      if (!done && source.snapshot !== null) options.print(`snapshot: kept ${source.snapshot} for --resume`);
    }
  } finally {
    await target.close();
  }
}

async function run(
  client: Queryable,
  source: SourceIndex,
  state: SourceState,
  chains: readonly Chain[],
  options: MigrateIndexOptions,
): Promise<MigrateIndexResult> {
  const plan = planRun(state, chains, options);
  const at = options.clock.now();
  if (plan.kind === 'finished') {
    options.print('Nothing to copy: the target holds a finished migration of this very source ' +
      `(${state.workloads.toLocaleString('en-US')} workloads); checking it`);
    return { kind: 'finished', verification: await verifyIndex(source, client, { at, clusters: state.clusters }) };
  }
  await refuseLiveWriters(client, state, options);
  let chain: Chain;
  if (plan.kind === 'continue') {
    chain = plan.chain;
    options.print(`Resuming the migration of ${state.workloads.toLocaleString('en-US')} workloads (${chain.plan.mode})`);
  } else {
    if (plan.kind === 'start' && plan.clear) {
      options.print(`Restarting: deleting what the target holds of ${namedClusters(state.clusters)}`);
      await deleteClusters(client, state.clusters);
      await dropChains(client, plan.drop);
    } else if (plan.kind === 'start' && (await holdsClusters(client, state.clusters))) {
      throw new TransferRefused(
        `The target already holds workloads of ${namedClusters(state.clusters)} that no earlier migration recorded ` +
          '(a replica on PostgreSQL wrote them, or the checkpoints were deleted); pass --restart to delete them and copy the source',
      );
    }
    const since = plan.kind === 'delta' ? plan.base.plan.maxUpdatedAt - DELTA_MARGIN_MS : null;
    chain = await startChain(client, state.id, {
      mode: since === null ? 'full' : 'delta',
      since,
      clusters: state.clusters,
      path: options.from,
      schemaVersion: state.schemaVersion,
      maxUpdatedAt: state.maxUpdatedAt,
      workloads: state.workloads,
      startedAt: at,
    });
    if (since !== null) {
      const copied = plan.kind === 'delta' ? plan.base.plan.workloads.toLocaleString('en-US') : 0;
      options.print(`Copying what changed since ${new Date(since).toISOString()} over the migration of ${copied} workloads`);
    }
  }
  const copy = new Copy(client, source, state, chain, options, at);
  for (const phase of ['partitions', 'workloads', 'pods', 'prune', 'lifetime', 'usage', 'fleet', 'rollups'] as const) {
    if (chain.phases.get(phase)?.lastKey === null) continue;
    await copy[phase]();
  }
  const verification = await verifyIndex(source, client, { at, clusters: state.clusters });
  // A synchronous commit flushes the WAL of every asynchronous one before it (openTarget): the copy
  // is durable before the run says it is done.
  await client.query('SET synchronous_commit = on');
  if (verification.ok) await saveProgress(client, chain.sourceId, 'verify', null, verification.checks.length);
  const kind = plan.kind === 'continue' ? 'continued' : chain.plan.mode;
  return { kind, verification };
}

async function refuseLiveWriters(client: Queryable, state: SourceState, options: MigrateIndexOptions): Promise<void> {
  const live = await liveWriters(client, state.clusters);
  if (live.length === 0) return;
  const who = live.map((w) => `"${w.clusterId}" by ${w.holder} (heartbeat ${w.heartbeatAgeSeconds.toFixed(0)} s ago)`).join(', ');
  if (options.force) {
    options.print(`Warning: copying while a replica writes ${who}, as --force asks: rows it wrote may go back to the source's older state`);
    return;
  }
  throw new TransferRefused(
    `A replica on PostgreSQL is writing ${who}: copying the source's older rows under it would undo its writes; ` +
      'stop that release (scale it to 0) and wait for its heartbeat to go stale, or pass --force',
  );
}

/** The phases of one chain. Each resumes from its last checkpoint and records its own. */
class Copy {
  readonly #client: Queryable;
  readonly #source: SourceIndex;
  readonly #state: SourceState;
  readonly #chain: Chain;
  readonly #options: MigrateIndexOptions;
  readonly #progress: Progress;
  readonly #mode: WriteMode;
  /** PostgreSQL's lifetime totals carry the last minute summed in: the cut-over's, in epoch ms. */
  readonly #lastMinute: number;
  /** A delta's start: rows whose updated_at is before it are left as the earlier copy holds them. */
  readonly #since: number | null;

  constructor(client: Queryable, source: SourceIndex, state: SourceState, chain: Chain, options: MigrateIndexOptions, at: number) {
    this.#client = client;
    this.#source = source;
    this.#state = state;
    this.#chain = chain;
    this.#options = options;
    this.#progress = new Progress({ clock: options.clock, print: options.print });
    this.#mode = chain.plan.mode === 'full' ? 'insert' : 'replace';
    this.#lastMinute = Math.floor(at / 60_000) * 60_000;
    this.#since = chain.plan.since;
  }

  async partitions(): Promise<void> {
    this.#progress.start('partitions', null);
    const months = this.#source.months();
    const created = await ensurePartitions(this.#client, months);
    await saveProgress(this.#client, this.#chain.sourceId, 'partitions', null, created.length);
    const seconds = this.#progress.seconds().toFixed(1);
    this.#progress.note(`partitions: ${months.length} months with submissions, ${created.length} created, in ${seconds} s`);
  }

  async workloads(): Promise<void> {
    await this.#copy<WorkloadKey, ReturnType<SourceIndex['workloads']>[number]>('workloads', {
      total: () => this.#source.countWorkloads(this.#since),
      read: (after, limit) => this.#source.workloads(after, limit, this.#since),
      keyOf: (row) => [row.organization_id, row.submitted_at, row.workload_id],
      write: (rows) => chunkWriter.workloads(this.#client, rows, this.#mode),
    });
  }

  async pods(): Promise<void> {
    await this.#copy<[string], ReturnType<SourceIndex['pods']>[number]>('pods', {
      total: () => this.#source.countPods(this.#since),
      read: (after, limit) => this.#source.pods(after?.[0] ?? null, limit, this.#since),
      keyOf: (row) => [row.pod_uid],
      write: (rows) => chunkWriter.pods(this.#client, rows, this.#mode),
    });
  }

  async lifetime(): Promise<void> {
    await this.#copy<LifetimeKey, ReturnType<SourceIndex['lifetimes']>[number]>('lifetime', {
      total: () => this.#source.countLifetimes(this.#since),
      read: (after, limit) => this.#source.lifetimes(after, limit, this.#since),
      keyOf: (row) => [row.workload_id, row.metric],
      write: (rows) => chunkWriter.lifetimes(this.#client, rows, this.#mode, this.#lastMinute),
    });
  }

  async usage(): Promise<void> {
    await this.#copy<[string], ReturnType<SourceIndex['usage']>[number]>('usage', {
      total: () => this.#source.countUsage(this.#since),
      read: (after, limit) => this.#source.usage(after?.[0] ?? null, limit, this.#since),
      keyOf: (row) => [row.workload_id],
      write: (rows) => chunkWriter.usage(this.#client, rows, this.#mode),
    });
  }

  /** The marks first: the target has no writer of these clusters while the copy runs (refuseLiveWriters). */
  async fleet(): Promise<void> {
    await chunkWriter.fleetMarks(this.#client, this.#source.fleetMarks());
    await this.#copy<FleetKey, ReturnType<SourceIndex['fleet']>[number]>('fleet', {
      total: () => this.#source.countFleet(this.#since),
      read: (after, limit) => this.#source.fleet(after, limit, this.#since),
      keyOf: (row) => [row.grain, row.organization_id, row.at, row.cluster_id, row.node],
      write: (rows) => chunkWriter.fleet(this.#client, rows),
    });
  }

  /**
   * The target's rows of the source's clusters that the source no longer holds. Every row the source
   * holds is in the target by now (copied, or unchanged since an earlier copy), so equal counts mean
   * there is none and nothing is read.
   */
  async prune(): Promise<void> {
    const clusters = this.#state.clusters;
    const found = await countClusters(this.#client, clusters);
    if (found === this.#state.workloads) {
      await saveProgress(this.#client, this.#chain.sourceId, 'prune', null, 0);
      return;
    }
    this.#progress.start('prune', found - this.#state.workloads);
    let after = this.#chain.phases.get('prune')?.lastKey ?? [];
    for (;;) {
      const { rows } = await this.#client.query<{ workload_id: string; submitted_at: number }>(
        `SELECT workload_id, submitted_at FROM workloads WHERE cluster_id = ANY($1::text[]) AND (workload_id, submitted_at) > ($2, $3)
         ORDER BY workload_id, submitted_at LIMIT $4`,
        [clusters, after[0] ?? '', after[1] ?? Number.MIN_SAFE_INTEGER, this.#options.chunkRows],
      );
      const gone = new Set(this.#source.missing(rows.map((r) => r.workload_id)));
      const last = rows.at(-1);
      const next = rows.length < this.#options.chunkRows || last === undefined ? null : [last.workload_id, last.submitted_at];
      const removed = rows.filter((r) => gone.has(r.workload_id));
      await inTransaction(this.#client, async () => {
        if (removed.length > 0) await deleteWorkloads(this.#client, removed);
        await saveProgress(this.#client, this.#chain.sourceId, 'prune', next, removed.length);
      });
      this.#progress.advance(removed.length);
      if (next === null) break;
      after = next;
    }
    this.#progress.finish('rows the source no longer holds, deleted');
  }

  async rollups(): Promise<void> {
    this.#progress.start('rollups', null);
    await rebuildRollups(this.#client);
    await saveProgress(this.#client, this.#chain.sourceId, 'rollups', null, 0);
    this.#progress.note(`rollups: rebuilt from the rows in ${this.#progress.seconds().toFixed(1)} s`);
  }

  /**
   * One keyset phase: read a chunk, write it with its checkpoint in one transaction, until the source
   * has no more. The next chunk is read from SQLite while PostgreSQL inserts the current one.
   */
  async #copy<Key extends unknown[], Row>(
    phase: Phase,
    steps: {
      total: () => number;
      read: (after: Key | null, limit: number) => Row[];
      keyOf: (row: Row) => Key;
      write: (rows: Row[]) => Promise<void>;
    },
  ): Promise<void> {
    const earlier = this.#chain.phases.get(phase);
    const limit = this.#options.chunkRows;
    const after = earlier === undefined || earlier.lastKey === null || earlier.lastKey.length === 0 ? null : (earlier.lastKey as Key);
    this.#progress.start(phase, steps.total(), earlier?.rows ?? 0);
    let rows = steps.read(after, limit);
    for (;;) {
      const last = rows.at(-1);
      // A short chunk is the last one: the phase ends in its transaction.
      const next = rows.length < limit || last === undefined ? null : steps.keyOf(last);
      let upcoming: Row[] = [];
      await inTransaction(this.#client, async () => {
        if (rows.length > 0) {
          // The write's first statement is on its way before the read blocks the thread.
          const writing = steps.write(rows);
          try {
            if (next !== null) upcoming = steps.read(next, limit);
          } catch (error) {
            await writing.catch(() => undefined);
            throw error;
          }
          await writing;
        }
        await saveProgress(this.#client, this.#chain.sourceId, phase, next, rows.length);
      });
      this.#progress.advance(rows.length);
      if (next === null) break;
      rows = upcoming;
    }
    this.#progress.finish();
  }
}
