// CI's check of each leg's pending tests (scripts/ci/pending-check.mjs) on logs shaped like mocha's:
// the PostgreSQL leg passes with exactly its SQLite-only tests pending and fails with one more or one
// fewer, any other leg fails with a single pending test, and each failure names the leg, the counts
// and the tests.
import { expect } from 'chai';
import { checkLeg, mochaCounts } from '../../scripts/ci/pending-check.mjs';

const declared = [
  { title: ['read pool (SQLite only: read worker threads are SQLite\'s)', 'answers the same'], file: 'test/store/sqlite/threads/read-pool.test.ts' },
  { title: ['store/database (SQLite only: the SQLite file itself)', 'opens read-only'], file: 'test/store/sqlite/database.test.ts' },
];
const marked = declared.map((test) => ({ ...test, sqliteOnly: 'a reason' }));
const stray = { title: ['chart', 'renders with helm'], file: 'test/chart/chart.test.ts', sqliteOnly: null };

/** The end of a spec reporter's run, colours included, with console output before it. */
function specLog(counts: { passing: number; failing?: number; pending?: number }): string {
  const lines = ['  store', '    \u001b[32m  ✔\u001b[0m\u001b[90m writes\u001b[0m', '      skipped: these tests need helm', '', `\u001b[92m \u001b[0m\u001b[32m ${counts.passing} passing\u001b[0m\u001b[90m (3m)\u001b[0m`];
  if (counts.pending !== undefined) lines.push(`\u001b[36m  ${counts.pending} pending\u001b[0m`);
  if (counts.failing !== undefined) lines.push(`\u001b[31m  ${counts.failing} failing\u001b[0m`);
  return `${lines.join('\n')}\n`;
}

describe('scripts/ci/pending-check.mjs', () => {
  it('reads mocha\'s closing counts as .ci/run does, the last of each, 0 pending when mocha prints none', () => {
    expect(mochaCounts(`  3 passing (1s)\n  1 pending\n${specLog({ passing: 40, pending: 2, failing: 1 })}`)).to.deep.equal({ passing: 40, failing: 1, pending: 2 });
    expect(mochaCounts(specLog({ passing: 7 }))).to.deep.equal({ passing: 7, failing: 0, pending: 0 });
    expect(mochaCounts('unit: 300 files, e2e: 40 files\n'), 'not mocha').to.equal(null);
  });

  it('passes the PostgreSQL leg with exactly the declared SQLite-only tests pending', () => {
    expect(checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 2 }), report: { pending: marked }, declared })).to.deep.equal({ ok: true, lines: ['postgres: pending 2, as declared'] });
    expect(checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 2 }), report: null, declared })).to.deep.equal({ ok: true, lines: ['postgres: pending 2, as declared (by count: no pending report)'] });
  });

  it('fails the PostgreSQL leg with one pending test more than declared, naming it', () => {
    const verdict = checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 3 }), report: { pending: [...marked, stray] }, declared });
    expect(verdict).to.deep.equal({
      ok: false,
      lines: [
        'postgres leg: 3 tests pending, expected 2 (the SQLite-only tests: sqliteOnly in test/support/backend.ts)',
        '  pending but not declared: chart › renders with helm (test/chart/chart.test.ts)',
      ],
    });
    // Without the reporter's names, the count alone fails it.
    expect(checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 3 }), report: null, declared }).lines).to.deep.equal([
      'postgres leg: 3 tests pending, expected 2 (the SQLite-only tests: sqliteOnly in test/support/backend.ts)',
    ]);
  });

  it('fails the PostgreSQL leg when as many tests are pending but not the declared ones, or fewer', () => {
    const swapped = checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 2 }), report: { pending: [marked[0], stray] }, declared });
    expect(swapped.ok).to.equal(false);
    expect(swapped.lines).to.deep.equal([
      'postgres leg: 2 tests pending, expected 2 (the SQLite-only tests: sqliteOnly in test/support/backend.ts)',
      '  pending but not declared: chart › renders with helm (test/chart/chart.test.ts)',
      `  declared but not pending: store/database (SQLite only: the SQLite file itself) › opens read-only (test/store/sqlite/database.test.ts)`,
    ]);
    expect(checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 1 }), report: null, declared }).ok).to.equal(false);
  });

  it('fails any other leg with a single pending test, whatever it is', () => {
    const verdict = checkLeg({ leg: 'unit', log: specLog({ passing: 1400, pending: 1 }), report: { pending: [stray] }, declared });
    expect(verdict).to.deep.equal({
      ok: false,
      lines: [
        'unit leg: 1 tests pending, expected 0 (none: only the postgres leg may leave tests pending, the SQLite-only ones)',
        '  pending but not declared: chart › renders with helm (test/chart/chart.test.ts)',
      ],
    });
    // A SQLite-only test pending on SQLite was not run where it should have been.
    expect(checkLeg({ leg: 'e2e', log: specLog({ passing: 300, pending: 1 }), report: { pending: [marked[0]] }, declared }).ok).to.equal(false);
    expect(checkLeg({ leg: 'image', log: specLog({ passing: 9, pending: 1 }), report: null, declared }).ok, 'a leg without a report, by its count').to.equal(false);
    expect(checkLeg({ leg: 'unit', log: specLog({ passing: 1400 }), report: { pending: [] }, declared }).ok).to.equal(true);
  });

  it('fails when the reporter and mocha\'s summary disagree, or when the SQLite-only tests were not enumerated', () => {
    const disagree = checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 2 }), report: { pending: [marked[0]] }, declared });
    expect(disagree.ok).to.equal(false);
    expect(disagree.lines).to.include('  the pending reporter named 1 tests, mocha\'s summary says 2');
    expect(checkLeg({ leg: 'postgres', log: specLog({ passing: 700, pending: 2 }), report: { pending: marked }, declared: null })).to.deep.equal({
      ok: false,
      lines: ['postgres leg: 2 tests pending, but the SQLite-only tests it may leave pending were not enumerated (scripts/ci/sqlite-only-tests.mjs failed or did not run)'],
    });
  });

  it('leaves alone the suites that are not mocha, or stopped before its summary', () => {
    expect(checkLeg({ leg: 'typecheck', log: '> tsc -p tsconfig.json --noEmit\n', report: null, declared: null })).to.deep.equal({ ok: true, lines: ['typecheck: no mocha summary, nothing to check'] });
  });
});
