// `gpucap` (src/gpucap.ts) as the operator runs it: a child process, its exit codes and messages, and a
// migration end to end into a real PostgreSQL with a password in the URL that no line may show.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { MIGRATE_USAGE, runGpucap, USAGE } from '../../../src/cli/gpucap.js';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { history, write } from '../../store/rollup-history.js';
import { openTempStore, type TempStore } from '../../store/temp-store.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node --import tsx src/gpucap.ts ...args` from the repository root, `input` on its stdin. */
function gpucap(args: string[], input = ''): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/gpucap.ts', ...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The command in this process, its output captured, `input` as its stdin. */
async function inProcess(args: string[], input = ''): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (t: string) => (stdout += t), stderr: (t: string) => (stderr += t), cwd: repoRoot, clock: { now: () => Date.now() }, stdin: async () => input };
  const code = await runGpucap(args, io);
  return { code, stdout, stderr };
}

describe('gpucap command line', function () {
  this.timeout(60_000);

  it('prints the commands on --help and exits 0, as a child process', async () => {
    const outcome = await gpucap(['--help']);
    expect(outcome).to.deep.equal({ code: 0, stdout: USAGE, stderr: '' });
  });

  it('prints the options of migrate on migrate --help', async () => {
    const outcome = await gpucap(['migrate', '--help']);
    expect(outcome.code).to.equal(0);
    expect(outcome.stdout).to.equal(MIGRATE_USAGE);
  });

  it('exits 2 with the usage on an unknown command, as a child process', async () => {
    const outcome = await gpucap(['frobnicate']);
    expect(outcome.code).to.equal(2);
    expect(outcome.stdout).to.equal('');
    expect(outcome.stderr).to.equal(`Error: Unknown command "frobnicate" (the commands are: migrate)\n${USAGE}`);
  });

  it('exits 2 without a command', async () => {
    const outcome = await inProcess([]);
    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.equal(`Error: A command is required (migrate)\n${USAGE}`);
  });

  const existing = join(repoRoot, 'package.json');
  const badArguments: [string, string[], string, string?][] = [
    ['no --from', ['--to', 'postgres://h/db'], '--from is required: the SQLite index, as sqlite:PATH'],
    ['a --from without sqlite:', ['--from', existing, '--to', 'postgres://h/db'], `--from must be sqlite:PATH, got "${existing}"`],
    ['a --from of no file', ['--from', 'sqlite:no/such/index.db', '--to', 'postgres://h/db'], `--from names no file: "${join(repoRoot, 'no/such/index.db')}" does not exist`],
    ['no --to', ['--from', `sqlite:${existing}`], '--to is required: the PostgreSQL database, as postgres://USER:PASSWORD@HOST:PORT/DB, or - to read it from stdin'],
    ['--to - and nothing on stdin', ['--from', `sqlite:${existing}`, '--to', '-'], '--to - reads the URL from stdin, which was empty', ' \n'],
    ['--to - and another database on stdin', ['--from', `sqlite:${existing}`, '--to', '-'], '--to must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB), got "mysql://root:***@h/db"', 'mysql://root:hunter2@h/db\n'],
    ['a --to of another database, its password hidden', ['--from', `sqlite:${existing}`, '--to', 'mysql://root:hunter2@h/db'], '--to must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB), got "mysql://root:***@h/db"'],
    ['both --snapshot-dir and --no-snapshot', ['--from', `sqlite:${existing}`, '--to', 'postgres://h/db', '--snapshot-dir', '/tmp', '--no-snapshot'], '--snapshot-dir and --no-snapshot exclude each other'],
    ['--verify with --resume', ['--from', `sqlite:${existing}`, '--to', 'postgres://h/db', '--verify', '--resume'], '--resume applies to a migration, not to --verify'],
    ['--chunk-rows of 0', ['--from', `sqlite:${existing}`, '--to', 'postgres://h/db', '--chunk-rows', '0'], '--chunk-rows must be a whole number from 1 to 100000, got "0"'],
    ['a flag twice', ['--from', `sqlite:${existing}`, '--from', `sqlite:${existing}`], '--from is given twice'],
    ['an unknown flag', ['--from', `sqlite:${existing}`, '--dry-run'], 'Unknown flag "--dry-run" (see gpucap migrate --help)'],
    ['a value for a switch', ['--resume=yes'], '--resume takes no value'],
  ];
  for (const [name, args, message, input] of badArguments) {
    it(`migrate exits 2 on ${name}`, async () => {
      const outcome = await inProcess(['migrate', ...args], input);
      expect(outcome).to.deep.equal({ code: 2, stdout: '', stderr: `Error: ${message}\nRun gpucap migrate --help for usage.\n` });
    });
  }

  describe('against PostgreSQL', () => {
    let db: TestDatabase;
    let source: TempStore;
    let url: string;

    beforeEach(async function () {
      db = await freshDatabase(this);
      const withPassword = new URL(db.url);
      // The test server trusts loopback and never asks for it; the URL still carries it.
      withPassword.password = 'hunter2';
      url = withPassword.toString();
      source = openTempStore();
      await write(source.store, history(5, 150));
    });
    afterEach(async () => {
      source?.close();
      await db?.drop();
    });

    async function sql(text: string, params: unknown[] = []): Promise<unknown[]> {
      const client = new pg.Client({ connectionString: db.url, types: TYPES });
      await client.connect();
      try {
        return (await client.query(text, params)).rows;
      } finally {
        await client.end();
      }
    }

    it('migrates with the URL from stdin, prints the checks, exits 0, and never shows the password; --verify then exits 1 on a row changed by hand', async () => {
      // The URL on stdin, as kubectl exec -i passes it without a command line that shows it.
      const migrated = await gpucap(['migrate', '--from', `sqlite:${source.path}`, '--to', '-', '--chunk-rows', '50'], `${url}\n`);
      expect(migrated.code, migrated.stderr).to.equal(0);
      expect(migrated.stderr).to.contain(`gpucap migrate: sqlite:${source.path} to postgres://postgres:***@127.0.0.1:`);
      expect(migrated.stderr).to.match(/^workloads: 150 rows in [\d.]+ s, [\d,]+ rows\/s$/m);
      expect(migrated.stderr).to.match(/^Done: full migration in [\d.]+ s$/m);
      expect(migrated.stdout).to.match(/^organization +check +expected +found +result$/m);
      expect(migrated.stdout).to.match(/^All \d+ checks match\n$/m);
      expect(migrated.stdout + migrated.stderr).to.not.contain('hunter2');

      await sql("UPDATE workloads SET status = 'cancelled' WHERE workload_id = (SELECT workload_id FROM workloads WHERE status = 'completed' LIMIT 1)");
      const verified = await gpucap(['migrate', '--verify', '--from', `sqlite:${source.path}`, '--to', url]);
      expect(verified.code).to.equal(1);
      expect(verified.stdout).to.match(/^\S+ +cancelled +[\d,]+ +[\d,]+ +MISMATCH$/m);
      expect(verified.stderr).to.contain('Failed: the target does not match the source (see the checks marked MISMATCH)');
      expect(verified.stdout + verified.stderr).to.not.contain('hunter2');
    });

    it('exits 1 with the reason when a replica writes a source cluster, reading the file itself with --no-snapshot', async () => {
      await sql("INSERT INTO clusters (cluster_id) VALUES ('local')");
      await sql("INSERT INTO writer_leases (cluster_id, epoch, holder, holder_pid, acquired_at, heartbeat_at) VALUES ('local', 1, 'pod-a', 1, now(), clock_timestamp())");
      const refused = await gpucap(['migrate', '--no-snapshot', '--from', `sqlite:${source.path}`, '--to', url]);
      expect(refused.code).to.equal(1);
      expect(refused.stdout).to.equal('');
      expect(refused.stderr).to.match(/^Refused: A replica on PostgreSQL is writing "local" by pod-a \(heartbeat \d+ s ago\)/m);
    });
  });
});
