// The rollups kept per batch by the writer against a recomputation from scratch, after random
// sequences of every write the store has: upserts that move a workload between statuses, labels,
// instance types and days; pod intervals that open, close, reopen and move between workloads (and
// name workloads not written yet); closeOpenIntervals; retention deletes. A few ids, so that writes
// keep meeting the same rows. FC_SEED=<n> replays a run.
import { expect } from 'chai';
import fc from 'fast-check';
import { TERMINAL_STATUSES, WORKLOAD_STATUSES, type PodGpuInterval, type WorkloadRecord } from '../../src/domain/workload.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteWorkloadStore } from '../../src/store/sqlite/workload-store.js';
import { DAY_MS, recomputedRollups, rollupContents, T0 } from './rollup-history.js';
import { HOUR_MS } from './temp-store.js';
import { sqliteOnly } from '../support/backend.js';

const SEED = Number(process.env.FC_SEED ?? 20261128);
const WORKLOAD_IDS = ['w-0', 'w-1', 'w-2', 'w-3', 'w-4', 'w-5'];
const POD_UIDS = ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6', 'p-7'];

type Command =
  | { kind: 'workloads'; records: WorkloadRecord[] }
  | { kind: 'pods'; intervals: PodGpuInterval[] }
  | { kind: 'close'; workloadIds: string[]; at: number }
  | { kind: 'retention'; cutoff: number; limit: number };

/** Around T0: midnights and the ms before them, any ms of 3 days, now and then 1970 itself. */
const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: T0 - 3 * DAY_MS, max: T0 + DAY_MS }) },
  { weight: 2, arbitrary: fc.constantFrom(T0 - 2 * DAY_MS, T0 - DAY_MS, T0 - DAY_MS - 1, T0, T0 - 1) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1000) },
);

const record: fc.Arbitrary<WorkloadRecord> = fc
  .record({
    workloadId: fc.constantFrom(...WORKLOAD_IDS),
    organizationId: fc.constantFrom('acme', 'globex'),
    status: fc.constantFrom(...WORKLOAD_STATUSES),
    submittedBy: fc.constantFrom('alice', 'bob'),
    initiativeId: fc.constantFrom('llm', 'vision', 'infra'),
    instanceType: fc.constantFrom('p5', 'a3', 'unknown'),
    gpuCount: fc.constantFrom(0, 1, 8),
    submittedAt: time,
    startedAt: fc.option(time),
    completedAt: time,
    exitCode: fc.constantFrom(0, 1, 137),
    isManaged: fc.boolean(),
    resourceVersion: fc.constantFrom('', '1', '2', '3'),
  })
  .map((r) => {
    const finished = TERMINAL_STATUSES.includes(r.status);
    return {
      ...r,
      clusterId: 'local',
      namespace: 'ns',
      name: r.workloadId,
      kind: 'Job' as const,
      startedAt: r.status === 'pending' ? null : r.startedAt,
      completedAt: finished ? r.completedAt : null,
      exitCode: finished ? r.exitCode : null,
    };
  });

const interval: fc.Arbitrary<PodGpuInterval> = fc.record({
  podUid: fc.constantFrom(...POD_UIDS),
  // Sometimes a workload that is not written yet: the interval is skipped.
  workloadId: fc.constantFrom(...WORKLOAD_IDS, 'w-unknown'),
  gpus: fc.constantFrom(0, 1, 2, 8),
  startedAt: fc.option(time, { freq: 4 }),
  finishedAt: fc.option(time),
});

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.array(record, { minLength: 1, maxLength: 6 }).map((records) => ({ kind: 'workloads' as const, records })) },
  { weight: 4, arbitrary: fc.array(interval, { minLength: 1, maxLength: 8 }).map((intervals) => ({ kind: 'pods' as const, intervals })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const), workloadIds: fc.subarray(WORKLOAD_IDS, { minLength: 1 }), at: time }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retention' as const), cutoff: fc.integer({ min: T0 - 2 * DAY_MS, max: T0 + 2 * DAY_MS }), limit: fc.integer({ min: 1, max: 4 }) }) },
);

async function apply(store: SqliteWorkloadStore, c: Command): Promise<number> {
  switch (c.kind) {
    case 'workloads':
      return store.upsertWorkloads(c.records);
    case 'pods':
      return store.upsertPodIntervals(c.intervals);
    case 'close':
      return store.closeOpenIntervals(c.workloadIds, c.at);
    case 'retention':
      return store.deleteFinishedBatch(c.cutoff, c.limit);
  }
}

sqliteOnly.describe('store/rollups property: kept per batch, equal to a recomputation from the rows', function () {
  this.timeout(300_000);

  it('after any sequence of upserts, pod intervals, closeOpenIntervals and retention deletes, every rollup table equals a GROUP BY over the rows', async () => {
    const seen = { moves: 0, deletes: 0, closes: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), async (commands) => {
        const db = openDatabase(':memory:');
        try {
          const store = new SqliteWorkloadStore(db, { clock: { now: () => T0 + HOUR_MS } });
          const owner = db.prepare('SELECT workload_id FROM workload_pods WHERE pod_uid = ?').pluck();
          for (const [i, c] of commands.entries()) {
            const owners = c.kind === 'pods' ? c.intervals.map((p) => owner.get(p.podUid)) : [];
            const done = await apply(store, c);
            if (c.kind === 'pods') seen.moves += c.intervals.filter((p, k) => owners[k] !== undefined && owners[k] !== p.workloadId && owner.get(p.podUid) === p.workloadId).length;
            if (c.kind === 'retention') seen.deletes += done;
            if (c.kind === 'close') seen.closes += done;
            // Midway too, so that a wrong delta cannot be hidden by a later one that cancels it.
            if (i === Math.floor(commands.length / 2)) expect(rollupContents(db), `after command ${i}`).to.deep.equal(recomputedRollups(db));
          }
          expect(rollupContents(db)).to.deep.equal(recomputedRollups(db));
        } finally {
          db.close();
        }
      }),
      { numRuns: 200, seed: SEED },
    );
    // Every kind of change was exercised, not only the easy ones.
    expect(Math.min(seen.moves, seen.deletes, seen.closes), JSON.stringify(seen)).to.be.greaterThan(10);
  });
});
