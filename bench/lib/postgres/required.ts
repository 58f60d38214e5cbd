// The rule of the PostgreSQL tests (test/support/postgres.ts), for a benchmark that needs a real
// PostgreSQL: with PG_BIN it runs; in CI without it, it fails (CI must run it); on a developer machine
// without it, it is skipped with the command that installs PostgreSQL, and the other benchmarks run.
import { POSTGRES_INSTALL_HINT } from '../../../test/support/postgres.js';
import { writeResults, type Environment } from '../report/environment.js';
import type { BenchOutcome } from '../report/outcome.js';

/** Null when PG_BIN is set. Otherwise throws under CI, or writes the skipped results file and returns its outcome. */
export function skippedWithoutPostgres(name: string, run: { quick: boolean; environment: Environment; log: (line: string) => void }): BenchOutcome | null {
  if ((process.env.PG_BIN ?? '') !== '') return null;
  if (process.env.CI) throw new Error(`The ${name} benchmark needs PostgreSQL, and CI must run it: ${POSTGRES_INSTALL_HINT}`);
  run.log(`${name}: skipped: it needs a real PostgreSQL; run \`${POSTGRES_INSTALL_HINT}\` first`);
  const resultsFile = writeResults(`${name}${run.quick ? '.quick' : ''}`, { bench: name, ...run.environment, parameters: { quick: run.quick, skipped: 'PG_BIN is not set' } });
  return { name, resultsFile, requestErrors: 0, table: { header: ['skipped'], rows: [] }, notes: [`skipped: PG_BIN is not set (${POSTGRES_INSTALL_HINT})`] };
}
