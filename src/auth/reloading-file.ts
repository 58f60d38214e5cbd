// A file the service re-reads when it changes (API token records, a local JWKS), without timers:
// the caller asks for the content, and at most once per check interval that costs a stat.
// statSync follows symlinks, so the `..data` swap Kubernetes does on Secret volumes shows up as
// a new inode. A file that turns invalid is logged and the last valid content stays in force: a
// typo must not lock everyone out. A file that is gone is different when the caller says what
// "nothing" is (`whenDeleted`): missing at one check it may be mid-swap, so nothing changes; still
// missing at the next check, it was deleted, and its content is withdrawn.
import { readFileSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';

export interface ReloadingFileStatus {
  /** Why the last read failed, or null when the content in force is the file's current content. */
  lastLoadError: string | null;
  /** Clock time (ms) of the last successful load. */
  loadedAt: number;
}

export interface ReloadingFile<T> {
  /** The last valid content; first re-read when the check interval has passed and the file changed. */
  current(): T;
  /** The content in force, without checking the file. */
  peek(): T;
  status(): ReloadingFileStatus;
}

export interface ReloadingFileOptions<T> {
  path: string;
  /** What the file is, for messages: `API tokens file`. */
  what: string;
  checkIntervalMs: number;
  /** Turns the text into content, or throws an Error whose message names the problem. */
  parse: (text: string) => T;
  /**
   * The content in force once the file is missing at two checks in a row (the second at least one
   * check interval after the first), with what that means for the log. Absent: a missing file is
   * like an invalid one, and the last valid content stays.
   */
  whenDeleted?: { value: T; consequence: string };
}

interface Signature {
  mtimeNs: bigint;
  size: bigint;
  ino: bigint;
}

/** Reads and parses the file once; throws an Error naming the file and the problem when it cannot. */
export function createReloadingFile<T>(options: ReloadingFileOptions<T>, deps: { clock: Clock; logger: Logger }): ReloadingFile<T> {
  const { path, what, checkIntervalMs, parse } = options;
  const { clock, logger } = deps;

  let seen: Signature | null;
  let value: T;
  try {
    seen = signatureOf(path);
    value = parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot load ${what} "${path}": ${reasonOf(error)}`, { cause: error });
  }
  let loadedAt = clock.now();
  let lastCheckAt = loadedAt;
  let lastLoadError: string | null = null;
  let missingAtLastCheck = false;
  let deleted = false;

  const fail = (reason: string): void => {
    // Logged once per distinct problem: a broken file must not flood the log at every check.
    if (reason !== lastLoadError) {
      const inForce = deleted ? `${options.whenDeleted?.consequence} until a valid one is back` : 'the last valid version stays in force';
      logger.error({ file: path, reason }, `${what} is invalid; ${inForce}`);
    }
    lastLoadError = reason;
  };

  const missing = (now: number, whenDeleted: { value: T; consequence: string }): void => {
    lastLoadError = 'file not found';
    if (!missingAtLastCheck) {
      missingAtLastCheck = true;
      logger.info({ file: path }, `${what} not found; ${whenDeleted.consequence} if it is still missing at the next check`);
      return;
    }
    if (deleted) return;
    deleted = true;
    value = whenDeleted.value;
    loadedAt = now;
    logger.warn({ file: path }, `${what} was deleted; ${whenDeleted.consequence} until it is back`);
  };

  const reloadIfChanged = (now: number): void => {
    let signature: Signature;
    try {
      signature = signatureOf(path);
    } catch (error) {
      seen = null; // whatever appears next is read, even if it matches the old file
      if (options.whenDeleted !== undefined && isNotFound(error)) return missing(now, options.whenDeleted);
      missingAtLastCheck = false;
      fail(reasonOf(error));
      return;
    }
    missingAtLastCheck = false;
    if (seen !== null && sameSignature(seen, signature)) return;
    seen = signature;
    try {
      value = parse(readFileSync(path, 'utf8'));
    } catch (error) {
      fail(reasonOf(error));
      return;
    }
    loadedAt = now;
    lastLoadError = null;
    deleted = false;
    logger.info({ file: path }, `${what} reloaded`);
  };

  return {
    current() {
      const now = clock.now();
      if (now - lastCheckAt >= checkIntervalMs) {
        lastCheckAt = now;
        reloadIfChanged(now);
      }
      return value;
    },
    peek() {
      return value;
    },
    status() {
      return { lastLoadError, loadedAt };
    },
  };
}

function signatureOf(path: string): Signature {
  const stats = statSync(path, { bigint: true });
  if (!stats.isFile()) throw new Error('not a regular file');
  return { mtimeNs: stats.mtimeNs, size: stats.size, ino: stats.ino };
}

function sameSignature(a: Signature, b: Signature): boolean {
  return a.mtimeNs === b.mtimeNs && a.size === b.size && a.ino === b.ino;
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}
