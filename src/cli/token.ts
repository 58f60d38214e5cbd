// `npm run token -- ...`: mints a dev JWT (default) or an API token (--api-token).
// The secret goes to stdout alone, so `TOKEN=$(npm run -s token -- ...)` works; everything else
// (what to configure, the record to store) goes to stderr. Bad arguments exit with code 2.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Document, isMap, isSeq, parseDocument, stringify } from 'yaml';
import { ROLES, type Role } from '../access/principal.js';
import { parseIsoInstant } from '../domain/time.js';
import { API_TOKEN_ID_PATTERN, parseApiTokenFile, type ApiTokenRecordInput } from '../auth/api-token-file.js';
import { mintDevJwt, writeAtomically } from '../auth/dev-jwt.js';
import { generateApiToken, hashApiToken } from '../auth/token-format.js';

export const USAGE = `Usage:
  npm run -s token -- --role ROLE --org ORG [--initiatives a,b] [--sub NAME] [--ttl 8h] [--dev-dir DIR] [--rotate]
      Mint a JWT for local use, signed with a dev ES256 key kept in DIR (default .gpucap-dev).
      Prints the token on stdout and the service's settings on stderr.
      --rotate  make a new signing key (earlier keys stay in jwks.json, so earlier tokens stay valid)

  npm run -s token -- --api-token --id ID --role ROLE --org ORG [--initiatives a,b] [--expires DATE]
                      [--description TEXT] [--append FILE]
      Make an API token. Prints the token once on stdout; prints its record on stderr, or appends
      the record to FILE (YAML or JSON; created when missing).

  ROLE is one of ${ROLES.join(', ')}. --ttl takes 30s, 15m, 8h or 7d (at most 30d).
  --expires takes a date (2027-06-30, midnight UTC) or a date-time with offset.
  --help prints this text.
`;

/** Bad arguments: the message says which and why; the process exits with code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type TokenCommand =
  | { kind: 'help' }
  | {
      kind: 'jwt';
      role: Role;
      organizationId: string;
      initiatives: string[];
      subject: string;
      ttlSeconds: number;
      devDir: string;
      rotate: boolean;
    }
  | {
      kind: 'api-token';
      id: string;
      role: Role;
      organizationId: string;
      initiatives: string[];
      expiresAt: number | null;
      description: string | null;
      append: string | null;
    };

const VALUE_FLAGS = ['role', 'org', 'initiatives', 'sub', 'ttl', 'dev-dir', 'id', 'expires', 'description', 'append'] as const;
const SWITCHES = ['api-token', 'rotate', 'help'] as const;
const JWT_ONLY = ['sub', 'ttl', 'dev-dir', 'rotate'];
const API_TOKEN_ONLY = ['id', 'expires', 'description', 'append'];
const MAX_TTL_SECONDS = 30 * 86400;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Parses and validates the arguments (after `--`); relative paths are resolved against `cwd`. */
export function parseTokenArgs(argv: readonly string[], options: { cwd?: string } = {}): TokenCommand {
  const cwd = options.cwd ?? process.cwd();
  const given = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '-h') return { kind: 'help' };
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
      throw new UsageError(`Unknown flag "--${name}" (see --help)`);
    }
  }
  if (given.has('help')) return { kind: 'help' };

  const apiToken = given.has('api-token');
  for (const name of apiToken ? JWT_ONLY : API_TOKEN_ONLY) {
    if (given.has(name)) {
      throw new UsageError(apiToken ? `--${name} applies to JWTs, not to --api-token` : `--${name} applies only with --api-token`);
    }
  }
  const text = (name: string): string | undefined => given.get(name) as string | undefined;
  const role = parseRole(text('role'));
  const organizationId = parseOrganization(text('org'));
  const initiatives = parseInitiatives(text('initiatives'));

  if (apiToken) {
    const id = text('id');
    if (id === undefined) throw new UsageError('--id is required with --api-token (a name for the token, like grafana-prod)');
    if (!new RegExp(API_TOKEN_ID_PATTERN).test(id)) throw new UsageError(`--id must match ${API_TOKEN_ID_PATTERN}, got "${id}"`);
    const expires = text('expires');
    const expiresAt = expires === undefined ? null : parseIsoInstant(expires);
    if (expiresAt === null && expires !== undefined) {
      throw new UsageError(`--expires must be a date (2027-06-30) or a date-time with offset (2027-06-30T12:00:00Z), got "${expires}"`);
    }
    const append = text('append');
    return {
      kind: 'api-token',
      id,
      role,
      organizationId,
      initiatives,
      expiresAt,
      description: text('description') ?? null,
      append: append === undefined ? null : resolve(cwd, append),
    };
  }
  return {
    kind: 'jwt',
    role,
    organizationId,
    initiatives,
    subject: text('sub') ?? 'dev-user',
    ttlSeconds: parseTtl(text('ttl') ?? '8h'),
    devDir: resolve(cwd, text('dev-dir') ?? '.gpucap-dev'),
    rotate: given.has('rotate'),
  };
}

