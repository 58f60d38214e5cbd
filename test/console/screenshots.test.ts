// The screenshots in docs/console/ show the current console: their manifest records the hash of the
// console's sources they were taken from (npm run docs:console regenerates both), and each file is a
// PNG of the size it claims. The README shows one of them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Shot } from '../../scripts/console/screenshots.js';
import { consoleSourceHash } from '../../scripts/console/source-hash.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(repoRoot, 'docs', 'console', 'screenshots.json'), 'utf8')) as { source_hash: string; shots: Shot[] };

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const bytes = readFileSync(file);
  expect(bytes.subarray(0, 8).toString('hex'), `${file} is a PNG`).to.equal('89504e470d0a1a0a');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('web console screenshots (docs/console/)', () => {
  it('were taken from the current console sources (else: npm run docs:console)', () => {
    expect(manifest.source_hash, 'the console changed since docs/console/ was generated: run `npm run docs:console` and commit docs/console/').to.equal(consoleSourceHash(repoRoot));
  });

  it('cover every page, as ORG_ADMIN and MEMBER, at 1280×800 and at 390×844', () => {
    expect(new Set(manifest.shots.map((s) => s.path.split('?')[0]?.replace(/^\/workloads\/.+$/, '/workloads/{id}')))).to.deep.equal(new Set(['/', '/workloads', '/workloads/{id}', '/rankings', '/statistics', '/fleet']));
    expect(new Set(manifest.shots.map((s) => s.caller))).to.deep.equal(new Set(['ACME_ADMIN', 'ACME_MEMBER']));
    for (const shot of manifest.shots) {
      const file = join(repoRoot, 'docs', 'console', shot.file);
      expect(existsSync(file), shot.file).to.equal(true);
      expect(pngSize(file), shot.file).to.deep.equal(shot.viewport);
    }
    expect(manifest.shots.map((s) => `${s.viewport.width}x${s.viewport.height}`)).to.include.members(['1280x800', '390x844']);
  });

  it('are shown in the README and in docs/console.md', () => {
    expect(readFileSync(join(repoRoot, 'README.md'), 'utf8')).to.match(/!\[[^\]]+\]\(docs\/console\/overview\.png\)/);
    const guide = readFileSync(join(repoRoot, 'docs', 'console.md'), 'utf8');
    for (const shot of manifest.shots) expect(guide, shot.file).to.include(`(console/${shot.file})`);
  });
});
