// `gpucap`: commands for the operator of the service, beside it in the image (the entry point is
// src/gpucap.ts). One command so far: `migrate`, which copies an SQLite index into PostgreSQL
// (src/cli/migrate/, docs/scaling.md).
// Progress and messages go to stderr, results (the verification table) to stdout. Exit codes: 0 done,
// 1 failed or a check did not match, 2 bad arguments.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeDatabase } from '../config/schema.js';
import { checkIndex } from './migrate/check-index.js';
import { migrateIndex } from './migrate/migrate-index.js';
import { formatVerification, type Verification } from './migrate/verify-index.js';

export const USAGE = `Usage: gpucap <command> [options]

Commands:
  migrate   Copy an SQLite index into PostgreSQL, or check a copy

Run gpucap <command> --help for its options.
`;

export const MIGRATE_USAGE = `Usage: gpucap migrate --from sqlite:PATH --to postgres://USER:PASSWORD@HOST:PORT/DB [options]

Copies the SQLite index at PATH into the PostgreSQL database, history and lifetime totals included,
then checks the copy per organization (--verify below) and prints the checks. docs/scaling.md,
"Moving from SQLite", describes the cut-over. --to - reads the URL from stdin, so that it appears
in no command line (kubectl exec records its command in the API server's audit log).

  --snapshot-dir DIR  Read a consistent copy of PATH made in DIR (VACUUM INTO DIR/index.migrate.db),
                      so that the service may keep running. Default: the folder of PATH. The copy
                      needs about the size of PATH in free space; it is removed when the migration
                      is done, and kept for --resume when it stops.
  --no-snapshot       Read PATH itself. Only while the service is stopped.
  --resume            Continue a migration that stopped, from its last chunk; after a finished one,
                      copy what changed in PATH since (the cut-over's last step).
  --restart           Delete what the database holds of PATH's clusters and copy everything again.
  --force             Copy even while a replica on PostgreSQL writes one of PATH's clusters (its
                      newer rows may go back to PATH's state).
  --verify            Only check: compare PATH and the database per organization (rows in total
                      and per status, GPU-ms at one time, pods, lifetime totals) and the database's
                      rollups with its rows. Writes nothing.
  --chunk-rows N      Rows per INSERT and checkpoint (default 5000).
  --help              Print this text.

Exit codes: 0 done and every check matches, 1 failed or a check does not match, 2 bad arguments.
`;

/** Bad arguments: the message says which and why; the process exits with code 2. */
export class UsageError extends Error {
  readonly code = 'USAGE';

  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface MigrateCommand {
  kind: 'migrate';
  /** The SQLite file, resolved against the working folder. */
  from: string;
  /** The PostgreSQL URL; `-` until it is read from stdin. */
  to: string;
  snapshotDir: string | null;
  resume: boolean;
  restart: boolean;
  force: boolean;
  verify: boolean;
  chunkRows: number;
}

export type GpucapCommand = { kind: 'help'; text: string } | MigrateCommand;

const VALUE_FLAGS = ['from', 'to', 'snapshot-dir', 'chunk-rows'] as const;
const SWITCHES = ['no-snapshot', 'resume', 'restart', 'force', 'verify', 'help'] as const;
const COPY_ONLY = ['resume', 'restart', 'force', 'chunk-rows'];
const MAX_CHUNK_ROWS = 100_000;

export function parseGpucapArgs(argv: readonly string[], options: { cwd: string }): GpucapCommand {
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError('A command is required (migrate)');
  if (command === '--help' || command === '-h' || command === 'help') return { kind: 'help', text: USAGE };
  if (command !== 'migrate') throw new UsageError(`Unknown command "${command}" (the commands are: migrate)`);
  return parseMigrate(rest, options.cwd);
}

function parseMigrate(argv: readonly string[], cwd: string): GpucapCommand {
  const given = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '-h') return { kind: 'help', text: MIGRATE_USAGE };
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument "${arg}" (flags start with --)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (given.has(name)) throw new UsageError(`--${name} is given twice`);
    if ((SWITCHES as readonly string[]).includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      given.set(name, true);
    } else if ((VALUE_FLAGS as readonly string[]).includes(name)) {
      let value: string | undefined;
      if (eq !== -1) value = arg.slice(eq + 1);
      else if (argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('--')) value = argv[(i += 1)];
      if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
      given.set(name, value);
    } else {
      throw new UsageError(`Unknown flag "--${name}" (see gpucap migrate --help)`);
    }
  }
  if (given.has('help')) return { kind: 'help', text: MIGRATE_USAGE };
  const text = (name: string) => given.get(name) as string | undefined;

  const from = text('from');
  if (from === undefined) throw new UsageError('--from is required: the SQLite index, as sqlite:PATH');
  if (!from.startsWith('sqlite:') || from.length === 'sqlite:'.length) throw new UsageError(`--from must be sqlite:PATH, got "${from}"`);
  const path = resolve(cwd, from.slice('sqlite:'.length));
  if (!existsSync(path)) throw new UsageError(`--from names no file: "${path}" does not exist`);

  const to = text('to');
  if (to === undefined) throw new UsageError('--to is required: the PostgreSQL database, as postgres://USER:PASSWORD@HOST:PORT/DB, or - to read it from stdin');
  if (to !== '-') checkDatabaseUrl(to);

  if (given.has('no-snapshot') && given.has('snapshot-dir')) throw new UsageError('--snapshot-dir and --no-snapshot exclude each other');
  const verify = given.has('verify');
  if (verify) {
    const copying = COPY_ONLY.find((name) => given.has(name));
    if (copying !== undefined) throw new UsageError(`--${copying} applies to a migration, not to --verify`);
  }
  const chunk = text('chunk-rows') ?? '5000';
  const chunkRows = /^\d{1,6}$/.test(chunk) ? Number(chunk) : NaN;
  if (!(chunkRows >= 1 && chunkRows <= MAX_CHUNK_ROWS)) {
    throw new UsageError(`--chunk-rows must be a whole number from 1 to ${MAX_CHUNK_ROWS}, got "${chunk}"`);
  }

  const snapshotDir = given.has('no-snapshot') ? null : resolve(cwd, text('snapshot-dir') ?? dirname(path));
  return {
    kind: 'migrate', from: path, to, snapshotDir, verify, chunkRows,
    resume: given.has('resume'), restart: given.has('restart'), force: given.has('force'),
  };
}