function parseRole(value: string | undefined): Role {
  if (value === undefined) throw new UsageError(`--role is required (one of ${ROLES.join(', ')})`);
  if (!(ROLES as readonly string[]).includes(value)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${value}"`);
  return value as Role;
}

function parseOrganization(value: string | undefined): string {
  if (value === undefined) throw new UsageError('--org is required (the organization id, like acme)');
  if (value.length > 128 || /\s/.test(value)) throw new UsageError(`--org must be at most 128 characters without spaces, got "${value}"`);
  return value;
}

function parseInitiatives(value: string | undefined): string[] {
  if (value === undefined) return [];
  const items = value.split(',').map((item) => item.trim());
  if (items.some((item) => item === '' || /\s/.test(item))) {
    throw new UsageError(`--initiatives must be a comma-separated list of initiative ids (llm,vision), got "${value}"`);
  }
  return [...new Set(items)];
}

function parseTtl(value: string): number {
  const match = /^(\d{1,7})([smhd])$/.exec(value);
  const seconds = match ? Number(match[1]) * (UNIT_SECONDS[match[2] as string] as number) : 0;
  if (seconds <= 0 || seconds > MAX_TTL_SECONDS) {
    throw new UsageError(`--ttl must be a duration like 30m, 8h or 7d (at most 30d), got "${value}"`);
  }
  return seconds;
}

export interface NewApiToken {
  /** The secret: shown once, stored nowhere. */
  token: string;
  record: ApiTokenRecordInput;
}

/** A new random token and its record (the SHA-256 of the token, never the token). */
export function createApiToken(command: Extract<TokenCommand, { kind: 'api-token' }>, options: { now?: number } = {}): NewApiToken {
  if (command.expiresAt !== null && command.expiresAt <= (options.now ?? Date.now())) {
    throw new UsageError('--expires must be in the future');
  }
  const token = generateApiToken();
  const record: ApiTokenRecordInput = {
    id: command.id,
    sha256: hashApiToken(token),
    organization_id: command.organizationId,
    role: command.role,
    initiatives: command.initiatives,
  };
  if (command.expiresAt !== null) record.expires_at = new Date(command.expiresAt).toISOString().replace('.000Z', 'Z');
  if (command.description !== null) record.description = command.description;
  return { token, record };
}

/**
 * Adds the record to the tokens file (created with `tokens:` when missing), keeping its comments.
 * Refuses a duplicate id (UsageError) and never writes a file the service would reject (Error).
 */
export function appendApiTokenRecord(file: string, record: ApiTokenRecordInput): void {
  const exists = existsSync(file);
  const doc = exists ? parseDocument(readFileSync(file, 'utf8')) : new Document({ tokens: [] });
  if (doc.errors.length > 0) throw new Error(`Cannot parse ${file}: ${doc.errors[0]?.message.split('\n')[0]}`);
  if (doc.contents === null) doc.contents = doc.createNode({ tokens: [] });
  if (!isMap(doc.contents)) throw new Error(`Cannot append to ${file}: it must be a mapping with a "tokens" list`);
  const tokens = doc.get('tokens');
  if (tokens === undefined || tokens === null) {
    doc.set('tokens', doc.createNode([]));
  } else if (!isSeq(tokens)) {
    throw new Error(`Cannot append to ${file}: "tokens" must be a list`);
  } else if (tokens.items.some((item) => isMap(item) && item.get('id') === record.id)) {
    throw new UsageError(`${file} already has a record with id "${record.id}"; choose another --id or remove the old record first`);
  }
  const list = doc.get('tokens');
  if (isSeq(list)) list.flow = false;
  doc.addIn(['tokens'], doc.createNode(record));
  const text = file.endsWith('.json') ? `${JSON.stringify(doc.toJS(), null, 2)}\n` : doc.toString();
  try {
    parseApiTokenFile(text);
  } catch (error) {
    throw new Error(`Not writing ${file}: the result would be invalid: ${(error as Error).message}`, { cause: error });
  }
  writeAtomically(file, text, exists ? statSync(file).mode & 0o777 : 0o600);
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  now: () => number;
}

/** Runs the CLI; returns the exit code (0 done, 1 failed, 2 bad arguments). */
export async function runTokenCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = parseTokenArgs(argv, { cwd: io.cwd });
    if (command.kind === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    if (command.kind === 'jwt') {
      const minted = await mintDevJwt({ ...command, now: io.now() });
      io.stdout(`${minted.token}\n`);
      const env = Object.entries(minted.env).map(([name, value]) => `${name}=${value}`).join(' ');
      io.stderr(`${command.role} token for ${command.subject} in ${command.organizationId}, ` +
        `signed with key ${minted.kid}.\nThe service accepts it with:\n  ${env}\n`);
      return 0;
    }
    const created = createApiToken(command, { now: io.now() });
    if (command.append !== null) {
      appendApiTokenRecord(command.append, created.record);
      io.stdout(`${created.token}\n`);
      io.stderr(`Appended record "${command.id}" to ${command.append}. The token above is shown only once.\n`);
    } else {
      io.stdout(`${created.token}\n`);
      const item = stringify([created.record]).trimEnd().replace(/^/gm, '  ');
      io.stderr(`Add this record under "tokens:" in the API tokens file (the token above is shown only once):\n${item}\n`);
    }
    return 0;
  } catch (error) {
    io.stderr(`${error instanceof UsageError ? 'Error' : 'Failed'}: ${(error as Error).message}\n`);
    if (error instanceof UsageError) {
      io.stderr('Run with --help for usage.\n');
      return 2;
    }
    return 1;
  }
}

function isMain(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isMain()) {
  process.exitCode = await runTokenCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    now: () => Date.now(),
  });
}
