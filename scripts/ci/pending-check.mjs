// Whether each leg of CI left pending exactly the tests it may: on the PostgreSQL leg the SQLite-only
// ones (test/support/backend.ts, enumerated before the run by scripts/ci/sqlite-only-tests.mjs), on
// every other leg none. A pending test is one CI did not run while reporting it green: a suite that
// skips itself (a missing tool, this.skip()), an it.skip left behind, a describe.skip that grew.
// The count comes from mocha's closing "N pending" line; the names, where the leg ran with
// scripts/ci/pending-reporter.mjs, from its report.
//   node scripts/ci/pending-check.mjs --logs DIR --declared FILE LEG...
// reads DIR/LEG.log and DIR/LEG.pending.json for each LEG; exits 1 if any leg is off.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** The only leg that may leave tests pending: the SQLite-only ones. */
export const POSTGRES_LEG = 'postgres';

/** The colours of mocha's output (ESC [ … m), as .ci/run's count() strips them. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * mocha's closing counts in a log: the number on its last "N passing" / "N failing" / "N pending"
 * line (as .ci/run's count() reads them), or null for a log with neither passing nor failing (not
 * mocha, or mocha that stopped before its summary). A summary without a pending line means 0.
 */
export function mochaCounts(log) {
  const counts = {};
  for (const line of log.replace(ANSI, '').split('\n')) {
    const match = /^\s*(\d+) (passing|failing|pending)(?:\s|$)/.exec(line);
    if (match !== null) counts[match[2]] = Number(match[1]);
  }
  if (counts.passing === undefined && counts.failing === undefined) return null;
  return { passing: counts.passing ?? 0, failing: counts.failing ?? 0, pending: counts.pending ?? 0 };
}

/** A test as a line of a message, and as a key to compare by. */
const nameOf = (test) => `${test.title.join(' › ')}${test.file === null || test.file === undefined ? '' : ` (${test.file})`}`;

/**
 * The verdict on one leg: `log` its output, `report` the pending reporter's JSON ({ pending: [...] })
 * or null, `declared` the SQLite-only tests ([{ title, file }]) or null when they could not be
 * enumerated. Returns ok and the lines to print.
 */
export function checkLeg({ leg, log, report, declared }) {
  const counts = mochaCounts(log);
  if (counts === null) return { ok: true, lines: [`${leg}: no mocha summary, nothing to check`] };
  const isPostgres = leg === POSTGRES_LEG;
  if (isPostgres && declared === null) {
    return {
      ok: false,
      lines: [`${leg} leg: ${counts.pending} tests pending, but the SQLite-only tests it may leave pending were not enumerated (scripts/ci/sqlite-only-tests.mjs failed or did not run)`],
    };
  }
  const expected = isPostgres ? declared : [];
  const details = [];
  if (report !== null) {
    const seen = report.pending.map(nameOf);
    const allowed = new Set(expected.map(nameOf));
    const seenSet = new Set(seen);
    if (seen.length !== counts.pending) details.push(`  the pending reporter named ${seen.length} tests, mocha's summary says ${counts.pending}`);
    for (const name of seen.filter((n) => !allowed.has(n))) details.push(`  pending but not declared: ${name}`);
    for (const name of [...allowed].filter((n) => !seenSet.has(n))) details.push(`  declared but not pending: ${name}`);
  }
  if (counts.pending === expected.length && details.length === 0) {
    return { ok: true, lines: [`${leg}: pending ${counts.pending}, as declared${report === null ? ' (by count: no pending report)' : ''}`] };
  }
  const what = isPostgres
    ? 'the SQLite-only tests: sqliteOnly in test/support/backend.ts'
    : `none: only the ${POSTGRES_LEG} leg may leave tests pending, the SQLite-only ones`;
  return { ok: false, lines: [`${leg} leg: ${counts.pending} tests pending, expected ${expected.length} (${what})`, ...details] };
}

function readJson(path) {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const at = args.indexOf(name);
    if (at < 0 || at + 1 >= args.length) {
      process.stderr.write('usage: node scripts/ci/pending-check.mjs --logs DIR --declared FILE LEG...\n');
      process.exit(2);
    }
    return args.splice(at, 2)[1];
  };
  const logs = option('--logs');
  const declaredFile = readJson(option('--declared'));
  let ok = true;
  for (const leg of args) {
    const logPath = join(logs, `${leg}.log`);
    const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
    const verdict = checkLeg({ leg, log, report: readJson(join(logs, `${leg}.pending.json`)), declared: declaredFile?.tests ?? null });
    process.stdout.write(`${verdict.lines.join('\n')}\n`);
    ok &&= verdict.ok;
  }
  process.exit(ok ? 0 : 1);
}
