// Benchmark of the reads that price GPU time (issue 40): statistics with cost, the ranking by cost and
// the month's chargeback, on the generated index of workloads-api (1M rows; --quick: 10k, the CI smoke
// check), with a prices table of a rate per instance type and one price change inside the month.
// The queries run in this process on the index's read side, as the API's handlers call them: an
// endpoint with prices needs a prices ConfigMap, so a Kubernetes API, and the HTTP around the same call
// is measured for the other endpoints by workloads-api. Statistics without prices run beside them, to
// show what cost adds. Writes bench/results/cost[.quick].json. It never asserts speed.
import type { Scope } from '../src/access/principal.js';
import { ConfigMapPrices } from '../src/capacity/configmap-prices.js';
import { Pricing } from '../src/capacity/pricing.js';
import type { BudgetSource, TelemetryReader } from '../src/query/ports.js';
import { chargeback } from '../src/query/chargeback.js';
import { rankWorkloads } from '../src/query/ranking.js';
import { workloadStats, type WorkloadStatsRequest } from '../src/query/workload-stats.js';
import { openDatabase, sqliteIndex } from '../src/store/tooling.js';
import { BENCH_NOW, INSTANCE_TYPES, ensureWorkloadsDb } from './data/generate-workloads.js';
import { summarize, type LatencySummary } from './lib/measure/load.js';
import { describeEnvironment, writeResults } from './lib/report/environment.js';
import { fixed, isEntryPoint } from './lib/report/format.js';
import type { BenchOutcome } from './lib/report/outcome.js';

export const NAME = 'cost';
const ORGANIZATION = 'acme';
/** The complete month before BENCH_NOW, whose middle has a price change. */
const MONTH = '2026-10';
const PRICE_CHANGE = '2026-10-15T00:00:00Z';

interface Settings {
  rows: number;
  /** Each scenario runs this many times, or as many as fit in maxSeconds (a p99 of fewer than 100 runs is their slowest). */
  runs: number;
  maxSeconds: number;
  warmup: number;
}
const FULL: Settings = { rows: 1_000_000, runs: 100, maxSeconds: 30, warmup: 2 };
const QUICK: Settings = { rows: 10_000, runs: 10, maxSeconds: 5, warmup: 1 };

/** `fn` one call after the other, after `warmup` unmeasured calls, `runs` times or until `maxSeconds` passed. */
async function timeRuns(fn: () => Promise<unknown>, settings: Settings): Promise<LatencySummary> {
  for (let i = 0; i < settings.warmup; i += 1) await fn();
  const samples: number[] = [];
  const began = performance.now();
  while (samples.length < settings.runs && performance.now() - began < settings.maxSeconds * 1000) {
    const at = performance.now();
    await fn();
    samples.push(performance.now() - at);
  }
  return summarize(samples);
}

/** Issue 40: the chargeback for a month at 1M rows, p99. */
const CHARGEBACK_P99_MS = 100;

type Kind = 'stats' | 'stats-cost' | 'ranking-cost' | 'chargeback';

interface ScenarioResult {
  name: string;
  kind: Kind;
  description: string;
  latency: LatencySummary;
}

/** A rate per instance type from 2020, the first one 20 % cheaper from the middle of the month, spot at a third. */
export function benchPricesYaml(): string {
  const rates = INSTANCE_TYPES.flatMap(([instanceType], i) => {
    const rate = 1 + i * 0.75;
    const lines = [`  - instance_type: ${instanceType}\n    rate_per_gpu_hour: ${rate}\n    effective_from: 2020-01-01`];
    if (i === 0) {
      lines[0] += `\n    effective_to: "${PRICE_CHANGE}"`;
      lines.push(`  - instance_type: ${instanceType}\n    rate_per_gpu_hour: ${rate * 0.8}\n    effective_from: "${PRICE_CHANGE}"`);
    }
    return lines;
  });
  return `organization_id: ${ORGANIZATION}\ncurrency: USD\nenergy_rate_per_kwh: 0.14\ngpu_hour_rates:\n${rates.join('\n')}\n`;
}

function benchPricing(): Pricing {
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const prices = new ConfigMapPrices({ key: 'prices.yaml', logger: silent });
  prices.onEvent({
    type: 'SYNC',
    items: [{ metadata: { namespace: 'gpu-system', name: 'prices-acme' }, data: { 'prices.yaml': benchPricesYaml() } }],
  });
  if (prices.tableFor(ORGANIZATION) === undefined) throw new Error(`the bench prices were refused: ${JSON.stringify(prices.problems())}`);
  return new Pricing(prices, undefined);
}

