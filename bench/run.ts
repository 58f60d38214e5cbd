// `npm run bench [-- --quick] [-- --only NAME|ROW]`: runs every benchmark of bench/registry.ts, one after the
// other, then prints one summary table each. A benchmark marked onlyWhenNamed (too long for the whole
// run) runs at full scale only with --only NAME; its --quick run stays in the smoke check. Benchmarks
// measure and report; they never fail on slowness. The exit code is non-zero only when a benchmark
// crashed or a request failed (non-2xx or connection error), since figures over failed requests mean nothing.
import { join } from 'node:path';
import { REPO_DIR } from './lib/report/environment.js';
import { readSideBySide, readTargets, sideBySideMarkdown, targetsMarkdown, writeTargetsSection } from './lib/report/targets.js';
import type { BenchOutcome } from './lib/report/outcome.js';
import { BENCHES } from './registry.js';

function parseArgs(argv: readonly string[]): { quick: boolean; only: string | null } {
  let quick = false;
  let only: string | null = null;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--only') only = argv[(i += 1)] ?? null;
    else if (arg?.startsWith('--only=')) only = arg.slice('--only='.length);
    else throw new Error(`Unknown argument "${arg}" (known: --quick, --only NAME)`);
  }
  // --only takes a benchmark's name or one of its rows (`--only stats` runs workloads-api).
  const chosen = only === null ? null : BENCHES.find((b) => b.name === only || b.rows.includes(only));
  if (chosen === undefined) {
    throw new Error(`Unknown benchmark "${only}" (known: ${BENCHES.map((b) => `${b.name} (${b.rows.join(', ')})`).join(', ')})`);
  }
  return { quick, only: chosen?.name ?? null };
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<number> {
  const { quick, only } = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const outcomes: BenchOutcome[] = [];
  const crashed: string[] = [];
  for (const bench of BENCHES) {
    if (only !== null && bench.name !== only) continue;
    if (only === null && !quick && bench.onlyWhenNamed === true) {
      console.log(`\n=== ${bench.name}: left out (it runs only when named: --only ${bench.name}) ===`);
      continue;
    }
    console.log(`\n=== ${bench.name}${quick ? ' (quick)' : ''} ===`);
    try {
      outcomes.push(await bench.run({ quick }));
    } catch (error) {
      crashed.push(bench.name);
      console.error(`\n${bench.name} crashed:`, error);
    }
  }

  console.log(`\n=== Summary (${((performance.now() - started) / 1000).toFixed(0)} s) ===`);
  console.log('Latency: sequential requests on one keep-alive connection; req/s and its p99: concurrent connections.');
  for (const outcome of outcomes) {
    console.log(`\n${outcome.name} → ${outcome.resultsFile}`);
    printTable(outcome.table.header, outcome.table.rows);
    for (const note of outcome.notes) console.log(`  ${note}`);
  }
  const targets = readTargets(quick ? '.quick' : '');
  console.log(`\n=== Targets of issues 7 and 17 (from bench/results/*${quick ? '.quick' : ''}.json${quick ? '; --quick runs a small scale, so these say nothing about the targets' : ''}) ===`);
  console.log(targetsMarkdown(targets));
  const sideBySide = readSideBySide(quick ? '.quick' : '');
  console.log('\n=== Side by side (same data, one run) ===');
  console.log(sideBySideMarkdown(sideBySide));
  if (!quick) {
    const doc = join(REPO_DIR, 'docs', 'performance.md');
    console.log(writeTargetsSection(doc, targets, sideBySide) ? `\n${doc}: targets table updated` : `\n!!! ${doc} has no targets markers; table not written`);
  }
  const failedRequests = outcomes.filter((o) => o.requestErrors > 0);
  for (const outcome of failedRequests) {
    console.error(`\n!!!!!!!! ${outcome.name}: ${outcome.requestErrors} requests failed (non-2xx or connection errors); its figures are not valid !!!!!!!!`);
  }
  for (const name of crashed) console.error(`\n!!!!!!!! ${name} crashed (see above) !!!!!!!!`);
  return crashed.length > 0 || failedRequests.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
