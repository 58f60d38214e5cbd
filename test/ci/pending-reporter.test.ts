// The pending reporter (scripts/ci/pending-reporter.mjs) in a real mocha run of a fixture suite, on
// each backend: it keeps the spec reporter's output, names every pending test with its file, tells
// the ones sqliteOnly marked (test/support/backend.ts) from the others, and pending-check.mjs then
// fails the leg on the unmarked ones.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { checkLeg } from '../../scripts/ci/pending-check.mjs';
import { makeTempDir } from '../support/temp-dir.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = 'test/fixtures/pending/sqlite-only-suite.ts';
const run = promisify(execFile);

interface Pending {
  title: string[];
  file: string | null;
  sqliteOnly: string | null;
}

/** mocha with the reporter over the fixture on `backend`: its output and the report. */
async function reportOn(backend: 'sqlite' | 'postgres'): Promise<{ log: string; pending: Pending[] }> {
  const dir = makeTempDir('gpucap-pending-reporter-');
  try {
    const report = join(dir.path, 'pending.json');
    const { stdout } = await run(process.execPath, [
      join(REPO, 'node_modules/mocha/bin/mocha.js'), '--no-config', '--import=tsx', '--no-color', '--reporter', join(REPO, 'scripts/ci/pending-reporter.mjs'), FIXTURE,
    ], {
      cwd: REPO,
      // --no-color: under CI=true mocha colours even a pipe, and the assertions read the plain text.
      // The fixture asks for no database: PostgreSQL's switch only needs PG_BIN named to load.
      env: { ...process.env, GPUCAP_TEST_BACKEND: backend, PG_BIN: backend === 'postgres' ? '/nonexistent/pg/bin' : '', GPUCAP_PENDING_REPORT: report },
    });
    return { log: stdout, pending: (JSON.parse(readFileSync(report, 'utf8')) as { pending: Pending[] }).pending };
  } finally {
    dir.remove();
  }
}

const lastTitles = (pending: Pending[]) => pending.map((test) => test.title.at(-1));

describe('scripts/ci/pending-reporter.mjs', function () {
  this.timeout(60_000);

  it('on PostgreSQL names the sqliteOnly tests with their reason, and the others without one', async () => {
    const { log, pending } = await reportOn('postgres');
    expect(log, 'the spec reporter\'s output').to.match(/✔ runs/).and.match(/ 1 passing/).and.match(/ 5 pending/);
    // mocha runs a suite's own tests before those of the suites in it.
    expect(pending.map((test) => [test.title.at(-1), test.sqliteOnly])).to.deep.equal([
      ['index checkpointer (SQLite only: SQLite\'s write-ahead log; PostgreSQL checkpoints on its own)', 'SQLite\'s write-ahead log; PostgreSQL checkpoints on its own'],
      ['left pending without a mark', null],
      ['skips itself as it runs', null],
      ['made in a loop 1', 'the write worker thread is SQLite\'s; PostgreSQL writes over its connection'],
      ['made in a loop 2', 'the write worker thread is SQLite\'s; PostgreSQL writes over its connection'],
    ]);
    expect(new Set(pending.map((test) => test.file))).to.deep.equal(new Set([FIXTURE]));

    const declared = pending.filter((test) => test.sqliteOnly !== null);
    const verdict = checkLeg({ leg: 'postgres', log, report: { pending }, declared });
    expect(verdict.ok).to.equal(false);
    expect(verdict.lines).to.deep.equal([
      'postgres leg: 5 tests pending, expected 3 (the SQLite-only tests: sqliteOnly in test/support/backend.ts)',
      `  pending but not declared: fixture › left pending without a mark (${FIXTURE})`,
      `  pending but not declared: fixture › skips itself as it runs (${FIXTURE})`,
    ]);
  });

  it('on SQLite runs the sqliteOnly tests, so that only the unmarked ones are pending, and the leg fails on them', async () => {
    const { log, pending } = await reportOn('sqlite');
    expect(log).to.match(/ 4 passing/).and.match(/ 2 pending/);
    expect(lastTitles(pending)).to.deep.equal(['left pending without a mark', 'skips itself as it runs']);
    expect(checkLeg({ leg: 'unit', log, report: { pending }, declared: [] }).ok).to.equal(false);
  });
});
