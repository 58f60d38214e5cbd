// A file the service re-reads when it changes (API token records, a local JWKS), without timers:
// the caller asks for the content, and at most once per check interval that costs a stat.
// statSync follows symlinks, so the `..data` swap Kubernetes does on Secret volumes shows up as
// a new inode. A file that turns invalid is logged and the last valid content stays in force.
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

  const fail = (reason: string): void => {
    // Logged once per distinct problem: a broken file must not flood the log at every check.
    if (reason !== lastLoadError) {
      logger.error({ file: path, reason }, `${what} is invalid; the last valid version stays in force`);
    }
    lastLoadError = reason;
  };

  const reloadIfChanged = (now: number): void => {
    let signature: Signature;
    try {
      signature = signatureOf(path);
    } catch (error) {
      seen = null; // whatever appears next is read, even if it matches the old file
      fail(reasonOf(error));
      return;
    }
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

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}
