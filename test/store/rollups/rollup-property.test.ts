// The rollups kept per batch by the writer against a recomputation from scratch, and their answers
// (GPU-ms, durations, queue times, counts per day and group) against an oracle worked out in the test
// from the raw rows (rollup-oracle.ts), after random sequences of every write the store has
// (write-commands.ts), on the test backend. FC_SEED=<n> replays a run.
import { expect } from 'chai';
import fc from 'fast-check';
import { TEST_BACKEND } from '../../support/backend.js';
import { ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { openPropertyIndex, type PropertyIndex } from '../property-index.js';
import { expectedAnswers, ORACLE_TABLES, storedAnswers } from '../rollup-oracle.js';
import { DAY_MS, T0 } from '../rollup-history.js';
import type { UsageState } from '../usage-contents.js';
import { HOUR_MS } from '../temp-store.js';
import { apply, command, intervalsOf } from '../write-commands.js';

const SEED = Number(process.env.FC_SEED ?? 20261128);
// A run on PostgreSQL copies a database and takes a write lock, and each write is a few round
// trips: 50 runs take about as long as SQLite's 200.
const RUNS = TEST_BACKEND === 'sqlite' ? 200 : 50;

/** Usage is summed where its workload's row is, and gpu_error is given wherever an XID error makes it due. */
function expectUsageKept(state: UsageState, when: string): void {
  expect(state.rollup, `usage rollups ${when}`).to.deep.equal(state.recomputed);
  expect(state.misplaced, `usage at keys its row does not have, ${when}`).to.deep.equal([]);
  expect(state.gpuErrorMissing, `failed rows without their gpu_error, ${when}`).to.deep.equal([]);
}

/**
 * Two times of reading: the answers are linear in t while a workload runs or waits, so agreeing at
 * two times is agreeing on what the rows hold and on how they grow. One among the times the commands
 * write (T0 − 3 days to T0 + 1 day: pods that start after it read negative), one after them all.
 */
const READ_AT = [T0 + HOUR_MS, T0 + 3 * DAY_MS + 7];

/** The same figures, to the ms (0 and −0 alike: a stored 0 GPUs × a negative time is −0 in doubles). */
function sameFigures(a: Record<string, number> | undefined, b: Record<string, number> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}

/** The rollups' answers at each time of reading equal those worked out from the raw rows; a failure shows the keys that differ. */
async function expectAnswersOfRawRows(index: PropertyIndex, when: string): Promise<void> {
  const [stored, raw] = [await index.rollups(), await index.raw()];
  for (const t of READ_AT) {
    const [answers, expected] = [storedAnswers(stored, t), expectedAnswers(raw, t)];
    const differ = Object.keys(expected).flatMap((table) =>
      [...new Set([...Object.keys(answers[table] ?? {}), ...Object.keys(expected[table] ?? {})])]
        .filter((key) => !sameFigures(answers[table]?.[key], expected[table]?.[key]))
        .map((key) => ({ table, key, rollup: answers[table]?.[key] ?? null, rawRows: expected[table]?.[key] ?? null })));
    expect(differ, `rollup answers at ${new Date(t).toISOString()} ${when} that differ from the raw rows': ${JSON.stringify(differ.slice(0, 3))}`).to.deep.equal([]);
  }
}

describe('store/rollups property: kept per batch, equal to a recomputation from the rows', function () {
  this.timeout(300_000);

  it('has an oracle for every rollup table', () => {
    expect([...ORACLE_TABLES].sort()).to.deep.equal(ROLLUPS.map((r) => r.table).sort());
  });

  it('after any sequence of upserts, pod intervals, rows with their intervals, closeOpenIntervals, retention deletes and usage saves, every rollup table equals a GROUP BY over the rows and answers what the raw rows work out to', async function () {
    const seen = { moves: 0, deletes: 0, closes: 0, writes: 0, usage: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), async (commands) => {
        const index = await openPropertyIndex(this, { now: () => T0 + HOUR_MS });
        try {
          for (const [i, c] of commands.entries()) {
            const owners: (string | undefined)[] = [];
            for (const p of intervalsOf(c)) owners.push(await index.podOwner(p.podUid));
            const done = await apply(index.target, c);
            for (const [k, p] of intervalsOf(c).entries()) {
              if (owners[k] !== undefined && owners[k] !== p.workloadId && (await index.podOwner(p.podUid)) === p.workloadId) seen.moves += 1;
            }
            if (c.kind === 'retention') seen.deletes += done;
            if (c.kind === 'close') seen.closes += done;
            if (c.kind === 'write') seen.writes += done;
            if (c.kind === 'usage') seen.usage += done;
            // Midway too, so that a wrong delta cannot be hidden by a later one that cancels it.
            if (i === Math.floor(commands.length / 2)) {
              expect(await index.rollups(), `after command ${i}`).to.deep.equal(await index.recomputed());
              expectUsageKept(await index.usage(), `after command ${i}`);
              await expectAnswersOfRawRows(index, `after command ${i}`);
            }
          }
          expect(await index.rollups()).to.deep.equal(await index.recomputed());
          expectUsageKept(await index.usage(), 'at the end');
          await expectAnswersOfRawRows(index, 'at the end');
        } finally {
          await index.close();
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Every kind of change was exercised, not only the easy ones.
    expect(Math.min(seen.moves, seen.deletes, seen.closes, seen.writes, seen.usage), JSON.stringify(seen)).to.be.greaterThan(10);
  });
});
