// writeWorkloads(records, intervals), the write of a flush step, against the two calls it stands for:
// upsertWorkloads(records) then upsertPodIntervals(intervals). Two indexes on the test backend get the
// same writes, one each way, at the same clock, and must hold the same tables to the last bit: rows
// (GPU aggregates, updated_at and, on SQLite, rowids included), pods, every rollup table (rows at 0
// included), and on PostgreSQL the key tables. It also writes each row once where the two calls
// write a row whose pods changed twice.
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import fc from 'fast-check';
import type { PodGpuInterval, WorkloadRecord } from '../../../src/domain/workload.js';
import { ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { TEST_BACKEND } from '../../support/backend.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { rejectionOf } from '../../support/rejection.js';
import { openTestIndex, type ClusterWriter, type TestIndex } from '../../support/test-index.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { batches, history, T0 } from '../rollup-history.js';
import { interval, record, time, WORKLOAD_IDS } from '../write-commands.js';

type Row = Record<string, unknown>;
type Written = { rows: number; intervals: number };

/** Every table a write changes, each in a fixed order. */
async function tables(t: TestIndex): Promise<Record<string, Row[]>> {
  const rowid = t.backend === 'sqlite' ? 'rowid AS rowid_, ' : '';
  const contents: Record<string, Row[]> = {
    workloads: await t.sql(`SELECT ${rowid}* FROM workloads ORDER BY workload_id`),
    workload_pods: await t.sql(`SELECT ${rowid}* FROM workload_pods ORDER BY pod_uid`),
  };
  if (t.backend === 'postgres') {
    contents.workload_keys = await t.sql('SELECT * FROM workload_keys ORDER BY workload_id');
    contents.pod_keys = await t.sql('SELECT * FROM pod_keys ORDER BY pod_uid');
  }
  for (const { table, keys } of ROLLUPS) contents[table] = await t.sql(`SELECT * FROM ${table} ORDER BY ${keys.join(', ')}`);
  return contents;
}

/** A flush step of the property below, and sometimes a closing of open intervals after it. */
interface Batch {
  records: WorkloadRecord[];
  intervals: PodGpuInterval[];
  closing: { ids: string[]; at: number } | null;
}

const batch: fc.Arbitrary<Batch> = fc.record({
  records: fc.array(record, { maxLength: 6 }),
  intervals: fc.array(interval, { maxLength: 8 }),
  closing: fc.option(fc.record({ ids: fc.subarray(WORKLOAD_IDS, { minLength: 1 }), at: time }), { freq: 4 }),
});

describe('store/writeWorkloads: rows with their pods in one transaction', function () {
  this.timeout(600_000);
  const clock = new FixedClock(T0);
  /** Written by upsertWorkloads then upsertPodIntervals, and by writeWorkloads. */
  let apart: TestIndex;
  let together: TestIndex;
  let twoCalls: ClusterWriter;
  let oneCall: ClusterWriter;

  const open = async () => {
    clock.set(T0);
    apart = await openTestIndex({ clock });
    together = await openTestIndex({ clock });
    twoCalls = await apart.writer('local');
    oneCall = await together.writer('local');
    if (oneCall.writeWorkloads === undefined) throw new Error(`The ${TEST_BACKEND} writer has no writeWorkloads`);
  };
  const close = async () => {
    await apart?.close();
    await together?.close();
  };
  beforeEach(open);
  afterEach(close);

  /** One flush step both ways, a ms after the last; returns what each reported. */
  const step = async (records: readonly WorkloadRecord[], intervals: readonly PodGpuInterval[]): Promise<[Written, Written]> => {
    clock.advance(1);
    const rows = await twoCalls.upsertWorkloads(records);
    const written = { rows, intervals: await twoCalls.upsertPodIntervals(intervals) };
    return [written, await (oneCall.writeWorkloads as NonNullable<ClusterWriter['writeWorkloads']>)(records, intervals)];
  };

  it('leaves the tables that upsertWorkloads then upsertPodIntervals leave, through a seeded history and its replay', async () => {
    const steps = history(13, 200);
    for (const pass of ['first', 'replay']) {
      for (const { workloads, pods } of batches(steps)) {
        const [expected, actual] = await step(workloads, pods);
        expect(actual, pass).to.deep.equal(expected);
      }
      expect(await tables(together), pass).to.deep.equal(await tables(apart));
    }
    expect((await tables(together)).workloads).to.have.length(200);
  });

  it('leaves the same tables after any batches: duplicates, moved pods, pods of unknown or finished workloads, closed intervals', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 10 }), async (generated) => {
        // Two fresh indexes per run, so that a counterexample shrinks to the writes that make it.
        await close();
        await open();
        for (const { records, intervals, closing } of generated) {
          const [expected, actual] = await step(records, intervals);
          expect(actual).to.deep.equal(expected);
          if (closing !== null) {
            expect(await oneCall.closeOpenIntervals(closing.ids, closing.at)).to.equal(await twoCalls.closeOpenIntervals(closing.ids, closing.at));
          }
        }
        expect(await tables(together)).to.deep.equal(await tables(apart));
      }),
      // Each run opens two fresh indexes (about 1.6 s on a 2-core machine of late 2026): 60 runs keep the
      // test near 100 s there, where 150 took 246 s of its suite's time.
      { numRuns: TEST_BACKEND === 'sqlite' ? 60 : 12, seed: Number(process.env.FC_SEED ?? 20261201) },
    );
  });

  it('writes a new workload with its pods as one insert, and a finished one with its closed pods as one update', async () => {
    await countRowWrites(apart);
    await countRowWrites(together);
    const running = aWorkload({ status: 'running', completedAt: null, exitCode: null, resourceVersion: '1' });
    const pods = [aPodInterval(running), aPodInterval(running, { podUid: `${running.workloadId}-pod-1`, gpus: 2 })];
    await step([running], pods);
    const end = Date.parse('2026-11-10T12:00:00Z');
    const done = { ...running, status: 'completed' as const, completedAt: end, exitCode: 0, resourceVersion: '2' };
    await step([done], pods.map((p) => ({ ...p, finishedAt: end })));
    expect(await rowWrites(together)).to.deep.equal(['insert', 'update']);
    expect(await rowWrites(apart), 'the record, then its aggregates').to.deep.equal(['insert', 'update', 'update', 'update']);
    expect(await tables(together)).to.deep.include({ workloads: (await tables(apart)).workloads });
  });

  it('writes nothing when a row of the call is invalid, not even the pods written before it', async () => {
    const good = aWorkload();
    const bad = aWorkload({ gpuCount: 1.5 });
    const write = oneCall.writeWorkloads as NonNullable<ClusterWriter['writeWorkloads']>;
    await rejectionOf(write([good, bad], [aPodInterval(good)]));
    expect(await together.countRows()).to.equal(0);
    expect(await together.sql('SELECT pod_uid FROM workload_pods')).to.deep.equal([]);
  });

  it('skips the intervals of workloads it does not have, and writes those of the rows it brings', async () => {
    const known = aWorkload();
    const unknown = aWorkload();
    const [expected, actual] = await step([known], [aPodInterval(unknown), aPodInterval(known)]);
    expect(actual).to.deep.equal({ rows: 1, intervals: 1 }).and.deep.equal(expected);
    expect(await together.sql('SELECT workload_id FROM workload_pods')).to.deep.equal([{ workload_id: known.workloadId }]);
  });
});

