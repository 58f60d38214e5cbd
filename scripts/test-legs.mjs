// The legs of the suite, computed from what each test file and the modules it imports do
// (scripts/test-imports.mjs), never from a list kept by hand. docs/development.md ("Test legs") has
// the rules and what runs each leg:
//   unit      every file that is not end-to-end                                    npm run test:unit
//   e2e       files that start the service in their process, a child process or Chromium   npm run test:e2e
//   bench     the benchmarks' smoke run, end-to-end but a leg of its own              npm run test:bench-smoke
//   node24    files that use what can differ between runtimes, in the test's own process   npm run test:node24
//   postgres  the backend-dependent files, but PostgreSQL's own suites             npm run test:postgres
//   image, cluster   their folders, which need root and container tools           npm run test:image, test:cluster
// `npm test` runs unit, e2e and bench together (.mocharc.json: every file but image/ and cluster/).
//   node scripts/test-legs.mjs LEG      # a leg's files, one per line
//   node scripts/test-legs.mjs --check  # every test file in a leg, none in both unit and e2e; the sizes
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { backendDependentTests } from './backend-dependent-tests.mjs';
import { importGraph, reachable, testFiles } from './test-imports.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Folders with a leg of their own (root, podman, a cluster): `npm test` leaves them out. */
export const SEPARATE_LEGS = { image: 'test/image', cluster: 'test/cluster' };

/** What makes a file end-to-end when a test-side module imports it. */
const STARTERS = new Set(['child_process', 'playwright-core']);
/** The service, whole, in the test's own process: its composition (src/main.ts only adds the signals). */
const SERVICE = 'src/service/start-service.ts';
/** The test modules that start PostgreSQL servers (postgres-database.ts on a test's first request for a database). */
const POSTGRES_SERVER = new Set(['test/support/postgres.ts', 'test/support/postgres-database.ts']);
/**
 * The backend switch. It, and every test module that chooses through it, asks PostgreSQL's modules for
 * a server only on the PostgreSQL pass: through them, those modules make no file end-to-end.
 */
const BACKEND_SWITCH = 'test/support/backend.ts';

/** Modules whose behaviour belongs to the runtime: compiled against it, or its threads, network and crypto. */
const RUNTIME_DEPENDENT = new Set(['better-sqlite3', 'worker_threads', '@kubernetes/client-node', 'http', 'https', 'http2', 'net', 'tls', 'crypto', 'jose', 'pg', 'playwright-core']);

/**
 * What runs Node or a browser beside the test: the service, a replica, a CLI or a benchmark as a child
 * process of `process.execPath`, or Chromium. On Node 24 that is the image and cluster legs' work: they
 * run the service as the image ships it. Here they would repeat the slowest half of the e2e leg.
 */
const BESIDE = new Set(['playwright-core']);

/**
 * The benchmarks' smoke run, end-to-end but a leg of its own: 8 of the e2e leg's 20 minutes (every
 * benchmark at its small scale; warm CI, 2026-12-02), and it holds the machine to no time, so CI runs
 * it beside the in-process legs while the rest of the e2e leg runs alone.
 */
const BENCHMARKS_SMOKE = 'test/bench/quick-run.test.ts';

/** PostgreSQL's own suites use their own databases whatever the switch says; `npm test` runs them already. */
const isPostgresOwn = (file) => file.startsWith('test/ha/') || file.startsWith('test/store/postgres/');

/** This repository's legs, once per process: its files do not change while a run loads. */
let ours;

/** Every leg's files of `repo` (default: this repository), relative to it, sorted. */
export function testLegs(repo = REPO) {
  if (repo !== REPO) return legsOf(repo);
  ours ??= legsOf(REPO);
  return ours;
}

