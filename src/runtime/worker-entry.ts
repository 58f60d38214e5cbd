// How to start one of the service's worker threads (the index's read, write and checkpoint workers,
// the watch decoder), compiled or from source. Compiled (the image: dist/src/), the worker is e.g.
// read-worker.js beside the module that starts it, and plain Node runs it. From source (tests, `npm run
// dev`, the benchmarks: all under tsx), that module is a .ts file and so is the worker. Inheriting the
// parent's `--import tsx` is not enough: on Node 20 a worker does not get tsx's loader that way (the
// .ts entry fails with ERR_UNKNOWN_FILE_EXTENSION). So a small inline bootstrap registers tsx in the
// worker first, then imports the .ts worker.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerOptions } from 'node:worker_threads';

export interface WorkerEntry {
  /** A file URL, or the bootstrap's code (with `eval`). */
  filename: URL | string;
  options: Pick<WorkerOptions, 'eval'>;
}

/** The worker `module` (a file name without extension) beside the module whose URL is `beside`. */
export function workerEntry(beside: string, module: string): WorkerEntry {
  const fromSource = /\.[cm]?ts$/.test(fileURLToPath(beside));
  if (!fromSource) return { filename: new URL(`./${module}.js`, beside), options: {} };
  const worker = new URL(`./${module}.ts`, beside).href;
  const tsx = tsxEsmApi();
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(worker)}); });`;
  return { filename: bootstrap, options: { eval: true } };
}

/**
 * The URL of tsx's ESM API (`tsx/esm/api`, its `import` condition), resolved from here so that tsx is
 * found whatever the cwd. Not import.meta.resolve: under mocha, tsx compiles this module to CommonJS,
 * where it is missing; and require.resolve would give the CommonJS build, whose register() fails.
 */
function tsxEsmApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']?.import.default ?? 'dist/esm/api/index.mjs')).href;
}
