// The service as the image runs it: compiled by tsc (tsconfig.build.json) and run by plain Node,
// not from source through tsx. The fault tests start replicas while others serve hundreds of
// requests a second on 2 cores, and a replica from source spends about 6 s of CPU in tsx's loader
// before it serves, against 2.4 s compiled (measured 2026-11-28): CPU taken from the replicas already
// serving. Built once per test process, into a folder of its own under .gpucap-dev/: inside the
// repository, so that the compiled modules find node_modules, and removed when the process exits.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cleanUpOnExit } from './exit-cleanup.js';

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

let built: Promise<string> | undefined;

/** The compiled entry point (…/src/main.js), built on the first call of this process. */
export function builtServiceEntry(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  const parent = join(REPO_DIR, '.gpucap-dev');
  mkdirSync(parent, { recursive: true });
  const outDir = mkdtempSync(join(parent, 'service-build-'));
  cleanUpOnExit(`built-service:${outDir}`, () => rmSync(outDir, { recursive: true, force: true }));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: REPO_DIR, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`Cannot compile the service for the test's replicas (tsc -p tsconfig.build.json): ${`${stdout}${stderr}`.trim().slice(0, 2_000)}`, { cause: error });
  }
  return join(outDir, 'src', 'main.js');
}
