// The test files whose outcome can depend on the index backend: those that import
// test/support/backend.ts, directly or through other test modules. `npm run test:postgres` runs only
// these with GPUCAP_TEST_BACKEND=postgres (.mocharc.postgres.mjs); the rest (parsers, informers
// against a kube-apiserver, the chart, the telemetry rings, PostgreSQL's own suites...) would only
// repeat on PostgreSQL exactly what `npm test` ran. Nothing in src/ reads GPUCAP_TEST_BACKEND, so the
// test modules' imports are the whole story. The import graph comes from TypeScript's own scanner.
//   node scripts/backend-dependent-tests.mjs     # prints them, one per line
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** @returns {string[]} */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The repository's TypeScript modules that `file` imports (static and dynamic imports, re-exports). */
function importsOf(file) {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
    .filter((path) => existsSync(path));
}

/** Test files of `repo` that reach test/support/backend.ts through their imports, relative to `repo`, sorted. */
export function backendDependentTests(repo = REPO) {
  // Every module the test files reach, with the modules that import it; then a walk back from the switch.
  /** @type {Map<string, string[]>} */
  const importers = new Map();
  const tests = testFiles(join(repo, 'test'));
  const pending = [...tests];
  const seen = new Set(pending);
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const imported of importsOf(file)) {
      importers.set(imported, [...(importers.get(imported) ?? []), file]);
      if (!seen.has(imported)) {
        seen.add(imported);
        pending.push(imported);
      }
    }
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
