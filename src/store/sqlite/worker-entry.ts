// How to start a worker thread of the index (a read worker, the write worker), compiled or from
// source. Compiled (the image: dist/src/store/), the worker is e.g. read-worker.js beside this module
// and plain Node runs it. From source (tests, `npm run
// dev`, the benchmarks: all under tsx), this module is a .ts file and so is the worker. Inheriting the
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

/** The worker modules of this folder. */
export type WorkerModule = 'read-worker' | 'write-worker' | 'checkpoint-worker';

export function workerEntry(module: WorkerModule): WorkerEntry {
  const fromSource = /\.[cm]?ts$/.test(fileURLToPath(import.meta.url));
  if (!fromSource) return { filename: new URL(`./${module}.js`, import.meta.url), options: {} };
  const worker = new URL(`./${module}.ts`, import.meta.url).href;
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