export async function runCostBench(options: { quick: boolean; scenarios?: string[]; log?: (line: string) => void }): Promise<BenchOutcome> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.quick ? QUICK : FULL;
  const environment = describeEnvironment();
  const dataset = await ensureWorkloadsDb(settings.rows, { log });
  log(`${NAME}: ${settings.rows.toLocaleString('en-US')} rows${options.quick ? ' (quick)' : ''}, ` +
    `${settings.runs} runs per scenario or ${settings.maxSeconds} s`);
  const db = openDatabase(dataset.path, { readonly: true });
  const scenarios: ScenarioResult[] = [];
  try {
    const index = sqliteIndex(db);
    const pricing = benchPricing();
    const prices = pricing.pricesFor(ORGANIZATION);
    const scope: Scope = { organizationId: ORGANIZATION, initiatives: null };
    const budgets: BudgetSource = { budgetFor: () => undefined, budgets: () => [] };
    // The ranking by cost never asks the telemetry.
    const telemetry = {} as TelemetryReader;
    const stats = (request: WorkloadStatsRequest, priced: boolean) => () =>
      workloadStats(index, scope, request, BENCH_NOW, priced ? prices : undefined);
    const cases: { name: string; kind: Kind; description: string; run: () => Promise<unknown> }[] = [
      { name: 'stats_30d', kind: 'stats', description: 'statistics, last_30_days, without prices', run: stats({ timeRange: 'last_30_days' }, false) },
      { name: 'stats_30d_cost', kind: 'stats-cost', description: '… with prices (total_cost)', run: stats({ timeRange: 'last_30_days' }, true) },
      {
        name: 'stats_30d_cost_by_initiative', kind: 'stats-cost', description: '… grouped by initiative_id',
        run: stats({ timeRange: 'last_30_days', groupBy: 'initiative_id' }, true),
      },
      {
        name: 'stats_30d_cost_day_series', kind: 'stats-cost', description: '… with a day series',
        run: stats({ timeRange: 'last_30_days', interval: 'day' }, true),
      },
      {
        name: 'ranking_cost', kind: 'ranking-cost', description: 'rankings sort_by=cost, top 10 of every workload',
        run: () => rankWorkloads({ index, telemetry, prices: pricing }, scope, { sortBy: 'cost', order: 'desc', limit: 10 }, BENCH_NOW),
      },
      {
        name: 'chargeback_month', kind: 'chargeback', description: `chargeback for ${MONTH}, by team`,
        run: () => chargeback({ index, budgets, prices: pricing }, scope, { month: MONTH, shareIdle: false }, BENCH_NOW),
      },
      {
        name: 'chargeback_month_by_submitter', kind: 'chargeback', description: '… by team and submitter',
        run: () => chargeback({ index, budgets, prices: pricing }, scope, { month: MONTH, groupBy: 'submitted_by', shareIdle: false }, BENCH_NOW),
      },
    ];
    for (const c of cases.filter((one) => options.scenarios === undefined || options.scenarios.includes(one.name))) {
      const latency = await timeRuns(c.run, settings);
      scenarios.push({ name: c.name, kind: c.kind, description: c.description, latency });
      log(`  ${c.name.padEnd(32)} p50 ${fixed(latency.p50).padStart(8)} ms  p99 ${fixed(latency.p99).padStart(8)} ms` +
        `  ${String(latency.requests).padStart(3)} runs  (${c.description})`);
    }
  } finally {
    db.close();
  }
  const worst = Math.max(...scenarios.filter((s) => s.kind === 'chargeback').map((s) => s.latency.p99));
  const targets = options.quick ? [] : [{ target: `chargeback p99 ≤ ${CHARGEBACK_P99_MS} ms`, measured: worst, met: worst <= CHARGEBACK_P99_MS }];
  const file = writeResults(`${NAME}${options.quick ? '.quick' : ''}`, {
    ...environment,
    parameters: { ...settings, month: MONTH, priceChange: PRICE_CHANGE, dataset: dataset.info },
    scenarios,
    targets,
  });
  log(`wrote ${file}`);
  return {
    name: NAME,
    resultsFile: file,
    requestErrors: 0,
    table: {
      header: ['scenario', 'p50 ms', 'p99 ms'],
      rows: scenarios.map((s) => [s.name, fixed(s.latency.p50), fixed(s.latency.p99)]),
    },
    notes: targets.map((t) => `${t.target}: ${fixed(t.measured)} ms, ${t.met ? 'met' : 'MISSED'}`),
  };
}

if (isEntryPoint(import.meta.url)) {
  const named = process.argv.find((arg) => arg.startsWith('--scenarios='))?.slice('--scenarios='.length).split(',');
  runCostBench({ quick: process.argv.includes('--quick'), scenarios: named }).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
