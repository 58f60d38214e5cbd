// The service version from package.json, found by walking up from this file so it works both from
// src/ (tsx) and from dist/src/ (the image).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function serviceVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpu-capacity-api' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0-unknown';
}