/** Refuses anything but a PostgreSQL URL, naming it without its password. */
function checkDatabaseUrl(url: string): void {
  if (!/^postgres(ql)?:\/\/./.test(url) || !URL.canParse(url)) {
    throw new UsageError(`--to must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB), got "${describeDatabase({ kind: 'postgres', url, readUrl: undefined })}"`);
  }
}

export interface GpucapIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  clock: { now(): number };
  /** All of stdin, for `--to -`. */
  stdin: () => Promise<string>;
}

/** Runs a command; returns the exit code (0 done, 1 failed or a check did not match, 2 bad arguments). */
export async function runGpucap(argv: readonly string[], io: GpucapIo): Promise<number> {
  let command: GpucapCommand;
  try {
    command = parseGpucapArgs(argv, { cwd: io.cwd });
    if (command.kind === 'migrate' && command.to === '-') {
      const url = (await io.stdin()).trim();
      if (url === '') throw new UsageError('--to - reads the URL from stdin, which was empty');
      checkDatabaseUrl(url);
      command = { ...command, to: url };
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`Error: ${error.message}\n`);
    io.stderr(argv[0] === 'migrate' ? 'Run gpucap migrate --help for usage.\n' : USAGE);
    return 2;
  }
  if (command.kind === 'help') {
    io.stdout(command.text);
    return 0;
  }
  const print = (line: string) => io.stderr(`${line}\n`);
  const target = describeDatabase({ kind: 'postgres', url: command.to, readUrl: undefined });
  const shared = {
    from: command.from,
    to: command.to,
    snapshotDir: command.snapshotDir,
    clock: io.clock,
    print,
    logger: { warn: (_fields: object, message: string) => print(`Warning: ${message}`) },
  };
  const started = io.clock.now();
  try {
    let verification: Verification;
    if (command.verify) {
      print(`gpucap migrate --verify: sqlite:${command.from} against ${target}`);
      verification = await checkIndex(shared);
    } else {
      print(`gpucap migrate: sqlite:${command.from} to ${target}`);
      const result = await migrateIndex({
        ...shared,
        resume: command.resume,
        restart: command.restart,
        force: command.force,
        chunkRows: command.chunkRows,
      });
      verification = result.verification;
      const seconds = ((io.clock.now() - started) / 1000).toFixed(1);
      if (verification.ok) {
        print(result.kind === 'finished'
          ? `Done: already migrated, checked in ${seconds} s`
          : `Done: ${result.kind} migration in ${seconds} s`);
      }
    }
    io.stdout(`${formatVerification(verification)}\n`);
    if (!verification.ok) print('Failed: the target does not match the source (see the checks marked MISMATCH)');
    return verification.ok ? 0 : 1;
  } catch (error) {
    const refused = (error as { code?: unknown }).code === 'TRANSFER_REFUSED';
    print(`${refused ? 'Refused' : 'Failed'}: ${messageOf(error)}`);
    return 1;
  }
}

/** An error's message; Node's connect to several addresses throws an AggregateError without one. */
function messageOf(error: unknown): string {
  const e = error as { message?: unknown; errors?: unknown; code?: unknown };
  if (typeof e.message === 'string' && e.message !== '') return e.message;
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.map(messageOf).join('; ');
  return typeof e.code === 'string' ? e.code : String(error);
}
