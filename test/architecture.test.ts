// Keeps the layering of STYLE.md ("A layout that shows the flows") true: reads the imports of every
// .ts file under src/ (static imports, `export ... from`, dynamic `import('...')`, `import('...')`
// types and `require('...')`) with the TypeScript parser, and checks each rule on them; and the same
// of bench/, for what the benchmarks may import of the service.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';
import { importTangles, shortestCircle } from './support/import-circles.js';

/** One import found in a source file. Paths are relative to the repository root, with `/`. */
export interface ImportRef {
  /** The importing file, e.g. `src/api/app.ts`. */
  file: string;
  line: number;
  /** The specifier as written, e.g. `../store/database.js` or `koa`. */
  specifier: string;
  /** A relative import resolved to a repository path (`src/store/database.ts`), else the package name. */
  target: string;
}

/** A source file and its imports. */
export interface SourceModule {
  file: string;
  imports: ImportRef[];
}

export interface ArchitectureRule {
  title: string;
  /** One line per violation, naming the file and the import. */
  check(modules: readonly SourceModule[]): string[];
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The package an import names: `@koa/router/x` → `@koa/router`, `koa` → `koa`, `node:fs` → `node:fs`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Resolves a relative specifier to a repository path; `.js` (as NodeNext imports are written) → `.ts`. */
function resolveTarget(file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return packageName(specifier);
  return posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.(m|c)?js$/, '.$1ts');
}

/** The imports of one file's text. `file` is its repository path, used to resolve relative imports. */
export function parseImports(file: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ImportRef[] = [];
  const add = (node: ts.Node, literal: ts.Node | undefined): void => {
    if (literal === undefined || !ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ file, line, specifier: literal.text, target: resolveTarget(file, literal.text) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression);
    } else if (ts.isCallExpression(node)) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (isImport || isRequire) add(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The .ts files under `dir`, as repository paths. Dot-folders are left out: bench/.cache holds the
 * benchmarks' generated indexes and PostgreSQL servers, thousands of files and none of them code.
 */
function tsFilesUnder(root: string, dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return tsFilesUnder(root, path);
      return entry.isFile() && entry.name.endsWith('.ts') ? [relative(root, path).split(sep).join('/')] : [];
    });
}

/** Every .ts file under `root/<folder>` (src/ unless told), with its imports. */
export function readSourceModules(root: string, folder = 'src'): SourceModule[] {
  return tsFilesUnder(root, join(root, folder))
    .sort()
    .map((file) => ({ file, imports: parseImports(file, readFileSync(join(root, file), 'utf8')) }));
}

const isRelative = (ref: ImportRef): boolean => ref.specifier.startsWith('.');
const inFolder = (path: string, folder: string): boolean => path.startsWith(`${folder}/`);
const describeRef = (ref: ImportRef): string => `${ref.file}:${ref.line} imports '${ref.specifier}' (${ref.target})`;

/** Violations: imports made by files in `folder` for which `allowed` is false. */
function importsFrom(folder: string, allowed: (ref: ImportRef) => boolean, options: { except?: readonly string[] } = {}): ArchitectureRule['check'] {
  const excepted = (file: string) => (options.except ?? []).some((path) => file === path || inFolder(file, path));
  return (modules) =>
    modules
      .filter((module) => inFolder(module.file, folder) && !excepted(module.file))
      .flatMap((module) => module.imports.filter((ref) => !allowed(ref)).map(describeRef));
}

/** Relative imports that stay in src/ and land in one of `folders` (or are one of `files`). */
function srcImportWithin(folders: readonly string[], files: readonly string[] = []): (ref: ImportRef) => boolean {
  return (ref) =>
    !isRelative(ref) ||
    !inFolder(ref.target, 'src') ||
    folders.some((folder) => inFolder(ref.target, folder)) ||
    files.includes(ref.target);
}

/** Whether `ref` imports one of `packages` (a name ending in `/` is a scope: `@koa/` is any `@koa/*`). */
function importsPackage(ref: ImportRef, packages: readonly string[]): boolean {
  return (
    !isRelative(ref) && packages.some((name) => (name.endsWith('/') ? ref.target.startsWith(name) : ref.target === name))
  );
}

/** Violations: imports of any of `packages` from files outside the `owners` folders. */
function packageOnlyIn(packages: readonly string[], owners: readonly string[]): ArchitectureRule['check'] {
  return (modules) =>
    modules
      .filter((module) => !owners.some((owner) => inFolder(module.file, owner)))
      .flatMap((module) => module.imports.filter((ref) => importsPackage(ref, packages)).map(describeRef));
}