/** Records each insert and update of a workloads row in table row_writes, in order. */
async function countRowWrites(t: TestIndex): Promise<void> {
  if (t.backend === 'sqlite') {
    // t.sql runs statements that return rows; this DDL goes through a connection of its own.
    const [main] = await t.sql("SELECT file FROM pragma_database_list WHERE name = 'main'");
    const db = new BetterSqlite3(String(main?.file));
    try {
      db.exec(`CREATE TABLE row_writes (n INTEGER PRIMARY KEY, kind TEXT);
        CREATE TRIGGER row_writes_insert AFTER INSERT ON workloads BEGIN INSERT INTO row_writes (kind) VALUES ('insert'); END;
        CREATE TRIGGER row_writes_update AFTER UPDATE ON workloads BEGIN INSERT INTO row_writes (kind) VALUES ('update'); END;`);
    } finally {
      db.close();
    }
    return;
  }
  await t.sql('CREATE TABLE row_writes (n serial PRIMARY KEY, kind text)');
  await t.sql("CREATE FUNCTION count_row_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO row_writes (kind) VALUES (lower(TG_OP)); RETURN NULL; END $$");
  await t.sql('CREATE TRIGGER row_writes AFTER INSERT OR UPDATE ON workloads FOR EACH ROW EXECUTE FUNCTION count_row_write()');
}

async function rowWrites(t: TestIndex): Promise<string[]> {
  return (await t.sql('SELECT kind FROM row_writes ORDER BY n')).map((row) => String(row.kind));
}
