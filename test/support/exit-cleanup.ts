// Servers the tests start as their own processes (envtest, PostgreSQL) must not outlive the test run,
// even when an after() hook never runs: each registers how to kill itself, run on exit or Ctrl-C.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const cleanups = new Map<string, () => void>();
let hooked = false;

/** Runs `cleanup` (synchronous: it runs on exit) unless forget(key) was called first. */
export function cleanUpOnExit(key: string, cleanup: () => void): void {
  cleanups.set(key, cleanup);
  if (hooked) return;
  hooked = true;
  const runAll = (): void => {
    for (const run of cleanups.values()) run();
    cleanups.clear();
  };
  process.on('exit', runAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      runAll();
      // No other listener: end the process of this signal, as it would have without this one.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

export function forgetCleanup(key: string): void {
  cleanups.delete(key);
}

/** The KEY=value lines a start script wrote to DIR/env. */
export function readEnvFile(dir: string): Record<string, string | undefined> {
  const file = join(dir, 'env');
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

export function signal(pid: string | undefined, name: NodeJS.Signals): void {
  if (pid === undefined || pid === '') return;
  try {
    process.kill(Number(pid), name);
  } catch {
    // Already gone.
  }
}
