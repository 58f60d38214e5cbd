// The test files whose outcome can depend on the index backend: those that import
// test/support/backend.ts, directly or through other test modules. `npm run test:postgres` runs only
// these with GPUCAP_TEST_BACKEND=postgres (.mocharc.postgres.mjs); the rest (parsers, informers
// against a kube-apiserver, the chart, the telemetry rings, PostgreSQL's own suites...) would only
// repeat on PostgreSQL exactly what `npm test` ran. Nothing in src/ reads GPUCAP_TEST_BACKEND, so the
// test modules' imports are the whole story, types included (scripts/test-imports.mjs).
//   node scripts/backend-dependent-tests.mjs     # prints them, one per line
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { importGraph, testFiles } from './test-imports.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Test files of `repo` that reach test/support/backend.ts through their imports, relative to `repo`,
 * sorted. `graph`: their import graph, when the caller has it already.
 */
export function backendDependentTests(repo = REPO, graph = undefined) {
  // Every module the test files reach, with the modules that import it; then a walk back from the switch.
  /** @type {Map<string, string[]>} */
  const importers = new Map();
  const tests = testFiles(join(repo, 'test'));
  for (const [file, imports] of graph ?? importGraph(tests)) {
    for (const { path } of imports.modules) importers.set(path, [...(importers.get(path) ?? []), file]);
  }
  const reaching = new Set([join(repo, 'test/support/backend.ts')]);
  const walk = [...reaching];
  for (let file = walk.pop(); file !== undefined; file = walk.pop()) {
    for (const importer of importers.get(file) ?? []) {
      if (!reaching.has(importer)) {
        reaching.add(importer);
        walk.push(importer);
      }
    }
  }
  return tests
    .filter((file) => reaching.has(file))
    .map((file) => relative(repo, file))
    .sort();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${backendDependentTests().join('\n')}\n`);
}