function legsOf(repo) {
  const rel = (path) => relative(repo, path);
  const inFolder = (folder) => (file) => rel(file).startsWith(`${folder}/`);
  const separate = (file) => Object.values(SEPARATE_LEGS).some((folder) => inFolder(folder)(file));
  const all = testFiles(join(repo, 'test')).sort();
  const graph = importGraph(all);
  const testSide = (path) => !rel(path).startsWith('src/');
  const values = (path) => (graph.get(path)?.packages ?? []).filter((p) => !p.typeOnly).map((p) => p.specifier);

  const choosesBackend = (path) => rel(path) === BACKEND_SWITCH || (graph.get(path)?.modules ?? []).some((edge) => rel(edge.path) === BACKEND_SWITCH);
  // Through test-side modules (nothing under src/ starts a process) and into the service's entry point.
  const endToEnd = (file) => {
    const follow = (edge, from) => !edge.typeOnly && (testSide(edge.path) || rel(edge.path) === SERVICE) && !(POSTGRES_SERVER.has(rel(edge.path)) && from !== file && choosesBackend(from));
    const reached = reachable(graph, file, follow);
    return [...reached].some((path) => rel(path) === SERVICE || (testSide(path) && values(path).some((name) => STARTERS.has(name))));
  };
  // Through every module, src/ included: the service's own use of the runtime is what is tested.
  const runtimeDependent = (file) => {
    const reached = reachable(graph, file, (edge) => !edge.typeOnly);
    return [...reached].some((path) => values(path).some((name) => RUNTIME_DEPENDENT.has(name)));
  };
  // Through test-side modules: what the test itself starts.
  const runsBeside = (file) => {
    const reached = reachable(graph, file, (edge) => !edge.typeOnly && testSide(edge.path));
    return [...reached].some((path) => testSide(path) && (graph.get(path)?.readsExecPath === true || values(path).some((name) => BESIDE.has(name))));
  };

  const suite = all.filter((file) => !separate(file));
  const e2e = new Set(suite.filter(endToEnd));
  return {
    unit: suite.filter((file) => !e2e.has(file)).map(rel),
    e2e: [...e2e].map(rel).filter((file) => file !== BENCHMARKS_SMOKE),
    bench: [...e2e].map(rel).filter((file) => file === BENCHMARKS_SMOKE),
    node24: suite.filter((file) => runtimeDependent(file) && !runsBeside(file)).map(rel),
    postgres: backendDependentTests(repo, graph).filter((file) => !isPostgresOwn(file)),
    image: all.filter(inFolder(SEPARATE_LEGS.image)).map(rel),
    cluster: all.filter(inFolder(SEPARATE_LEGS.cluster)).map(rel),
  };
}

/**
 * The legs, with the test files no leg runs and the files both unit and e2e would run: both empty when
 * the legs are sound (no test lost, none run twice on Node 20).
 */
export function checkedLegs(repo = REPO) {
  const legs = testLegs(repo);
  const ran = new Set([...legs.unit, ...legs.e2e, ...legs.bench, ...legs.image, ...legs.cluster]);
  const e2e = new Set(legs.e2e);
  return {
    legs,
    inNoLeg: testFiles(join(repo, 'test')).map((file) => relative(repo, file)).filter((file) => !ran.has(file)).sort(),
    inUnitAndE2e: legs.unit.filter((file) => e2e.has(file)),
  };
}

/** The spec reporter that also names the pending tests in $GPUCAP_PENDING_REPORT (CI: scripts/ci/pending-check.mjs). */
const PENDING_REPORTER = join(REPO, 'scripts/ci/pending-reporter.mjs');

/**
 * A mocha config for `leg`: .mocharc.json's settings with the leg's files as its spec, and with
 * GPUCAP_PENDING_REPORT set, the reporter that writes the leg's pending tests there.
 */
export function mochaConfig(leg, overrides = {}) {
  const base = JSON.parse(readFileSync(join(REPO, '.mocharc.json'), 'utf8'));
  const reporter = (process.env.GPUCAP_PENDING_REPORT ?? '') === '' ? {} : { reporter: PENDING_REPORTER };
  return { ...base, ...reporter, spec: [...testLegs()[leg]], ...overrides };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [leg] = process.argv.slice(2);
  if (leg === '--check') {
    const { legs, inNoLeg, inUnitAndE2e } = checkedLegs();
    process.stdout.write(`${Object.entries(legs).map(([name, files]) => `${name}: ${files.length} files`).join(', ')}\n`);
    for (const file of inNoLeg) process.stdout.write(`in no leg: ${file}\n`);
    for (const file of inUnitAndE2e) process.stdout.write(`in both unit and e2e: ${file}\n`);
    process.exit(inNoLeg.length + inUnitAndE2e.length === 0 ? 0 : 1);
  }
  const legs = testLegs();
  const files = leg === undefined ? undefined : legs[leg];
  if (files === undefined) {
    process.stderr.write(`usage: node scripts/test-legs.mjs ${Object.keys(legs).join('|')}|--check\n`);
    process.exit(2);
  }
  process.stdout.write(`${files.join('\n')}\n`);
}
