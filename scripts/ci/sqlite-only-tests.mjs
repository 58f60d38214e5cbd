// The tests the PostgreSQL leg may leave pending: those test/support/backend.ts's sqliteOnly marks,
// enumerated by loading the leg's files as the leg does (GPUCAP_TEST_BACKEND=postgres, mocha
// --dry-run: nothing runs, no server starts) and keeping the pending tests under a mark. Counting
// the tests a marked suite holds by reading the sources would miss those made in loops.
//   node scripts/ci/sqlite-only-tests.mjs --out FILE   # { tests: [{ title, file, reason }] }; needs PG_BIN
// An unmarked pending test of the dry run (an it.skip, a describe.skip) is not declared:
// scripts/ci/pending-check.mjs then fails the leg on it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function fail(message) {
  process.stderr.write(`Cannot enumerate the SQLite-only tests: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
const out = args[0] === '--out' ? args[1] : undefined;
if (out === undefined || args.length !== 2) {
  process.stderr.write('usage: node scripts/ci/sqlite-only-tests.mjs --out FILE\n');
  process.exit(2);
}
if ((process.env.PG_BIN ?? '') === '') fail('PG_BIN is not set, and the PostgreSQL leg\'s files load only with it (bash scripts/postgres/install.sh)');

const work = mkdtempSync(join(tmpdir(), 'gpucap-sqlite-only-'));
try {
  const report = join(work, 'pending.json');
  const run = spawnSync(process.execPath, [join(REPO, 'node_modules/mocha/bin/mocha.js'), '--config', '.mocharc.postgres.mjs', '--dry-run'], {
    cwd: REPO,
    env: { ...process.env, GPUCAP_TEST_BACKEND: 'postgres', GPUCAP_PENDING_REPORT: report },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  // Its spec output lists every test of the leg: only shown when the dry run failed.
  if (run.status !== 0) fail(`the dry run of the PostgreSQL leg exited ${run.status ?? run.signal}:\n${run.stdout}\n${run.stderr}`);
  const { pending } = JSON.parse(readFileSync(report, 'utf8'));
  const tests = pending.filter((test) => test.sqliteOnly !== null).map(({ title, file, sqliteOnly }) => ({ title, file, reason: sqliteOnly }));
  writeFileSync(out, `${JSON.stringify({ tests }, null, 1)}\n`);
  const unmarked = pending.length - tests.length;
  process.stdout.write(`the PostgreSQL leg may leave ${tests.length} tests pending, those sqliteOnly marks (test/support/backend.ts)` +
    `${unmarked === 0 ? '' : `; ${unmarked} more are skipped without a mark, which fails that leg`}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
