// mocha's spec reporter, plus the tests it reported pending, named, in a JSON file: what
// scripts/ci/pending-check.mjs holds against the tests each leg may leave pending. Used when
// GPUCAP_PENDING_REPORT names that file (scripts/test-legs.mjs, mochaConfig). mocha loads reporters
// with require(), which loads this module on Node 20.19 and later (no top-level await here).
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import process from 'node:process';
import Mocha from 'mocha';

const { EVENT_RUN_END, EVENT_TEST_PENDING } = Mocha.Runner.constants;

/** The reason test/support/backend.ts's sqliteOnly gave the test or a suite around it, or null. */
function sqliteOnlyReason(test) {
  for (let runnable = test; runnable; runnable = runnable.parent) {
    if (typeof runnable.sqliteOnlyReason === 'string') return runnable.sqliteOnlyReason;
  }
  return null;
}

export default class PendingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const out = process.env.GPUCAP_PENDING_REPORT;
    if (out === undefined || out === '') return;
    const pending = [];
    runner.on(EVENT_TEST_PENDING, (test) => {
      pending.push({ title: test.titlePath(), file: test.file === undefined ? null : relative(process.cwd(), test.file), sqliteOnly: sqliteOnlyReason(test) });
    });
    // Written at the end of the run, before --exit ends the process.
    runner.once(EVENT_RUN_END, () => writeFileSync(out, `${JSON.stringify({ pending }, null, 1)}\n`));
  }
}
