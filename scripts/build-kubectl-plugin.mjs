// Builds the kubectl plugin into one file that needs only Node (docs/kubectl-gpucap.md):
// dist/kubectl-gpucap.cjs, src/cli/kubectl/kubectl-gpucap.ts bundled with its dependencies by esbuild.
// CommonJS output, so that Node runs it whatever the file is named and wherever it is copied.
import { chmodSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const repo = fileURLToPath(new URL('..', import.meta.url));
// .cjs: inside this repository (type: module), and through npm's bin link to it, Node must still read it as CommonJS.
const outfile = `${repo}dist/kubectl-gpucap.cjs`;
const started = performance.now();
await build({
  entryPoints: [`${repo}src/cli/kubectl/kubectl-gpucap.ts`],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  legalComments: 'none',
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
process.stdout.write(`kubectl plugin: ${outfile} (${(statSync(outfile).size / 1024 / 1024).toFixed(1)} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
