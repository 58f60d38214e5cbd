// The installed service's folder (the one holding its package.json), found by walking up from this
// file so it works both from src/ (tsx) and from dist/src/ (the image).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PackageRoot {
  dir: string;
  version: string;
}

export function packageRoot(): PackageRoot | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpu-capacity-api' && pkg.version) return { dir, version: pkg.version };
    }
    dir = dirname(dir);
  }
  return undefined;
}

/** Where `npm run build` writes the web console: dist/console of the installed service. */
export function defaultConsoleAssetsDir(): string | undefined {
  const root = packageRoot();
  return root === undefined ? undefined : join(root.dir, 'dist', 'console');
}
