// The repository stands alone: a clone of it, with nothing beside it, runs the README's two commands.
// So no tracked file may name the folder that sits beside the repository on the development machines
// (the project's reference notes, which are never a dependency) or an absolute path of the machine the
// suite runs on: its home, the folder above the repository, or the repository itself.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const REPO = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
// Spelled in pieces, so that this file does not name the folder it looks for.
const SIBLING = ['sha', 'red'].join('');
const SIBLING_PATTERNS = [
  new RegExp(`\\.\\.[/\\\\]${SIBLING}\\b`), // ../x, ..\x, and deeper: ../../x
  new RegExp(`['"\`]\\.\\.['"\`]\\s*,\\s*['"\`]${SIBLING}['"\`]`), // join(..., '..', 'x')
];
/** Files that are generated and hold no paths: npm's lockfile. */
const SKIPPED = new Set(['package-lock.json']);

/** The repository's files: what git tracks, or every file but node_modules when there is no .git. */
function repositoryFiles(): string[] {
  try {
    return execFileSync('git', ['-C', REPO, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\0')
      .filter((file) => file !== '');
  } catch {
    return walk(REPO).map((file) => relative(REPO, file));
  }
}

function walk(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (['node_modules', '.git', 'dist'].includes(entry.name)) return [];
    const path = join(folder, entry.name);
    return entry.isDirectory() ? walk(path) : entry.isFile() ? [path] : [];
  });
}

/** Absolute paths of this machine that a file must not name, each with a trailing separator. */
function machinePaths(): string[] {
  const candidates = [homedir(), dirname(REPO), REPO];
  for (const path of [...candidates]) {
    try {
      candidates.push(realpathSync(path));
    } catch {
      // A home that does not exist names nothing.
    }
  }
  // A clone right under / or /tmp: those would match any absolute path, and are no machine's own.
  return [...new Set(candidates)].filter((path) => path !== sep && path !== '/tmp').map((path) => path + sep);
}

interface Hit {
  file: string;
  line: number;
  text: string;
}

function findHits(files: string[], matches: (line: string) => boolean): Hit[] {
  const hits: Hit[] = [];
  for (const file of files) {
    if (SKIPPED.has(file)) continue;
    const path = join(REPO, file);
    let content: Buffer;
    try {
      if (!statSync(path).isFile()) continue;
      content = readFileSync(path);
    } catch {
      continue; // deleted in the work tree but still in git's index
    }
    if (content.includes(0)) continue; // binary
    content
      .toString('utf8')
      .split('\n')
      .forEach((text, index) => {
        if (matches(text)) hits.push({ file, line: index + 1, text: text.trim().slice(0, 160) });
      });
  }
  return hits;
}

const describeHits = (hits: Hit[]) => hits.map((hit) => `${hit.file}:${hit.line}: ${hit.text}`).join('\n');

describe('the repository stands alone', () => {
  const files = repositoryFiles();

  it('lists the repository\'s own files', () => {
    expect(files).to.include.members(['package.json', 'README.md', '.ci/run', 'test/repository/self-contained.test.ts']);
  });

  it(`no file names the ${SIBLING} folder beside the repository`, () => {
    const hits = findHits(files, (line) => SIBLING_PATTERNS.some((pattern) => pattern.test(line)));
    expect(hits, describeHits(hits)).to.deep.equal([]);
  });

  it('no file names an absolute path of this machine (home, the folder above the repository, the repository)', () => {
    const paths = machinePaths();
    const hits = findHits(files, (line) => paths.some((path) => line.includes(path)));
    expect(hits, `${describeHits(hits)}\n(looked for ${paths.join(', ')})`).to.deep.equal([]);
  });

  it('the checks catch what they look for', () => {
    const [home] = machinePaths();
    expect(SIBLING_PATTERNS.some((pattern) => pattern.test(`const dir = '../${SIBLING}/fixtures';`))).to.be.true;
    expect(SIBLING_PATTERNS.some((pattern) => pattern.test(`join(repoRoot, '..', '${SIBLING}', 'envtest')`))).to.be.true;
    expect(SIBLING_PATTERNS.some((pattern) => pattern.test(`new URL('../../../${SIBLING}/envtest/', import.meta.url)`))).to.be.true;
    expect(SIBLING_PATTERNS.some((pattern) => pattern.test('the shared informer cache'))).to.be.false;
    expect(machinePaths().some((path) => `read ${home}x`.includes(path))).to.be.true;
  });
});
