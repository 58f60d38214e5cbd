// Errors thrown by a read in a worker, rebuilt on the main thread as the same kind of error the
// main-thread store would have thrown. A structured clone would keep an error's message but drop its
// class and its own fields, so each error crosses as its name, message, stack and data fields: an
// SqliteError comes back an SqliteError (callers map on `code`), a built-in error (TypeError,
// RangeError) its class, anything else an Error of the same name; each keeps its fields (`code`,
// `details`...). The transport knows no error class of the layers above: whatever maps an error by
// its name and fields sees the same ones from either thread. The stack is the worker's.
import BetterSqlite3 from 'better-sqlite3';
import type { SerializedError } from './read-protocol.js';

// better-sqlite3 throws TypeError and RangeError for bad arguments (a value it cannot bind).
const BUILTIN_ERRORS: Record<string, ErrorConstructor | undefined> = {
  TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
};

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: `Non-error thrown: ${String(error)}`, fields: {} };
  const flat: SerializedError = { name: error.name, message: error.message, fields: dataFields(error) };
  if (error.stack !== undefined) flat.stack = error.stack;
  return flat;
}

export function deserializeError(flat: SerializedError): Error {
  const code = flat.fields.code;
  let error: Error;
  if (flat.name === 'SqliteError' && typeof code === 'string') {
    error = new BetterSqlite3.SqliteError(flat.message, code);
  } else {
    const Builtin = BUILTIN_ERRORS[flat.name] ?? Error;
    error = new Builtin(flat.message);
    error.name = flat.name;
  }
  Object.assign(error, flat.fields);
  if (flat.stack !== undefined) error.stack = flat.stack;
  return error;
}

/**
 * The error's own enumerable fields that survive a structured clone. One that does not (a function,
 * a class instance with private state) is left out rather than failing the reply of the whole call.
 */
function dataFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    try {
      fields[key] = structuredClone(value);
    } catch {
      // not data: stays behind
    }
  }
  return fields;
}