const HTTP_PACKAGES = ['koa', '@koa/'];
const K8S_PACKAGES = ['@kubernetes/client-node'];

/** The budget arithmetic of src/capacity/ (periods, used and remaining, forecasts), which the capacity read calls. */
const BUDGET_ARITHMETIC = ['src/capacity/budget-period.ts', 'src/capacity/budget-forecast.ts', 'src/capacity/budget-figures.ts'];

/** The flows of the service: each takes events or scrapes in and hands its results to the store or the read side. */
const FLOW_FOLDERS = ['src/workloads', 'src/telemetry', 'src/capacity', 'src/ha', 'src/fleet'];

/**
 * What the flows share instead of importing each other: plain types and helpers (src/domain,
 * src/k8s/objects, and how GPUs are shared in src/k8s/gpus), what a role may see (src/access), the read side's ports and the store's writer
 * port (src/store/ports.ts, which the store's renovation adds).
 */
const SHARED_LEAVES = { folders: ['src/domain', 'src/k8s/objects', 'src/k8s/gpus', 'src/access'], files: ['src/query/ports.ts', 'src/store/ports.ts'] };

/** The store's writer port is a leaf: types and the forwarding of its methods, over domain types only. */
const STORE_PORTS = 'src/store/ports.ts';

const flowImportsOnlyLeaves = (flow: string, extraFiles: readonly string[] = []): ((ref: ImportRef) => boolean) =>
  srcImportWithin([...SHARED_LEAVES.folders, flow], [...SHARED_LEAVES.files, ...extraFiles]);

/** Folders whose files may decide or carry what a role may see (src/access/), besides src/main.ts. */
const ACCESS_IMPORTERS = ['src/access', 'src/query', 'src/api', 'src/auth', 'src/cli', 'src/store', ...FLOW_FOLDERS];

/** Circles of imports allowed, each by the exact set of files that import each other: none. */
const ALLOWED_CIRCLES: readonly (readonly string[])[] = [];

/** The store's modules that pick a driver, and the backend's parts that name both drivers' types. */
const STORE_CHOOSER = ['src/store/backend.ts', 'src/store/index-backend.ts'];

/** What the project's tools take of the store below its ports, from both drivers (its header says why). */
const STORE_TOOLING = 'src/store/tooling.ts';

/** What bench/ may import of src/store/: the store's public entry points and its tooling module. */
const STORE_FOR_BENCH = [...STORE_CHOOSER, STORE_PORTS, STORE_TOOLING];

/** A group of files that import each other, as its shortest circle (`file:line` of each import in turn) and the rest. */
function describeTangle(modules: readonly SourceModule[], tangle: readonly string[]): string {
  const circle = shortestCircle(modules, tangle);
  const path = [...circle.map((step) => `${step.file}:${step.line}`), tangle[0]].join(' → ');
  const others = tangle.filter((file) => !circle.some((step) => step.file === file));
  return others.length === 0 ? path : `${path} (and ${others.length} more files that import each other with these: ${others.join(', ')})`;
}

const sameFiles = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((file) => b.includes(file));

/** Violations: each group of files that import each other, unless it is one of `allowed`. */
function importCircles(allowed: readonly (readonly string[])[]): ArchitectureRule['check'] {
  return (modules) =>
    importTangles(modules)
      .filter((tangle) => !allowed.some((files) => sameFiles(files, tangle)))
      .map((tangle) => describeTangle(modules, tangle));
}

