// Small helpers every benchmark uses: the precision of figures in results files and logs, and whether
// a benchmark file was started directly (`npx tsx bench/<name>.ts`) rather than imported by bench/run.ts.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Two decimals: the precision of the figures written to results files. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Three significant digits or so, for logs and tables: 123, 12.3, 1.23. */
export function fixed(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** True when the module at `moduleUrl` (its import.meta.url) is the script node was started with. */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  return script !== undefined && moduleUrl === pathToFileURL(realpathSync(script)).href;
}
