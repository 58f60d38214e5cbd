// The source a run reads: a fresh snapshot of the live file, the snapshot an interrupted run left
// behind (so that resuming reads exactly what that run read, while the live file moves on), or the
// file itself (--no-snapshot: the service is stopped).
import { existsSync } from 'node:fs';
import { removeSnapshot, snapshotPath, takeSnapshot } from './snapshot.js';
import { openSource, type SourceIndex, type SourceState } from './source.js';

export interface PreparedSource {
  index: SourceIndex;
  state: SourceState;
  /** The snapshot read, if any. */
  snapshot: string | null;
  /** Closes the source; removes the snapshot unless asked to keep it (for a later --resume). */
  close(options: { keepSnapshot: boolean }): void;
}

export interface PrepareOptions {
  /** The live index file. */
  from: string;
  /** Folder of the snapshot; null reads `from` itself. */
  snapshotDir: string | null;
  /** The snapshot's file name in it. */
  snapshotFile: string;
  /** Whether a snapshot left by an earlier run, of this state, is the one to read again. */
  reuse: (state: SourceState) => boolean;
  clock: { now(): number };
  print: (line: string) => void;
}

export function prepareSource(options: PrepareOptions): PreparedSource {
  if (options.snapshotDir === null) {
    const index = openSource(options.from);
    return { index, state: index.state(), snapshot: null, close: () => index.close() };
  }
  const path = snapshotPath(options.snapshotDir, options.snapshotFile);
  if (existsSync(path)) {
    const earlier = tryOpen(path);
    if (earlier !== null) {
      const state = earlier.state();
      if (options.reuse(state)) {
        const workloads = state.workloads.toLocaleString('en-US');
        options.print(`snapshot: reading ${path} again, left by the run this one resumes (${workloads} workloads)`);
        return prepared(earlier, state, path);
      }
      earlier.close();
    }
    removeSnapshot(path);
  }
  const started = options.clock.now();
  options.print(`snapshot: copying ${options.from} to ${path} (VACUUM INTO)`);
  takeSnapshot(options.from, path);
  const index = openSource(path);
  const state = index.state();
  const seconds = ((options.clock.now() - started) / 1000).toFixed(1);
  options.print(`snapshot: ${state.workloads.toLocaleString('en-US')} workloads in ${seconds} s`);
  return prepared(index, state, path);
}

function prepared(index: SourceIndex, state: SourceState, path: string): PreparedSource {
  return {
    index,
    state,
    snapshot: path,
    close: ({ keepSnapshot }) => {
      index.close();
      if (!keepSnapshot) removeSnapshot(path);
    },
  };
}

/** A snapshot left behind, or null when it cannot be read (a copy of another build's schema). */
function tryOpen(path: string): SourceIndex | null {
  try {
    return openSource(path);
  } catch {
    return null;
  }
}