export const architectureRules: readonly ArchitectureRule[] = [
  {
    title: 'src/domain/ imports nothing from other src/ folders',
    check: importsFrom('src/domain', srcImportWithin(['src/domain'])),
  },
  {
    // runtime/worker-entry.ts (how a worker thread starts, from source or compiled) and
    // runtime/thread-priority.ts (renicing a thread) are leaf modules that the index's workers and the
    // watch decoder share. The store narrows reads to a caller's scope (src/access/).
    title: 'src/store/ imports only src/domain, src/access, src/query/ports.ts, src/runtime/{worker-entry,thread-priority}.ts and itself',
    check: importsFrom(
      'src/store',
      srcImportWithin(['src/domain', 'src/access', 'src/store'], ['src/query/ports.ts', 'src/runtime/worker-entry.ts', 'src/runtime/thread-priority.ts']),
    ),
  },
  {
    // The store by concern: the reads, the writer, the SQL of statistics and rankings, rows and
    // rollups are written once, over the dialect and the executor; the backends are drivers of them.
    title: 'the store\'s shared rooms (everything but src/store/sqlite/ and src/store/postgres/) import no driver and no package',
    check: importsFrom(
      'src/store',
      (ref) => !(isRelative(ref) && (inFolder(ref.target, 'src/store/sqlite') || inFolder(ref.target, 'src/store/postgres'))) && isRelative(ref),
      { except: ['src/store/sqlite', 'src/store/postgres', ...STORE_CHOOSER, STORE_TOOLING] },
    ),
  },
  {
    title: 'src/store/sqlite/ and src/store/postgres/ do not import each other',
    check: (modules) =>
      modules.flatMap((module) => {
        const other = inFolder(module.file, 'src/store/sqlite') ? 'src/store/postgres' : inFolder(module.file, 'src/store/postgres') ? 'src/store/sqlite' : null;
        if (other === null) return [];
        return module.imports.filter((ref) => isRelative(ref) && inFolder(ref.target, other)).map(describeRef);
      }),
  },
  {
    // The API's error contract: its codes are HTTP statuses and its errors carry response headers.
    // The store throws its own errors, which the API maps (src/api/middleware/error-envelope.ts).
    title: 'src/store/ does not import the API error contract (src/domain/errors.ts: ApiError)',
    check: importsFrom('src/store', (ref) => ref.target !== 'src/domain/errors.ts'),
  },
  {
    // The rollup math both backends share (issue 17): pure numbers, no driver; the queue columns'
    // SQL that migrations wrote is rendered by the dialect.
    title: 'src/store/rollups/ imports only src/domain, src/store/sql/dialect.ts and itself, and no package',
    check: importsFrom(
      'src/store/rollups',
      (ref) => srcImportWithin(['src/domain', 'src/store/rollups'], ['src/store/sql/dialect.ts'])(ref) && isRelative(ref),
    ),
  },
  {
    // The flows import the writer port, so it brings nothing of the store with it.
    title: 'src/store/ports.ts imports only src/domain, and no package',
    check: (modules) =>
      modules
        .filter((module) => module.file === STORE_PORTS)
        .flatMap((module) => module.imports.filter((ref) => !isRelative(ref) || !inFolder(ref.target, 'src/domain')).map(describeRef)),
  },
  {
    // `gpucap migrate` reads one backend and writes the other, so it may import both, but their
    // drivers only through them: no package here but Node's built-ins.
    title: 'src/cli/migrate/ imports only src/domain, src/config, src/query/ports.ts, src/store and itself, and only node: built-ins',
    check: importsFrom(
      'src/cli/migrate',
      (ref) =>
        srcImportWithin(['src/domain', 'src/config', 'src/store', 'src/cli/migrate'], ['src/query/ports.ts'])(ref) &&
        (isRelative(ref) || ref.target.startsWith('node:')),
    ),
  },
  {
    // An operator's tool beside the service, not a part of it: the service never copies an index.
    title: 'only src/cli/gpucap.ts imports src/cli/migrate/ (from outside it)',
    check: (modules) =>
      modules
        .filter((module) => module.file !== 'src/cli/gpucap.ts' && !inFolder(module.file, 'src/cli/migrate'))
        .flatMap((module) => module.imports.filter((ref) => isRelative(ref) && inFolder(ref.target, 'src/cli/migrate')).map(describeRef)),
  },
  {
    title: 'there are no circles of imports under src/ (type imports included)',
    check: importCircles(ALLOWED_CIRCLES),
  },
  {
    title: 'the flow folders (workloads, telemetry, capacity, ha, fleet) import no other flow folder, only the shared leaves',
    check: (modules) =>
      modules.flatMap((module) => {
        const flow = FLOW_FOLDERS.find((folder) => inFolder(module.file, folder));
        if (flow === undefined) return [];
        return module.imports.filter((ref) => !flowImportsOnlyLeaves(flow)(ref)).map(describeRef);
      }),
  },
  {
    title: 'src/workloads/ (pure mappers) imports only the shared leaves and itself, and only node: built-ins',
    check: importsFrom('src/workloads', (ref) => flowImportsOnlyLeaves('src/workloads')(ref) && (isRelative(ref) || ref.target.startsWith('node:'))),
  },
  {
    title: 'src/telemetry/ imports only the shared leaves and itself, and only node: built-ins',
    check: importsFrom(
      'src/telemetry',
      (ref) => flowImportsOnlyLeaves('src/telemetry')(ref) && (isRelative(ref) || ref.target.startsWith('node:')),
    ),
  },
  {
    title: 'src/capacity/ imports only the shared leaves and itself, and no Kubernetes, HTTP or SQL package',
    check: importsFrom(
      'src/capacity',
      (ref) =>
        flowImportsOnlyLeaves('src/capacity')(ref) &&
        !importsPackage(ref, [...HTTP_PACKAGES, 'better-sqlite3', ...K8S_PACKAGES]),
    ),
  },
  {
    // What the read side calls of the capacity flow: plain arithmetic, so that a read brings in neither
    // the ConfigMap source nor the capacity.yaml parser and its packages.
    title: 'the budget arithmetic (src/capacity/budget-{period,forecast,figures}.ts) imports only src/domain and itself, and no package',
    check: (modules) =>
      modules
        .filter((module) => BUDGET_ARITHMETIC.includes(module.file))
        .flatMap((module) =>
          module.imports.filter((ref) => !isRelative(ref) || !(inFolder(ref.target, 'src/domain') || BUDGET_ARITHMETIC.includes(ref.target))).map(describeRef),
        ),
  },
  {
    title: 'src/ha/ imports only the shared leaves and itself, and only node: built-ins',
    check: importsFrom('src/ha', (ref) => flowImportsOnlyLeaves('src/ha')(ref) && (isRelative(ref) || ref.target.startsWith('node:'))),
  },
  {
    // What each role may see: who the caller is (src/access/principal.ts) and the filters it may run
    // (src/access/scoped-filter.ts), in one place, beside the domain.
    title: 'src/access/ imports only src/domain, src/query/ports.ts (the filter it narrows) and itself, and no package',
    check: importsFrom('src/access', (ref) => srcImportWithin(['src/domain', 'src/access'], ['src/query/ports.ts'])(ref) && isRelative(ref)),
  },
  {
    // The read side scopes every read; the API and the authenticators make the principal, the token CLI
    // mints one; the store and the flows may carry a Scope (a filter's). Nothing else decides what a role sees.
    title: 'only src/query, src/api, src/auth, src/cli, src/store, the flow folders and src/main.ts import src/access/',
    check: (modules) =>
      modules
        .filter((module) => module.file !== 'src/main.ts' && !ACCESS_IMPORTERS.some((folder) => inFolder(module.file, folder)))
        .flatMap((module) => module.imports.filter((ref) => isRelative(ref) && inFolder(ref.target, 'src/access')).map(describeRef)),
  },
  {
    // Kubernetes objects as plain types, their watch events and the pure helpers over them, which every
    // flow reads: no package at all (not even node:), so that importing it brings neither a client nor I/O.
    title: 'src/k8s/objects/ imports only itself, and no package',
    check: importsFrom('src/k8s/objects', (ref) => isRelative(ref) && inFolder(ref.target, 'src/k8s/objects')),
  },
  {
    // What a pod holds of a GPU, from its node's GPU feature discovery labels and its schedulers'
    // annotations: pure rules over the plain objects, which the workloads and telemetry flows both read.
    title: 'src/k8s/gpus/ imports only itself, src/k8s/objects and src/domain, and no package',
    check: importsFrom('src/k8s/gpus', (ref) => isRelative(ref) && ['src/k8s/gpus', 'src/k8s/objects', 'src/domain'].some((folder) => inFolder(ref.target, folder))),
  },
  {
    title: 'only src/store/sqlite/ imports better-sqlite3',
    check: packageOnlyIn(['better-sqlite3'], ['src/store/sqlite']),
  },
  {
    title: 'only src/store/postgres/ imports pg',
    check: packageOnlyIn(['pg'], ['src/store/postgres']),
  },
  {
    title: 'src/query/ imports only src/domain, src/access, the budget arithmetic of src/capacity/ and itself, and knows neither HTTP nor SQL nor Kubernetes',
    check: importsFrom(
      'src/query',
      (ref) =>
        srcImportWithin(['src/domain', 'src/access', 'src/query'], BUDGET_ARITHMETIC)(ref) &&
        !importsPackage(ref, [...HTTP_PACKAGES, 'better-sqlite3', ...K8S_PACKAGES]),
    ),
  },
  {
    // The capacity figures are presented as src/capacity/budget-figures.ts defines them.
    title: 'src/api/ imports only src/query, src/domain, src/access, src/capacity/budget-figures.ts and itself',
    check: importsFrom('src/api', srcImportWithin(['src/query', 'src/domain', 'src/access', 'src/api'], ['src/capacity/budget-figures.ts'])),
  },
  {
    // The kubectl plugin talks to the service over HTTP like any client; it shares only the CSV
    // writer and reaches Kubernetes through the one port-forward module.
    title: 'src/cli/kubectl/ imports only itself, src/api/csv/csv-text.ts and src/k8s/service-port-forward.ts, and only node: built-ins and yaml',
    check: importsFrom(
      'src/cli/kubectl',
      (ref) =>
        srcImportWithin(['src/cli/kubectl'], ['src/api/csv/csv-text.ts', 'src/k8s/service-port-forward.ts'])(ref) &&
        (isRelative(ref) || ref.target.startsWith('node:') || ref.target === 'yaml'),
    ),
  },
  {
    title: 'only src/k8s/ imports @kubernetes/client-node',
    check: packageOnlyIn(K8S_PACKAGES, ['src/k8s']),
  },
  {
    title: 'only src/api/ and src/admin/ import koa and @koa/*',
    check: packageOnlyIn(HTTP_PACKAGES, ['src/api', 'src/admin']),
  },
  {
    title: 'nothing under src/ imports from test/, sim/, bench/, scripts/ or console/ (the service serves the console\'s build, never its code)',
    check: (modules) =>
      modules.flatMap((module) =>
        module.imports
          .filter((ref) => isRelative(ref) && ['test', 'sim', 'bench', 'scripts', 'console'].some((folder) => inFolder(ref.target, folder)))
          .map(describeRef),
      ),
  },
  {
    // The tools' way below the store's ports: the service goes through the ports and openBackend.
    title: 'nothing under src/ imports src/store/tooling.ts (the project\'s tools take the store below its ports there)',
    check: (modules) => modules.flatMap((module) => module.imports.filter((ref) => ref.target === STORE_TOOLING).map(describeRef)),
  },
  {
    title: 'there are no index.ts barrel files under src/',
    check: (modules) =>
      modules.filter((module) => posix.basename(module.file) === 'index.ts').map((module) => `${module.file} is a barrel file`),
  },
];

