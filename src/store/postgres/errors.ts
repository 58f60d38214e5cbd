// Which failures mean "the database cannot answer now" rather than "this query is wrong". The read side
// answers the first kind with IndexBusyError, which the API turns into 503 with Retry-After: during a
// restart or a failover a client waits and retries, and never sees a 500 or a hang. Anything else
// stays an error of its own (a 500), because retrying it would fail the same way.
import { IndexBusyError } from '../../query/ports.js';

/** SQLSTATEs of a server that is going away, starting, overloaded, or that gave up on this query. */
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: a fast or smart shutdown, or pg_terminate_backend
  '57P02', // crash_shutdown: another backend crashed and the server restarts
  '57P03', // cannot_connect_now: starting up, or shutting down
  '53300', // too_many_connections
  '57014', // query_canceled: statement_timeout (nothing else here cancels a query)
  '55P03', // lock_not_available: lock_timeout, e.g. behind the brief lock of a month being dropped
  '40001', // serialization_failure, also a hot standby's "conflict with recovery": retry
  '40P01', // deadlock_detected: retry
]);
/** The SQLSTATE class of connection exceptions (08000, 08003, 08006, 08001, 08004, 08P01). */
const CONNECTION_CLASS = '08';

/** Node's socket and DNS errors: nothing listens, the path broke, or the name does not resolve (yet). */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
]);

/** pg's own errors, which carry no code: only their messages tell them apart. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated', // "… unexpectedly", "… due to connection timeout"
  'timeout exceeded when trying to connect', // the pool had no connection to give in time
  'Query read timeout', // query_timeout: the server stopped answering
  'timeout expired', // connectionTimeoutMillis: no answer to the connect in time
  'Client has encountered a connection error and is not queryable',
];

/** Whether `error` means the database is unavailable for now, so that the same request may succeed later. */
export function isUnavailable(error: unknown): boolean {
  return causes(error).some((e) => {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_STATES.has(code) || (code.length === 5 && code.startsWith(CONNECTION_CLASS))) return true;
    if (UNAVAILABLE_ERRNOS.has(code)) return true;
    const message = typeof e.message === 'string' ? e.message : '';
    return UNAVAILABLE_MESSAGES.some((m) => message.includes(m));
  });
}

/**
 * For the read side: `error` as IndexBusyError when the database is unavailable, else `error` itself.
 * The message is written for the API's caller and names no server.
 */
export function asIndexBusy(error: unknown, retryAfterSeconds = 2): unknown {
  if (error instanceof IndexBusyError || !isUnavailable(error)) return error;
  return new IndexBusyError('The index database is unavailable; retry shortly', retryAfterSeconds);
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
}

/**
 * `error`, its causes and the errors of an AggregateError (Node's connect over several addresses
 * throws one), depth-first; a few levels are enough and bound a cyclic chain.
 */
function causes(error: unknown, depth = 0): ErrorLike[] {
  if (typeof error !== 'object' || error === null || depth > 4) return [];
  const e = error as ErrorLike & { cause?: unknown; errors?: unknown };
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((inner: unknown) => causes(inner, depth + 1)) : [];
  return [e, ...causes(e.cause, depth + 1), ...nested];
}
