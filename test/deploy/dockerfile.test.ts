// deploy/Dockerfile and .dockerignore, checked without a Docker engine: a small parser reads the
// instructions (continuations joined, comments dropped, stages split at FROM, global ARG defaults
// substituted into FROM) and the tests assert what users of the image rely on (docs/image.md).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigSchema } from '../../src/config/schema.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCKERFILE = 'deploy/Dockerfile';

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

interface Stage {
  index: number;
  name: string | undefined;
  /** The FROM reference with global ARG defaults substituted: an image, or an earlier stage's name. */
  base: string;
  instructions: Instruction[];
}

interface Dockerfile {
  globalArgs: Map<string, string>;
  stages: Stage[];
}

/** Instructions of a Dockerfile: `\` continuations joined, comment lines (also inside a continuation) dropped. */
function parseInstructions(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#')) return;
    if (pending === '' && trimmed === '') return;
    if (pending === '') startLine = i + 1;
    const continued = /\\\s*$/.test(raw);
    pending += `${continued ? raw.replace(/\\\s*$/, '') : raw} `;
    if (continued) return;
    const match = /^\s*(\S+)\s*(.*)$/s.exec(pending.trim());
    if (match !== null) instructions.push({ keyword: (match[1] ?? '').toUpperCase(), args: (match[2] ?? '').trim().replace(/\s+/g, ' '), line: startLine });
    pending = '';
  });
  if (pending.trim() !== '') throw new Error(`${DOCKERFILE} ends inside a line continuation`);
  return instructions;
}

function substitute(value: string, vars: ReadonlyMap<string, string>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a: string | undefined, b: string | undefined) => vars.get(a ?? b ?? '') ?? '');
}

/** Splits `a=b "c d"=e f='g h'` into words, quotes removed. */
function words(text: string): string[] {
  return [...text.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g)].map((m) => m[0].replace(/"([^"]*)"|'([^']*)'/g, '$1$2'));
}

/** `ENV`, `LABEL`, `ARG` arguments as key → value (`ENV k v`, the legacy form, too). */
function keyValues(args: string): Map<string, string> {
  const list = words(args);
  const first = list[0] ?? '';
  if (!first.includes('=') && list.length > 1 && !list.slice(1).some((w) => w.includes('='))) return new Map([[first, list.slice(1).join(' ')]]);
  return new Map(list.map((w) => (w.includes('=') ? [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)] : [w, ''])));
}