/** Rules over the imports of bench/ (the benchmarks and their libraries), checked like those of src/. */
export const benchRules: readonly ArchitectureRule[] = [
  {
    // A benchmark measures the service through its public entry points; what it must do below the
    // ports it takes from the store's tooling module, so that the store's folders can move without
    // touching bench/. src/cli/migrate (the `gpucap migrate` tool) and the other folders are not the store.
    title: 'bench/ imports src/store/ only through backend.ts, index-backend.ts, ports.ts and tooling.ts',
    check: importsFrom('bench', (ref) => !isRelative(ref) || !inFolder(ref.target, 'src/store') || STORE_FOR_BENCH.includes(ref.target)),
  },
];

function expectNoViolations(rule: ArchitectureRule, modules: readonly SourceModule[]): void {
  const violations = rule.check(modules);
  expect(violations, `${rule.title}, but:\n  ${violations.join('\n  ')}\n`).to.deep.equal([]);
}

describe('architecture (STYLE.md layering)', () => {
  const modules = readSourceModules(repoRoot);
  const benchModules = readSourceModules(repoRoot, 'bench');

  it('finds the source files under src/ and their imports', () => {
    expect(modules.length, 'no .ts file found under src/').to.be.greaterThan(0);
    expect(modules.flatMap((module) => module.imports).length, 'no import found under src/').to.be.greaterThan(0);
  });

  it('finds the files under bench/ and their imports of src/store/ (what its rule checks)', () => {
    expect(benchModules.map((module) => module.file)).to.include.members(['bench/run.ts', 'bench/workloads-api.ts', 'bench/lib/postgres/dataset.ts']);
    const storeImports = benchModules.flatMap((module) => module.imports).filter((ref) => inFolder(ref.target, 'src/store'));
    expect(storeImports.length, 'no import of src/store/ found under bench/').to.be.greaterThan(0);
  });

  for (const rule of architectureRules) {
    it(rule.title, () => expectNoViolations(rule, modules));
  }

  for (const rule of benchRules) {
    it(rule.title, () => expectNoViolations(rule, benchModules));
  }

  it('each allowed circle of imports still exists (once it is broken, remove it from ALLOWED_CIRCLES)', () => {
    const tangles = importTangles(modules);
    const gone = ALLOWED_CIRCLES.filter((files) => !tangles.some((tangle) => sameFiles(files, tangle)));
    expect(gone, 'allowed, but no longer a circle').to.deep.equal([]);
  });

  it("console/src/ (the web console) imports only itself and uplot: it reads the API over HTTP, never the service's code", () => {
    const dir = join(repoRoot, 'console', 'src');
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)).split(sep).join('/'));
    expect(files.length).to.be.greaterThan(10);
    const outside = files.flatMap((file) =>
      parseImports(file, readFileSync(join(repoRoot, file), 'utf8'))
        .filter((ref) => (isRelative(ref) ? !inFolder(ref.target, 'console') : !ref.target.startsWith('uplot')))
        .map(describeRef),
    );
    expect(outside).to.deep.equal([]);
  });

  describe('the checker itself', () => {
    const rule = (title: string): ArchitectureRule => {
      const found = [...architectureRules, ...benchRules].find((candidate) => candidate.title.startsWith(title));
      if (found === undefined) throw new Error(`No rule titled "${title}"`);
      return found;
    };
    const module = (file: string, ...specifiers: string[]): SourceModule => ({
      file,
      imports: specifiers.map((specifier, index) => ({
        file,
        line: index + 1,
        specifier,
        target: resolveTarget(file, specifier),
      })),
    });

    it('parses static, type-only, re-export, dynamic, import-type and require imports, not comments or strings', () => {
      const text = [
        "import { a } from './a.js';",
        "import type { B } from '../domain/b.js';",
        "export { c } from '@koa/router';",
        "export * from 'node:fs';",
        "const d = await import('../store/d.js');",
        "type E = import('koa').Context;",
        "const f = require('better-sqlite3');",
        "// import { g } from '../k8s/g.js';",
        "const h = \"import('../k8s/h.js')\";",
      ].join('\n');
      const refs = parseImports('src/query/x.ts', text);
      expect(refs.map((ref) => [ref.line, ref.specifier, ref.target])).to.deep.equal([
        [1, './a.js', 'src/query/a.ts'],
        [2, '../domain/b.js', 'src/domain/b.ts'],
        [3, '@koa/router', '@koa/router'],
        [4, 'node:fs', 'node:fs'],
        [5, '../store/d.js', 'src/store/d.ts'],
        [6, 'koa', 'koa'],
        [7, 'better-sqlite3', 'better-sqlite3'],
      ]);
    });

    const cases: Array<{ rule: string; bad: SourceModule; good: SourceModule }> = [
      {
        rule: 'src/domain/',
        bad: module('src/domain/workload.ts', '../query/ports.js'),
        good: module('src/domain/workload.ts', './time.js', 'node:crypto'),
      },
      {
        rule: 'src/access/ imports only',
        bad: module('src/access/scoped-filter.ts', '../query/cursor.js'),
        good: module('src/access/scoped-filter.ts', '../query/ports.js', '../domain/errors.js', './principal.js'),
      },
      {
        rule: 'only src/query, src/api, src/auth, src/cli, src/store, the flow folders and src/main.ts import src/access/',
        bad: module('src/admin/readiness.ts', '../access/principal.js'),
        good: module('src/auth/authenticator.ts', '../access/principal.js'),
      },
      {
        rule: 'src/store/ imports only',
        bad: module('src/store/reads.ts', '../query/cursor.js'),
        good: module('src/store/reads.ts', '../query/ports.js', '../domain/workload.js', './sql.js', 'better-sqlite3'),
      },
      {
        rule: 'the store\'s shared rooms',
        bad: module('src/store/statistics/stats-queries.ts', '../sqlite/statement-cache.js'),
        good: module('src/store/statistics/stats-queries.ts', '../sql/dialect.js', '../../query/ports.js', '../../domain/workload.js'),
      },
      {
        rule: 'src/store/ports.ts imports only',
        bad: module('src/store/ports.ts', './sqlite/executor.js'),
        good: module('src/store/ports.ts', '../domain/workload.js'),
      },
      {
        rule: 'src/store/sqlite/ and src/store/postgres/',
        bad: module('src/store/postgres/write-driver.ts', '../sqlite/statement-cache.js'),
        good: module('src/store/postgres/write-driver.ts', './connection.js', '../writes/write-driver.js', 'pg'),
      },
      {
        rule: 'src/store/ does not import the API error contract',
        bad: module('src/store/read-pool.ts', '../domain/errors.js'),
        good: module('src/store/read-pool.ts', './read-protocol.js', '../domain/workload.js', '../query/ports.js'),
      },
      {
        rule: 'the flow folders',
        bad: module('src/capacity/configmap-budgets.ts', '../workloads/mapping/mapping-context.js'),
        good: module('src/telemetry/scrape/pod-directory.ts', '../../k8s/objects/owner.js', '../../query/ports.js', '../../access/principal.js', './exporter-target.js'),
      },
      {
        rule: 'src/telemetry/',
        bad: module('src/telemetry/sampler.ts', '../store/lifetime-store.js'),
        good: module('src/telemetry/sampler.ts', '../domain/metrics.js', '../query/ports.js', '../k8s/objects/owner.js', './rings.js', 'node:http'),
      },
      {
        rule: 'src/capacity/',
        bad: module('src/capacity/source.ts', '@kubernetes/client-node'),
        good: module('src/capacity/source.ts', '../domain/errors.js', '../query/ports.js', './capacity-file.js', 'yaml', 'ajv'),
      },
      {
        rule: 'the budget arithmetic',
        bad: module('src/capacity/budget-figures.ts', './configmap-budgets.js'),
        good: module('src/capacity/budget-period.ts', '../domain/capacity-budget.js', './budget-forecast.js'),
      },
      {
        rule: 'src/ha/',
        bad: module('src/ha/cluster-writers.ts', '../store/postgres/lease.js'),
        good: module('src/ha/cluster-writers.ts', './ports.js', '../domain/clock.js', '../store/ports.js'),
      },
      {
        rule: 'src/k8s/objects/',
        bad: module('src/k8s/objects/k8s-types.ts', '../kube-object.js'),
        good: module('src/k8s/objects/owner.ts', './k8s-types.js'),
      },
      {
        rule: 'only src/store/sqlite/ imports better-sqlite3',
        bad: module('src/store/postgres/database.ts', 'better-sqlite3'),
        good: module('src/store/sqlite/database.ts', 'better-sqlite3'),
      },
      {
        rule: 'only src/store/postgres/ imports pg',
        bad: module('src/store/sqlite/database.ts', 'pg'),
        good: module('src/store/postgres/database.ts', 'pg'),
      },
      {
        rule: 'src/query/',
        bad: module('src/query/list.ts', 'koa'),
        good: module('src/query/list.ts', './ports.js', '../domain/errors.js'),
      },
      {
        rule: 'src/store/rollups/',
        bad: module('src/store/rollups/deltas.ts', '../sqlite/statement-cache.js'),
        good: module('src/store/rollups/deltas.ts', './figures.js', '../sql/dialect.js', '../../domain/workload.js'),
      },
      {
        rule: 'src/cli/migrate/ imports only',
        bad: module('src/cli/migrate/source.ts', 'better-sqlite3'),
        good: module('src/cli/migrate/source.ts', '../../store/sqlite/database.js', '../../store/postgres/partitions.js', './errors.js', 'node:fs'),
      },
      {
        rule: 'only src/cli/gpucap.ts imports src/cli/migrate/',
        bad: module('src/main.ts', './cli/migrate/migrate-index.js'),
        good: module('src/cli/gpucap.ts', './migrate/migrate-index.js'),
      },
      {
        rule: 'src/workloads/',
        bad: module('src/workloads/map-pod.ts', '@kubernetes/client-node'),
        good: module('src/workloads/map-pod.ts', './gpu-request.js', '../domain/workload.js'),
      },
      {
        rule: 'src/api/',
        bad: module('src/api/routes/workloads.ts', '../../store/workload-store.js'),
        good: module('src/api/routes/workloads.ts', '../../query/list-workloads.js', '../../domain/errors.js', 'koa'),
      },
      {
        rule: 'only src/k8s/',
        bad: module('src/query/x.ts', '@kubernetes/client-node'),
        good: module('src/k8s/clusters.ts', '@kubernetes/client-node'),
      },
      {
        rule: 'only src/api/ and src/admin/',
        bad: module('src/store/x.ts', '@koa/router'),
        good: module('src/admin/admin-app.ts', 'koa', '@koa/router'),
      },
      {
        rule: 'nothing under src/',
        bad: module('src/main.ts', '../sim/cluster.js'),
        good: module('src/main.ts', './store/database.js'),
      },
      {
        rule: 'there are no index.ts',
        bad: module('src/query/index.ts'),
        good: module('src/query/list-workloads.ts'),
      },
      {
        rule: 'nothing under src/ imports src/store/tooling.ts',
        bad: module('src/service/index-backend.ts', '../store/tooling.js'),
        good: module('src/service/index-backend.ts', '../store/backend.js', '../store/index-backend.js'),
      },
      {
        rule: 'bench/ imports src/store/ only through',
        bad: module('bench/lib/postgres/dataset.ts', '../../../src/store/postgres/partitions.js'),
        good: module(
          'bench/lib/postgres/dataset.ts',
          '../../../src/store/tooling.js',
          '../../../src/store/backend.js',
          '../../../src/store/index-backend.js',
          '../../../src/store/ports.js',
          '../../../src/cli/migrate/chunk-writer.js',
          '../../../src/domain/workload.js',
          '../../data/generate-workloads.js',
          'pg',
        ),
      },
    ];
    for (const { rule: title, bad, good } of cases) {
      it(`"${rule(title).title}" reports ${bad.file} and passes ${good.file}`, () => {
        const violations = rule(title).check([bad, good]);
        expect(violations).to.have.length(1);
        expect(violations[0]).to.contain(bad.file);
        expect(violations[0]).to.contain(bad.imports[0]?.specifier ?? 'barrel');
      });
    }

    it('lets a flow import the store\'s writer port, and nothing of another flow', () => {
      const sideways = rule('the flow folders');
      expect(sideways.check([module('src/ha/ports.ts', '../store/ports.js')])).to.deep.equal([]);
      expect(sideways.check([module('src/ha/ports.ts', '../workloads/workload-sink.js')])).to.have.length(1);
      expect(sideways.check([module('src/telemetry/x.ts', '../workloads/workload-sink.js')])).to.have.length(1);
    });

    describe('"there are no circles of imports"', () => {
      const circles = rule('there are no circles of imports');

      it('reports a circle once, as the path from its first file back to it, with the line of each import', () => {
        const tangled = [
          module('src/query/c.ts', './a.js'),
          module('src/query/a.ts', '../domain/x.js', './b.js'),
          module('src/query/b.ts', './c.js'),
          module('src/query/d.ts', './a.js'),
          module('src/domain/x.ts'),
        ];
        expect(circles.check(tangled)).to.deep.equal(['src/query/a.ts:2 → src/query/b.ts:1 → src/query/c.ts:1 → src/query/a.ts']);
      });

      it('counts type imports, and names the other files of a tangle its shortest circle leaves out', () => {
        const refs = (file: string, text: string): SourceModule => ({ file, imports: parseImports(file, text) });
        const tangled = [
          refs('src/api/a.ts', "import type { B } from './b.js';\nimport type { C } from './c.js';"),
          refs('src/api/b.ts', "import { a } from './a.js';"),
          refs('src/api/c.ts', "type A = import('./b.js').B;"),
        ];
        expect(circles.check(tangled)).to.deep.equal([
          'src/api/a.ts:1 → src/api/b.ts:1 → src/api/a.ts (and 1 more files that import each other with these: src/api/c.ts)',
        ]);
      });

      it('passes imports that do not come back, and an allowed circle given by its exact files', () => {
        const chain = [module('src/query/a.ts', './b.js'), module('src/query/b.ts', './c.js'), module('src/query/c.ts', '../domain/x.js')];
        expect(circles.check(chain)).to.deep.equal([]);
        const allowedPair = [module('src/store/backend.ts', './sqlite/write-thread.js'), module('src/store/sqlite/write-thread.ts', '../backend.js')];
        expect(importCircles([['src/store/backend.ts', 'src/store/sqlite/write-thread.ts']])(allowedPair)).to.deep.equal([]);
        expect(importCircles([['src/store/backend.ts']])(allowedPair)).to.have.length(1);
      });
    });

    it('reports a violation in a real file tree, with the file, line and import', () => {
      const root = mkdtempSync(join(tmpdir(), 'gpucap-architecture-'));
      try {
        mkdirSync(join(root, 'src', 'api', 'routes'), { recursive: true });
        mkdirSync(join(root, 'src', 'domain'), { recursive: true });
        writeFileSync(join(root, 'src', 'domain', 'workload.ts'), 'export type Id = string;\n');
        writeFileSync(
          join(root, 'src', 'api', 'routes', 'bad.ts'),
          "import type { Id } from '../../domain/workload.js';\nimport { openDatabase } from '../../store/database.js';\n",
        );
        const found = readSourceModules(root);
        expect(found.map((each) => each.file)).to.deep.equal(['src/api/routes/bad.ts', 'src/domain/workload.ts']);
        expect(rule('src/api/').check(found)).to.deep.equal([
          "src/api/routes/bad.ts:2 imports '../../store/database.js' (src/store/database.ts)",
        ]);
        expect(rule('src/domain/').check(found)).to.deep.equal([]);

        mkdirSync(join(root, 'bench', 'lib'), { recursive: true });
        mkdirSync(join(root, 'bench', '.cache'), { recursive: true });
        writeFileSync(join(root, 'bench', 'lib', 'profile.ts'), "import { sqliteIndex } from '../../src/store/sqlite/connection-ports.js';\n");
        writeFileSync(join(root, 'bench', 'run.ts'), "import { openBackend } from '../src/store/backend.js';\n");
        writeFileSync(join(root, 'bench', '.cache', 'left-behind.ts'), "import { x } from '../../src/store/sqlite/x.js';\n");
        const bench = readSourceModules(root, 'bench');
        expect(bench.map((each) => each.file)).to.deep.equal(['bench/lib/profile.ts', 'bench/run.ts']);
        expect(rule('bench/ imports src/store/').check(bench)).to.deep.equal([
          "bench/lib/profile.ts:1 imports '../../src/store/sqlite/connection-ports.js' (src/store/sqlite/connection-ports.ts)",
        ]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });
});
