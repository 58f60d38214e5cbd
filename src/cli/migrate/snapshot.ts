// A consistent copy of a live SQLite index for `gpucap migrate`: VACUUM INTO writes the database as
// one read transaction sees it, while the service keeps writing the file (WAL mode lets both run).
// The copy is written under a temporary name and renamed, so a copy cut short is never read as whole.
import { mkdirSync, renameSync, rmSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openSource } from './source.js';

export const SNAPSHOT_FILE = 'index.migrate.db';
/** The copy `--verify` reads and removes: it leaves a migration's own copy, kept for --resume, alone. */
export const VERIFY_SNAPSHOT_FILE = 'index.verify.db';

export function snapshotPath(dir: string, file = SNAPSHOT_FILE): string {
  return join(dir, file);
}

/** Free space asked for beyond the copy's own size. */
const MARGIN = 1.1;

/**
 * Copies `live` to `target`, replacing an older copy. Refuses when the folder lacks the room: the copy
 * takes the file's used pages (its free pages are left out).
 */
export function takeSnapshot(live: string, target: string): void {
  const dir = dirname(target);
  const partial = `${target}.partial`;
  const source = openSource(live);
  try {
    const pragma = (name: string) => source.db.pragma(name, { simple: true }) as number;
    const pages = pragma('page_count') - pragma('freelist_count');
    const bytes = pages * pragma('page_size');
    mkdirSync(dir, { recursive: true });
    const fs = statfsSync(dir);
    const free = fs.bavail * fs.bsize;
    if (free < bytes * MARGIN) {
      throw new Error(
        `Cannot copy "${live}" to "${target}": the copy needs about ${gigabytes(bytes * MARGIN)} GB ` +
          `and the folder has ${gigabytes(free)} GB free; ` +
          'point --snapshot-dir at a folder with room (an emptyDir volume will do), or stop the service and pass --no-snapshot',
      );
    }
    rmSync(partial, { force: true });
    source.db.prepare('VACUUM INTO ?').run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    source.close();
  }
  removeSnapshot(target);
  renameSync(partial, target);
}

/** Removes a copy and whatever SQLite left beside it. */
export function removeSnapshot(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

const gigabytes = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);