function parseDockerfile(text: string): Dockerfile {
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of parseInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const parts = words(instruction.args).filter((w) => !w.startsWith('--'));
      const asIndex = parts.findIndex((w) => w.toLowerCase() === 'as');
      stages.push({
        index: stages.length,
        name: asIndex === -1 ? undefined : parts[asIndex + 1],
        base: substitute(parts[0] ?? '', globalArgs),
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') for (const [key, value] of keyValues(instruction.args)) globalArgs.set(key, value);
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

const dockerfile = parseDockerfile(readFileSync(join(repoRoot, DOCKERFILE), 'utf8'));
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  license: string;
  engines: { node: string };
  dependencies: Record<string, string>;
};

function finalStage(): Stage {
  const stage = dockerfile.stages.at(-1);
  if (stage === undefined) throw new Error(`${DOCKERFILE} has no FROM`);
  return stage;
}

function stageByName(name: string): Stage | undefined {
  return dockerfile.stages.find((s) => s.name === name) ?? dockerfile.stages[Number(name)];
}

/** The stage and the stages it is built FROM, oldest first. */
function lineage(stage: Stage): Stage[] {
  const parent = dockerfile.stages.slice(0, stage.index).find((s) => s.name === stage.base);
  return parent === undefined ? [stage] : [...lineage(parent), stage];
}

/** The external image a stage starts from, following FROM <stage> chains. */
function baseImage(stage: Stage): string {
  return lineage(stage)[0]?.base ?? '';
}

function all(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** Shell commands of a stage's RUN instructions, split at `&&`, `||`, `;` and `|`, RUN flags dropped. */
function commands(stage: Stage): string[] {
  return all(stage, 'RUN').flatMap((run) =>
    run.args
      .replace(/^(--\S+\s+)+/, '')
      .split(/&&|\|\||;|\|/)
      .map((c) => c.trim())
      .filter((c) => c !== ''),
  );
}

function execForm(instruction: Instruction | undefined, what: string): string[] {
  expect(instruction, `${what} in the final stage`).to.not.equal(undefined);
  const args = instruction?.args ?? '';
  expect(args, `${what} must be in exec form (a JSON array), or a shell would be PID 1 and swallow SIGTERM`).to.match(/^\[/);
  return JSON.parse(args) as string[];
}

interface Copy {
  from: string | undefined;
  chown: string | undefined;
  sources: string[];
  dest: string;
}

function copies(stage: Stage): Copy[] {
  return [...all(stage, 'COPY'), ...all(stage, 'ADD')].map((instruction) => {
    const list = words(instruction.args);
    const flags = new Map(list.filter((w) => w.startsWith('--')).map((w) => [w.slice(2, w.includes('=') ? w.indexOf('=') : undefined), w.slice(w.indexOf('=') + 1)]));
    const paths = list.filter((w) => !w.startsWith('--'));
    return { from: flags.get('from'), chown: flags.get('chown'), sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
  });
}

/** `node:24.18.1-bookworm-slim@sha256:...` → [24, 18, 1] (missing parts are undefined). */
function nodeVersion(image: string): { repository: string; version: (number | undefined)[] } {
  const withoutDigest = image.split('@')[0] ?? '';
  const colon = withoutDigest.lastIndexOf(':');
  const repository = colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
  const tag = colon === -1 ? 'latest' : withoutDigest.slice(colon + 1);
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-|$)/.exec(tag);
  return { repository: repository.replace(/^(docker\.io\/)?(library\/)?/, ''), version: match === null ? [] : [match[1], match[2], match[3]].map((p) => (p === undefined ? undefined : Number(p))) };
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether an exact version satisfies an `engines` range; only `>=x.y.z` is understood (fails loudly otherwise). */
function satisfies(version: readonly number[], range: string): boolean {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (match === null) throw new Error(`Cannot check engines.node "${range}": only ">=x.y.z" is understood here`);
  return compareVersions(version, [match[1], match[2], match[3]].map((p) => Number(p ?? 0))) >= 0;
}

/** The last matching .dockerignore rule wins; a rule matching a parent folder applies to what it holds. */
function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = posix.normalize((negated ? line.slice(1) : line).trim().replace(/^\/+/, '')).replace(/\/+$/, '');
      const source = pattern
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) => ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
        .join('');
      return { negated, regex: new RegExp(`^${source}$`), segments: pattern.split('/').length };
    });
  return (path) => {
    let excluded = false;
    const parts = path.split('/');
    for (const rule of rules) {
      const matches = rule.regex.test(path) || (parts.length > rule.segments && rule.regex.test(parts.slice(0, rule.segments).join('/')));
      if (matches) excluded = !rule.negated;
    }
    return excluded;
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

function portOf(address: unknown): number {
  return Number(String(address).split(':').at(-1));
}

describe('deploy/Dockerfile', () => {
  describe('parser', () => {
    it('joins continuation lines and drops comment lines inside them', () => {
      const parsed = parseInstructions('FROM a AS b\n# note\nRUN x \\\n  # inside\n  && y\nCMD ["z"]\n');
      expect(parsed.map((i) => [i.keyword, i.args])).to.deep.equal([['FROM', 'a AS b'], ['RUN', 'x && y'], ['CMD', '["z"]']]);
    });

    it('substitutes global ARG defaults into FROM and names stages', () => {
      const parsed = parseDockerfile('ARG IMG=node:24.1.0-slim\nFROM ${IMG} AS build\nFROM build AS next\n');
      expect(parsed.stages.map((s) => [s.name, s.base])).to.deep.equal([['build', 'node:24.1.0-slim'], ['next', 'build']]);
    });

    it('reads .dockerignore allow-lists the way Docker does (last match wins, parents count)', () => {
      const excluded = dockerignore('*\n!src/\nsrc/**/*.db\n');
      expect(['src/main.ts', 'src/a/b.ts'].map(excluded)).to.deep.equal([false, false]);
      expect(['node_modules/x/y.js', 'README.md', 'src/a/x.db'].map(excluded)).to.deep.equal([true, true, true]);
    });
  });

  it('builds in two stages or more, so compilers and dev dependencies stay out of the runtime stage', () => {
    expect(dockerfile.stages.length).to.be.at.least(2);
  });

  it('runs Node 24 LTS from an exact node: tag in the final stage', () => {
    const { repository, version } = nodeVersion(baseImage(finalStage()));
    expect(repository, baseImage(finalStage())).to.equal('node');
    expect(version[0], baseImage(finalStage())).to.equal(24);
    expect(version.every((part) => part !== undefined), `${baseImage(finalStage())}: pin an exact x.y.z tag`).to.equal(true);
  });

  it('runs a Node version that package.json engines.node accepts', () => {
    const { version } = nodeVersion(baseImage(finalStage()));
    expect(satisfies(version.map((part) => part ?? 0), pkg.engines.node), `${baseImage(finalStage())} vs engines.node ${pkg.engines.node}`).to.equal(true);
  });

  it('runs Node older than 24.19 while better-sqlite3 is 12 (its addon built against 24.19+ headers aborts at GC)', () => {
    const major = Number(/\d+/.exec(pkg.dependencies['better-sqlite3'] ?? '')?.[0]);
    const { version } = nodeVersion(baseImage(finalStage()));
    if (major >= 13) return;
    expect(compareVersions(version.map((part) => part ?? 0), [24, 19, 0]), baseImage(finalStage())).to.be.below(0);
  });

  it('loads node_modules built on the same Node image as the runtime stage (same addon ABI)', () => {
    const sources = copies(finalStage()).filter((c) => c.sources.some((s) => /(^|\/)node_modules\/?$/.test(s)));
    expect(sources, 'the final stage copies node_modules').to.have.length.greaterThan(0);
    for (const copy of sources) {
      const from = stageByName(copy.from ?? '');
      expect(from, `COPY --from=${copy.from} names a stage of ${DOCKERFILE}`).to.not.equal(undefined);
      if (from !== undefined) expect(baseImage(from)).to.equal(baseImage(finalStage()));
    }
  });

  it('ships production node_modules only: they come from a stage where dev dependencies were pruned', () => {
    const isDevInstall = (c: string) => /^npm\s+(ci|install|i)\b/.test(c) && !/--omit=dev\b|--production\b/.test(c);
    const isOmit = (c: string) => /^npm\s+(ci|install|i|prune)\b/.test(c) && /--omit=dev\b|--production\b/.test(c);
    for (const copy of copies(finalStage()).filter((c) => c.sources.some((s) => /(^|\/)node_modules\/?$/.test(s)))) {
      const from = stageByName(copy.from ?? '');
      expect(from, `node_modules must come from another stage, not the build context (COPY ${copy.sources.join(' ')})`).to.not.equal(undefined);
      const run = from === undefined ? [] : lineage(from).flatMap(commands);
      const lastOmit = run.findLastIndex(isOmit);
      expect(lastOmit, `stage "${copy.from}" runs npm prune --omit=dev or npm ci --omit=dev`).to.be.at.least(0);
      expect(lastOmit, `stage "${copy.from}": the dev install runs before the prune`).to.be.greaterThan(run.findLastIndex(isDevInstall));
    }
    expect(commands(finalStage()).filter(isDevInstall), 'npm installs with dev dependencies in the final stage').to.deep.equal([]);
  });

  it('installs no build tools in the runtime stage', () => {
    const tools = ['g++', 'gcc', 'make', 'python3', 'python3-minimal', 'build-essential', 'cmake', 'clang'];
    const installed = commands(finalStage())
      .filter((c) => /^apt(-get)?\s+.*\binstall\b/.test(c))
      .flatMap((c) => words(c).filter((w) => !w.startsWith('-')))
      .map((w) => w.split('=')[0]);
    expect(installed.filter((w) => tools.includes(w ?? ''))).to.deep.equal([]);
    expect(installed, 'tini is installed from Debian').to.include('tini');
  });

  it('declares no HEALTHCHECK (Kubernetes probes the admin port)', () => {
    const healthchecks = dockerfile.stages.flatMap((s) => all(s, 'HEALTHCHECK')).filter((i) => i.args.toUpperCase() !== 'NONE');
    expect(healthchecks).to.deep.equal([]);
  });

  it('runs as a numeric non-root user, so Kubernetes runAsNonRoot can verify it', () => {
    const user = all(finalStage(), 'USER').at(-1)?.args ?? '';
    expect(user, 'the last USER of the final stage').to.match(/^\d+(:\d+)?$/);
    const [uid, gid] = user.split(':').map(Number);
    expect(uid, 'UID').to.not.equal(0);
    if (gid !== undefined) expect(gid, 'GID').to.not.equal(0);
  });

  it('starts tini as PID 1, which runs node dist/src/main.js', () => {
    const entrypoint = execForm(all(finalStage(), 'ENTRYPOINT').at(-1), 'ENTRYPOINT');
    expect(entrypoint[0]).to.match(/(^|\/)tini(-static)?$/);
    expect(entrypoint).to.include('--');
    const cmd = execForm(all(finalStage(), 'CMD').at(-1), 'CMD');
    expect(cmd).to.deep.equal(['node', 'dist/src/main.js']);
    expect(all(finalStage(), 'WORKDIR').at(-1)?.args, 'CMD is relative to WORKDIR').to.match(/^\//);
  });

  it('copies dist and package.json into the image (its "type": "module" makes dist ES modules)', () => {
    const copied = copies(finalStage()).flatMap((c) => c.sources.map((s) => ({ from: c.from, source: s.replace(/\/+$/, '') })));
    expect(copied.some((c) => c.from !== undefined && /(^|\/)dist$/.test(c.source)), 'dist/ from the build stage').to.equal(true);
    expect(copied.some((c) => /(^|\/)package\.json$/.test(c.source)), 'package.json').to.equal(true);
    expect(copied.some((c) => c.from === undefined && /^src($|\/)/.test(c.source)), 'no TypeScript sources in the image').to.equal(false);
  });

  it('keeps the index in a volume owned by the app user, where GPUCAP_DB_PATH points', () => {
    const env = new Map(all(finalStage(), 'ENV').flatMap((i) => [...keyValues(i.args)]));
    const dbPath = env.get('GPUCAP_DB_PATH') ?? '';
    expect(dbPath, 'GPUCAP_DB_PATH').to.match(/^\/.+\.db$/);
    const dbDir = posix.dirname(dbPath);
    const volumes = all(finalStage(), 'VOLUME').flatMap((i) => (i.args.startsWith('[') ? (JSON.parse(i.args) as string[]) : words(i.args)));
    expect(volumes, 'VOLUME').to.include(dbDir);
    const run = commands(finalStage());
    expect(run.some((c) => (/^mkdir\b/.test(c) || /^install\s.*-d\b/.test(c)) && words(c).includes(dbDir)), `${dbDir} is created`).to.equal(true);
    const uid = (all(finalStage(), 'USER').at(-1)?.args ?? '').split(':')[0];
    const owners = run.filter((c) => /^chown\b/.test(c) && words(c).includes(dbDir)).map((c) => words(c).filter((w) => !w.startsWith('-'))[1]?.split(':')[0]);
    const installOwners = run.filter((c) => /^install\s.*-d\b/.test(c) && words(c).includes(dbDir)).map((c) => /-o\s*(\S+)/.exec(c)?.[1]);
    expect([...owners, ...installOwners], `${dbDir} is owned by UID ${uid}`).to.include(uid);
    expect(env.get('NODE_ENV')).to.equal('production');
  });

  it('leaves the application files to root, so the app user can write only the volume', () => {
    for (const copy of copies(finalStage())) expect([undefined, '0', '0:0', 'root', 'root:root'], `COPY ${copy.sources.join(' ')} --chown`).to.include(copy.chown);
    const volumes = all(finalStage(), 'VOLUME').flatMap((i) => (i.args.startsWith('[') ? (JSON.parse(i.args) as string[]) : words(i.args)));
    const chowned = commands(finalStage())
      .filter((c) => /^chown\b/.test(c))
      .flatMap((c) => words(c).filter((w) => !w.startsWith('-')).slice(2));
    for (const path of chowned) expect(volumes.some((v) => path === v || path.startsWith(`${v}/`)), `chown of ${path}`).to.equal(true);
  });

  it('exposes the default API and admin ports of the config schema', () => {
    const exposed = all(finalStage(), 'EXPOSE').flatMap((i) => words(i.args)).map((w) => Number(w.split('/')[0]));
    const defaults = [portOf(ConfigSchema.properties.listen.default), portOf(ConfigSchema.properties.admin_listen.default)];
    expect([...exposed].sort()).to.deep.equal([...defaults].sort());
  });

  it('labels the image with the OCI title, source and the license of package.json', () => {
    const labels = new Map(all(finalStage(), 'LABEL').flatMap((i) => [...keyValues(i.args)]));
    expect(labels.get('org.opencontainers.image.title')).to.equal(pkg.name);
    expect(labels.get('org.opencontainers.image.licenses')).to.equal(pkg.license);
    expect(labels.has('org.opencontainers.image.source')).to.equal(true);
  });
});

describe('.dockerignore', () => {
  const excluded = dockerignore(readFileSync(join(repoRoot, '.dockerignore'), 'utf8'));

  it('keeps node_modules, dist, .git, local databases and the dev signing key out of the build context', () => {
    const paths = ['node_modules/koa/package.json', 'dist/src/main.js', '.git/HEAD', 'data/index.db', 'index.db', '.gpucap-dev/private.jwk', 'bench/results/run.json'];
    expect(paths.filter((p) => !excluded(p))).to.deep.equal([]);
  });

  it('sends every file the build copies from the context, tsconfig.build.json includes and all', () => {
    const sources = dockerfile.stages.flatMap((stage) => copies(stage).filter((c) => c.from === undefined).flatMap((c) => c.sources));
    const build = JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as { extends?: string; include?: string[] };
    const needed = [...sources, ...(build.include ?? []), ...(build.extends === undefined ? [] : [posix.normalize(build.extends)])];
    const files = needed.map((s) => s.replace(/^\.\/|\/+$/g, '')).flatMap((s) => (statSync(join(repoRoot, s)).isDirectory() ? filesUnder(s) : [s]));
    expect(files.length).to.be.greaterThan(needed.length);
    expect(files.filter(excluded)).to.deep.equal([]);
  });
});
