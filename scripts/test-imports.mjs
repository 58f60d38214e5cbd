// The import graph of the test files, read with TypeScript's parser: for each module, the repository
// modules it imports and the packages and node: built-ins it names, each marked when only its types
// are imported (nothing of it runs then), and whether its code starts Node (process.execPath).
// scripts/backend-dependent-tests.mjs and scripts/test-legs.mjs choose test files from it, so that
// which file runs where follows from the code, not from a list.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/** @typedef {{ specifier: string; typeOnly: boolean }} ImportRef */
/** @typedef {{ path: string; typeOnly: boolean }} ModuleEdge */
/** @typedef {{ modules: ModuleEdge[]; packages: ImportRef[]; readsExecPath: boolean }} ModuleImports */

/** Every `*.test.ts` under `dir`, absolute, in the order the folders list them. @returns {string[]} */
export function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** An import clause or export list that brings in types alone. */
function onlyTypes(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (clause === undefined) return false;
    if (clause.isTypeOnly) return true;
    const named = clause.namedBindings;
    return clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
  }
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/**
 * What a module's `text` imports (static imports and re-exports, dynamic import(), require(), import()
 * types), and whether its code reads process.execPath: it starts Node, the runtime it runs on.
 * @returns {{ imports: ImportRef[]; readsExecPath: boolean }}
 */
export function readModule(text) {
  const source = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true);
  /** @type {ImportRef[]} */
  const found = [];
  let readsExecPath = false;
  const visit = (node) => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'execPath' && ts.isIdentifier(node.expression) && node.expression.text === 'process') readsExecPath = true;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: onlyTypes(node) });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (dynamic || required) found.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports: found, readsExecPath };
}

/** The repository module a relative specifier of `file` names (`.js` written for `.ts`), or null. */
function resolveModule(file, specifier) {
  const path = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
  return existsSync(path) ? path : null;
}

/** The import graph of `entries` and every repository module they reach. @returns {Map<string, ModuleImports>} */
export function importGraph(entries) {
  /** @type {Map<string, ModuleImports>} */
  const graph = new Map();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (graph.has(file)) continue;
    const read = readModule(readFileSync(file, 'utf8'));
    /** @type {ModuleImports} */
    const imports = { modules: [], packages: [], readsExecPath: read.readsExecPath };
    for (const { specifier, typeOnly } of read.imports) {
      if (!specifier.startsWith('.')) {
        imports.packages.push({ specifier: specifier.replace(/^node:/, ''), typeOnly });
        continue;
      }
      const path = resolveModule(file, specifier);
      if (path === null) continue;
      imports.modules.push({ path, typeOnly });
      if (!graph.has(path)) pending.push(path);
    }
    graph.set(file, imports);
  }
  return graph;
}

/**
 * The modules `from` reaches, itself included, through the edges `follow` accepts (given the edge and
 * the module it leaves from). @returns {Set<string>}
 */
export function reachable(graph, from, follow = () => true) {
  const seen = new Set([from]);
  const pending = [from];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const edge of graph.get(file)?.modules ?? []) {
      if (seen.has(edge.path) || !follow(edge, file)) continue;
      seen.add(edge.path);
      pending.push(edge.path);
    }
  }
  return seen;
}
