// The connections to PostgreSQL: a pool for reads, and one dedicated client per written cluster, which
// holds that cluster's write lock and carries its writes (its session is the lock: a writer that loses
// the connection loses the lock with it). docs: issue 16 plan §4.1.
//
// Session settings travel in the startup packet's `options` (`-c name=value`), so they hold from the
// first statement and need no round trip. PgBouncer before 1.20 rejects `options`; behind such a
// pooler, set them with SET instead. The read pool's lists and lookups by id are named prepared
// statements, kept by each session (config db_prepared_statements, workload-index.ts): a pooler that
// gives each transaction another server session loses them, PgBouncer in transaction or statement
// mode before 1.21, or later with max_prepared_statements = 0. There, set db_prepared_statements to
// false. Their generic plans come from a SET LOCAL in the read's own transaction, which poolers keep.
import pg from 'pg';

/** pino-compatible subset. */
export interface ConnectionLogger {
  warn(fields: object, message: string): void;
}

export interface ConnectionOptions {
  /** This replica's name (instance_id): PostgreSQL shows `gpucap:<instance>:<role>` as application_name. */
  instanceId: string;
  logger: ConnectionLogger;
}

/** What a role's sessions may spend, in ms; 0 is no limit. */
export interface SessionLimits {
  statementTimeout: number;
  lockTimeout: number;
  idleInTransactionTimeout: number;
  /** Client side: a query whose answer has not arrived by then fails with "Query read timeout". */
  queryTimeout: number;
}

// A writer's statements end well inside its 10 s lease, so a long statement never looks like a dead
// writer; lock_timeout is the backstop against lock waits between writers of different clusters
// that share rollup rows. query_timeout catches a server that stopped answering (a partition) that
// statement_timeout, enforced by that server, cannot.
const WRITER: SessionLimits = { statementTimeout: 5_000, lockTimeout: 5_000, idleInTransactionTimeout: 10_000, queryTimeout: 7_000 };
const READER: SessionLimits = { statementTimeout: 10_000, lockTimeout: 5_000, idleInTransactionTimeout: 10_000, queryTimeout: 12_000 };
// Migrations and maintenance set their own limits per transaction (migrate.ts).
const MAINTENANCE: SessionLimits = { statementTimeout: 0, lockTimeout: 0, idleInTransactionTimeout: 60_000, queryTimeout: 0 };

const CONNECT_TIMEOUT_MS = 3_000;
const KEEPALIVE_DELAY_MS = 5_000;

// Server-side keepalives and TCP_USER_TIMEOUT end the backend of a replica that vanished (its lock
// with it) in about 10 s; the client's own keepalive (keepAlive below) does the same for this side.
// JIT compiles a plan's expressions on the first run of a costly query: tens to hundreds of ms spent
// on short indexed queries whose cost estimate crosses the threshold, for nothing.
const SERVER_SETTINGS = [
  'jit=off', 'tcp_keepalives_idle=5', 'tcp_keepalives_interval=2', 'tcp_keepalives_count=3', 'tcp_user_timeout=10000',
];

const INT8 = 20;
const INT8_ARRAY = 1016;
const NUMERIC = 1700;
const NUMERIC_ARRAY = 1231;

/**
 * bigint columns (times in epoch ms, counts, days, GPU-day sums) and COUNT(*) come back as JS numbers,
 * as better-sqlite3 gives them, so that rows read the same on both backends. pg returns strings by
 * default because a bigint may exceed 2^53; ours stay far below it (epoch ms ~2^41; rollup figures are
 * integers < 2^53 by construction, src/store/sqlite/migrations/v03-rollups.ts), and a value that does not is
 * refused rather than rounded. float8 stays pg's parseFloat.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`Cannot read bigint ${text} as a number: it is beyond 2^53`);
  return value;
}

/**
 * numeric never comes back: its values arrive as strings and would compare and add wrongly. A query
 * that yields one (SUM of a bigint, a division by a numeric literal) casts to float8 or bigint.
 */
function refuseNumeric(text: string): never {
  throw new Error(`Cannot read numeric value ${text}: cast it to float8 or bigint in the SQL`);
}

