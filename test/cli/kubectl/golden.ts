// The plugin's tables against golden files: test/cli/kubectl/golden/<name>.txt, which UPDATE_GOLDEN=1
// writes from the output instead of comparing.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const GOLDEN = fileURLToPath(new URL('./golden/', import.meta.url));

export function expectGolden(name: string, text: string): void {
  const path = join(GOLDEN, `${name}.txt`);
  if (process.env.UPDATE_GOLDEN) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(path, text);
  }
  expect(text).to.equal(readFileSync(path, 'utf8'));
}
