// Builds the web console (docs/console.md) into one folder the service serves: index.html, and under
// hashed names the script (console/src bundled with uPlot by esbuild), the stylesheet and the icon, and
// licenses.txt for the bundled library. Prints each file's size, raw and gzipped, and fails above the budget.
// `node console/build.mjs [OUT_DIR]`; `npm run build` writes dist/console.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));
/** Every file of the console together, gzipped (issue 20). */
export const SIZE_BUDGET_BYTES = 200 * 1024;

/** Builds into outDir (emptied first); returns the files with their sizes. */
export async function buildConsole({ outDir }) {
  const started = performance.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { console: join(here, 'src', 'main.ts') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    // Browsers of the last three years; nothing older runs `:has()` or ResizeObserver reliably.
    target: ['chrome111', 'firefox115', 'safari16.4'],
    minify: true,
    entryNames: '[name]-[hash]',
    // uPlot's header is a plain comment, not a legal one; its licence is written out below instead.
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: resolve(here, '..'),
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (script === undefined || style === undefined) throw new Error(`the console build wrote no script or no stylesheet: ${outputs.join(', ')}`);
  const uplotLicence = readFileSync(join(here, '..', 'node_modules', 'uplot', 'LICENSE'), 'utf8');
  writeFileSync(join(outDir, 'licenses.txt'), `The console bundles uPlot (https://github.com/leeoniya/uPlot), under this licence:\n\n${uplotLicence}`);
  const iconSvg = readFileSync(join(here, 'icon.svg'));
  const icon = `icon-${contentHash(iconSvg)}.svg`;
  writeFileSync(join(outDir, icon), iconSvg);
  const page = readFileSync(join(here, 'index.html'), 'utf8').replace('{{script}}', script).replace('{{style}}', style).replace('{{icon}}', icon);
  writeFileSync(join(outDir, 'index.html'), page);
  const files = readdirSync(outDir)
    .sort()
    .map((name) => {
      const body = readFileSync(join(outDir, name));
      return { name, bytes: statSync(join(outDir, name)).size, gzipBytes: gzipSync(body, { level: 9 }).length };
    });
  const totalGzipBytes = files.reduce((sum, file) => sum + file.gzipBytes, 0);
  return { outDir, files, totalBytes: files.reduce((sum, file) => sum + file.bytes, 0), totalGzipBytes, seconds: (performance.now() - started) / 1000 };
}

/** 8 characters of base32, as esbuild names its hashed outputs. */
function contentHash(body) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const digest = createHash('sha256').update(body).digest();
  let text = '';
  for (let i = 0; i < 8; i += 1) text += alphabet[(digest[i] ?? 0) % 32];
  return text;
}

export function sizeReport(built) {
  const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
  const lines = built.files.map((file) => `  ${file.name.padEnd(36)} ${kb(file.bytes).padStart(9)}  ${kb(file.gzipBytes).padStart(8)} gzipped`);
  lines.push(`  ${'total'.padEnd(36)} ${kb(built.totalBytes).padStart(9)}  ${kb(built.totalGzipBytes).padStart(8)} gzipped (budget ${kb(SIZE_BUDGET_BYTES)})`);
  return `web console: ${built.outDir} in ${built.seconds.toFixed(1)} s\n${lines.join('\n')}\n`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = await buildConsole({ outDir: resolve(process.argv[2] ?? join(here, '..', 'dist', 'console')) });
  process.stdout.write(sizeReport(built));
  if (built.totalGzipBytes > SIZE_BUDGET_BYTES) {
    process.stderr.write(`the console is ${built.totalGzipBytes} bytes gzipped, over its budget of ${SIZE_BUDGET_BYTES}\n`);
    process.exit(1);
  }
}
