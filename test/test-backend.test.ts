// The suite's backend switch (test/support/backend.ts): GPUCAP_TEST_BACKEND really moves the test
// services and test indexes to that backend, and the tests left out on PostgreSQL are exactly the
// pinned SQLITE_ONLY list, each with its reason, so that the list cannot grow unnoticed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parseMetrics } from '../bench/lib/service/metrics-text.js';
import { systemClock } from '../src/domain/clock.js';
import { SQLITE_ONLY, TEST_BACKEND } from './support/backend.js';
import { startTestService } from './support/service-harness.js';
import { openTestIndex } from './support/test-index.js';

const TEST_DIR = fileURLToPath(new URL('.', import.meta.url));
/** Raise only together with an entry of SQLITE_ONLY that says why the test cannot run on PostgreSQL. */
const PINNED_COUNT = 17;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The title of every sqliteOnly it or describe in the test files, with the files that use it. */
function sqliteOnlyUses(): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const call = /sqliteOnly\.(?:it|describe)\(\s*(?:'((?:[^'\\]|\\.)*)'|(\S))/g;
  for (const file of testFiles(TEST_DIR)) {
    for (const match of readFileSync(file, 'utf8').matchAll(call)) {
      const where = relative(TEST_DIR, file);
      // Only a plain string literal can be matched against the list.
      if (match[1] === undefined) throw new Error(`Cannot read the title of a sqliteOnly test in test/${where}: give it as a '…' string`);
      const title = match[1].replace(/\\(.)/g, '$1');
      uses.set(title, [...(uses.get(title) ?? []), where]);
    }
  }
  return uses;
}

describe('the test backend', () => {
  it('marks sqliteOnly exactly the tests of the pinned list, each once and with a reason', () => {
    const uses = sqliteOnlyUses();
    expect([...uses.keys()].sort()).to.deep.equal(Object.keys(SQLITE_ONLY).sort());
    for (const [title, files] of uses) expect(files, `sqliteOnly "${title}"`).to.have.length(1);
    for (const [title, reason] of Object.entries(SQLITE_ONLY)) expect(reason.trim(), `the reason of "${title}"`).to.not.equal('');
    expect(Object.keys(SQLITE_ONLY), 'a new sqliteOnly test: say why in SQLITE_ONLY and raise PINNED_COUNT').to.have.length(PINNED_COUNT);
  });

  it(`runs a test service on ${TEST_BACKEND}`, async () => {
    const t = await startTestService();
    try {
      const metrics = parseMetrics(await (await fetch(`${t.adminUrl}/metrics`)).text());
      // Only PostgreSQL has a connection pool to report.
      expect(metrics.some((series) => series.name === 'gpucap_db_pool_total')).to.equal(TEST_BACKEND === 'postgres');
    } finally {
      await t.stop();
    }
  });

  it(`opens a test index on ${TEST_BACKEND}`, async () => {
    const t = await openTestIndex({ clock: systemClock });
    try {
      const [row] = await t.sql(TEST_BACKEND === 'postgres' ? 'SELECT version() AS v' : 'SELECT sqlite_version() AS v');
      expect(String(row?.v)).to.match(TEST_BACKEND === 'postgres' ? /^PostgreSQL / : /^3\./);
    } finally {
      await t.close();
    }
  });
});
