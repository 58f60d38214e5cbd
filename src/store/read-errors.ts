// Errors thrown by a read in a worker, rebuilt on the main thread as the same kind of error the
// main-thread store would have thrown: an SqliteError keeps its class and `code` (callers map on
// `code`), an ApiError its code, details and headers (the error middleware maps it on `instanceof`),
// a built-in error (TypeError, RangeError) its class, anything else is an Error with the same name
// and message. The stack is the worker's, where the error happened.
import BetterSqlite3 from 'better-sqlite3';
import { ApiError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../domain/errors.js';
import type { SerializedError } from './read-protocol.js';

// better-sqlite3 throws TypeError and RangeError for bad arguments (a value it cannot bind).
const BUILTIN_ERRORS: Record<string, ErrorConstructor | undefined> = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: `Non-error thrown: ${String(error)}` };
  const flat: SerializedError = { name: error.name, message: error.message };
  if (error.stack !== undefined) flat.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') flat.code = code;
  if (error instanceof ApiError) flat.api = { details: error.details, headers: error.headers };
  return flat;
}

export function deserializeError(flat: SerializedError): Error {
  let error: Error;
  if (flat.api !== undefined && flat.code !== undefined && flat.code in ERROR_STATUS) {
    error = new ApiError(flat.code as ErrorCode, flat.message, { details: flat.api.details as ErrorDetail[], headers: flat.api.headers });
  } else if (flat.name === 'SqliteError' && flat.code !== undefined) {
    error = new BetterSqlite3.SqliteError(flat.message, flat.code);
  } else {
    const Builtin = BUILTIN_ERRORS[flat.name] ?? Error;
    error = new Builtin(flat.message);
    error.name = flat.name;
    if (flat.code !== undefined) Object.assign(error, { code: flat.code });
  }
  if (flat.stack !== undefined) error.stack = flat.stack;
  return error;
}
