/** The only leg that may leave tests pending: the SQLite-only ones. */
export const POSTGRES_LEG: 'postgres';

/** A pending test as the pending reporter (scripts/ci/pending-reporter.mjs) and the enumeration name it. */
export interface NamedTest {
  title: string[];
  file: string | null;
}

/** mocha's closing counts in a log, or null for a log without a mocha summary. */
export function mochaCounts(log: string): { passing: number; failing: number; pending: number } | null;

/** The verdict on one leg's pending tests against what it may leave pending. */
export function checkLeg(input: {
  leg: string;
  log: string;
  report: { pending: (NamedTest & { sqliteOnly: string | null })[] } | null;
  declared: NamedTest[] | null;
}): { ok: boolean; lines: string[] };
