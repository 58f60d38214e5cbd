// A private PostgreSQL server on loopback for the tests that need a real database, through
// scripts/postgres/start.sh and stop.sh. One per test file: start it in before(), stop it in after().
// Whatever happens, the server does not outlive the test run (stop() in after(), and an immediate
// shutdown on process exit).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cleanUpOnExit, forgetCleanup, readEnvFile, signal } from './exit-cleanup.js';
import { makeTempDir } from './temp-dir.js';

const run = promisify(execFile);
const POSTGRES_SCRIPTS = fileURLToPath(new URL('../../scripts/postgres/', import.meta.url));
/** What a developer runs once (installs Debian's postgresql package when missing); .ci/run does it in CI. */
export const POSTGRES_INSTALL_HINT = 'export PG_BIN=$(bash scripts/postgres/install.sh)';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:PORT/gpucap, the same across restarts. */
  url: string;
  /** Stops the server, keeping its data and port: `immediate` as a crash would. */
  stopServer(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port with the same data. */
  startServer(): Promise<void>;
  /** Stops it and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * The rule for suites that need a real PostgreSQL: run when PG_BIN is set; in CI without it, fail
 * (these tests must run there); on a developer machine without it, skip with a hint.
 */
export async function startPostgresOrSkip(context: Mocha.Context): Promise<PostgresServer> {
  const bin = process.env.PG_BIN;
  if (bin === undefined || bin === '') {
    if (process.env.CI) throw new Error(`Cannot run the PostgreSQL tests: PG_BIN is not set, and CI must run them (${POSTGRES_INSTALL_HINT})`);
    console.log(`      skipped: these tests need a real PostgreSQL; run \`${POSTGRES_INSTALL_HINT}\` first`);
    context.skip();
  }
  for (const name of ['initdb', 'pg_ctl', 'postgres']) {
    if (!existsSync(join(bin, name))) throw new Error(`Cannot start PostgreSQL: PG_BIN="${bin}" has no ${name} (${POSTGRES_INSTALL_HINT})`);
  }
  return startPostgres();
}

export async function startPostgres(): Promise<PostgresServer> {
  const temp = makeTempDir('gpucap-postgres-');
  const dir = temp.path;
  cleanUpOnExit(dir, () => {
    // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster takes its backends down with it.
    signal(postmasterPid(dir), 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  });
  const script = async (name: string, ...args: string[]): Promise<void> => {
    try {
      await run('bash', [join(POSTGRES_SCRIPTS, name), dir, ...args], { timeout: 90_000 });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim();
      throw new Error(`scripts/postgres/${name} failed in "${dir}": ${stderr || (error as Error).message}`, { cause: error });
    }
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await script('stop.sh', 'immediate').catch(() => signal(postmasterPid(dir), 'SIGQUIT'));
    forgetCleanup(dir);
    temp.remove();
  };
  try {
    await script('start.sh');
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: readEnvFile(dir).PG_URL ?? '',
    stopServer: (mode = 'fast') => script('stop.sh', mode),
    startServer: () => script('start.sh'),
    stop,
  };
}

/** The first line of data/postmaster.pid, while the server runs. */
function postmasterPid(dir: string): string | undefined {
  const file = join(dir, 'data', 'postmaster.pid');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n')[0] : undefined;
}