/**
 * The type parsers of our connections only: pg's global pg.types stay as they are for every other
 * user of the package in the process. A parser that throws fails its query (pg catches it per row).
 */
export const TYPES: pg.CustomTypesConfig = (() => {
  const types = new pg.TypeOverrides();
  const int8Array = types.getTypeParser(INT8_ARRAY, 'text') as unknown as (text: string) => (string | null)[];
  types.setTypeParser(INT8, parseInt8);
  types.setTypeParser(INT8_ARRAY, (text: string) => int8Array(text).map((v) => (v === null ? null : parseInt8(v))));
  types.setTypeParser(NUMERIC, refuseNumeric);
  types.setTypeParser(NUMERIC_ARRAY, refuseNumeric);
  return types;
})();

/** `pg` options for a role; what the URL itself says (host, user, database, TLS) is kept. */
export function clientConfig(url: string, applicationName: string, limits: SessionLimits): pg.ClientConfig {
  // pg lets the URL's own query parameters override the config, so ours are taken out of it; the
  // URL's `options`, if any, come after ours, where a repeated -c wins.
  let connectionString = url;
  let urlOptions = '';
  if (/[?&](options|application_name)=/.test(url)) {
    const parsed = new URL(url);
    urlOptions = parsed.searchParams.get('options') ?? '';
    parsed.searchParams.delete('options');
    parsed.searchParams.delete('application_name');
    connectionString = parsed.toString();
  }
  const settings = [
    ...SERVER_SETTINGS,
    `statement_timeout=${limits.statementTimeout}`,
    `lock_timeout=${limits.lockTimeout}`,
    `idle_in_transaction_session_timeout=${limits.idleInTransactionTimeout}`,
  ];
  return {
    connectionString,
    // PostgreSQL keeps the first 63 bytes of it.
    application_name: applicationName,
    options: [...settings.map((s) => `-c ${s}`), urlOptions].filter((s) => s !== '').join(' '),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...(limits.queryTimeout > 0 ? { query_timeout: limits.queryTimeout } : {}),
    types: TYPES,
  };
}

const applicationName = (instanceId: string, role: string) => `gpucap:${instanceId}:${role}`;

const errorFields = (error: unknown) => ({ err: { message: (error as Error)?.message, code: (error as { code?: unknown })?.code } });

/**
 * The read pool: `size` connections at most, opened on demand. An idle connection that breaks (the
 * server restarted, a failover) is dropped and logged; the next read opens a new one. Without the
 * 'error' listener such a break would crash the process.
 */
export function createReadPool(url: string, options: ConnectionOptions & { size: number }): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(url, applicationName(options.instanceId, 'reader'), READER),
    // A read that finds every connection busy waits up to connectionTimeoutMillis for one, then fails
    // as unavailable ("timeout exceeded when trying to connect", errors.ts).
    max: options.size,
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', (error) =>
    options.logger.warn(errorFields(error), 'An idle connection of the read pool broke; it is replaced on the next read'));
  // The pool listens only to its idle connections. One checked out (a read's snapshot transaction)
  // whose server goes away emits 'error' on the client itself, and without a listener that crashes
  // the process: the read in progress fails anyway (503 to its caller), so the event needs no more.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A connected writer for one cluster. The caller owns its end: it adds its own 'error' listener to
 * notice the loss of its lock. The one added here only logs, so that a break never crashes the process.
 */
export async function connectWriter(url: string, options: ConnectionOptions & { clusterId: string }): Promise<pg.Client> {
  return connect(url, options, { role: `writer:${options.clusterId}`, limits: WRITER });
}

/** A connected client for migrations and the maintenance pass, without statement limits. */
export async function connectMaintenance(url: string, options: ConnectionOptions): Promise<pg.Client> {
  return connect(url, options, { role: 'maintenance', limits: MAINTENANCE });
}

async function connect(url: string, options: ConnectionOptions, session: { role: string; limits: SessionLimits }): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(url, applicationName(options.instanceId, session.role), session.limits));
  client.on('error', (error) => options.logger.warn({ ...errorFields(error), role: session.role }, 'A database connection broke'));
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}
