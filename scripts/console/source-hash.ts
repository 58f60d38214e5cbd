// One hash of everything the console is built from (its code, styles, page and icon, and the uPlot
// version bundled in), recorded with its screenshots: test/console/screenshots.test.ts fails when the
// console changed and docs/console/ was not regenerated (npm run docs:console).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export function consoleSourceHash(repoRoot: string): string {
  const dir = join(repoRoot, 'console');
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.d.mts'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(join(repoRoot, file))).update('\0');
  const uplot = JSON.parse(readFileSync(join(repoRoot, 'node_modules', 'uplot', 'package.json'), 'utf8')) as { version: string };
  hash.update(`uplot@${uplot.version}`);
  return hash.digest('hex');
}
