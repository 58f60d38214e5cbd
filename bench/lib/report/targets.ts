// The table of targets, issue 7's as issue 17 tightened them (and its full-scale and /v1/health rows),
// read back from the results files the benchmarks wrote: one line per row with the target, the measured
// figure and whether it was met. `npm run bench` prints it at the end, and a full run also writes it
// between the markers of docs/performance.md, so the document shows the figures of the committed
// results and not a copy typed by hand.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './environment.js';

export interface TargetLine {
  row: string;
  measure: string;
  target: string;
  measured: string;
  /** null when the results file is missing or holds no figure for it. */
  met: boolean | null;
}

type Json = Record<string, unknown>;
type Reader = (results: Json) => Omit<TargetLine, 'row'>[];

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const ms = (value: number | null): string => (value === null ? 'n/a' : `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ms`);
const count = (value: number | null): string => (value === null ? 'n/a' : Math.round(value).toLocaleString('en-US'));
const atMost = (value: number | null, limit: number): boolean | null => (value === null ? null : value <= limit);
const atLeast = (value: number | null, limit: number): boolean | null => (value === null ? null : value >= limit);
const array = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const object = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});

/**
 * How busy the machine was in a window, from a results file's CPU seconds per process: a target
 * missed on a saturated machine says so beside the figure. `service`, the drivers (`sim …`) and the
 * benchmark itself, as percentages of one core, out of the machine's cores × 100.
 */
function cpuInWindow(cpuSeconds: Json, windowSeconds: number | null, cores: number | null): string {
  if (windowSeconds === null || windowSeconds <= 0 || cores === null) return '';
  let service = 0;
  let drivers = 0;
  let bench = 0;
  for (const [process, seconds] of Object.entries(cpuSeconds)) {
    const value = num(seconds) ?? 0;
    if (process === 'service') service += value;
    else if (process.startsWith('sim')) drivers += value;
    else bench += value;
  }
  const percent = (seconds: number) => `${Math.round((100 * seconds) / windowSeconds)} %`;
  return `CPU: service ${percent(service)}, drivers ${percent(drivers)}, benchmark ${percent(bench)}, of ${cores * 100} %`;
}

/** Worst (or best) of the scenarios of the last dataset of a list/get/stats file. */
function scenarioFigure(results: Json, pick: (scenario: Json) => number | null, worst: 'max' | 'min'): { value: number | null; scenario: string } {
  const dataset = array(results['datasets']).at(-1);
  let best: { value: number | null; scenario: string } = { value: null, scenario: '' };
  for (const scenario of array(dataset?.['scenarios'])) {
    const value = pick(scenario);
    if (value === null) continue;
    if (best.value === null || (worst === 'max' ? value > best.value : value < best.value)) best = { value, scenario: String(scenario['name']) };
  }
  return best;
}

const sequential = (field: string) => (s: Json) => num(object(s['sequential'])[field]);
const onlyKind = (kind: string, pick: (s: Json) => number | null) => (s: Json) => (s['kind'] === kind ? pick(s) : null);

const gib = (value: number | null): string => (value === null ? 'n/a' : `${(value / 1024 ** 3).toFixed(2)} GiB`);
/** 1,000,000 → "1M"; other counts as they are. */
const rowCount = (value: number | null): string => (value !== null && value >= 1_000_000 && value % 1_000_000 === 0 ? `${value / 1_000_000}M` : count(value));

/** Issue 17: event → visible in the API, p99, at this offered rate. */
const LAG_RATE = 5_000;

/** What to run for a row whose benchmark `npm run bench` leaves out unless it is named. */
const MISSING_HINTS: Record<string, (suffix: '' | '.quick') => string> = {
  'full-scale': (suffix) => `run npm run bench -- ${suffix === '.quick' ? '--quick ' : ''}--only full-scale`,
};

/** Issue 39's scale: the fleet's p99s say something about their targets only over this many nodes. */
const FLEET_NODES = 1250;

const READERS: Record<string, Reader> = {
  cost: costLines,
  list: (r) => {
    const p50 = scenarioFigure(r, sequential('p50'), 'max');
    const p99 = scenarioFigure(r, sequential('p99'), 'max');
    const rps = scenarioFigure(r, (s) => num(object(s['load'])['reqPerSec']), 'min');
    return [
      { measure: `GET /v1/workloads p50, worst scenario (${p50.scenario})`, target: '≤ 3 ms', measured: ms(p50.value), met: atMost(p50.value, 3) },
      { measure: `… p99, worst scenario (${p99.scenario})`, target: '≤ 10 ms', measured: ms(p99.value), met: atMost(p99.value, 10) },
      { measure: `… req/s on 8 connections, slowest scenario (${rps.scenario})`, target: '≥ 1,000', measured: count(rps.value), met: atLeast(rps.value, 1000) },
    ];
  },
  get: (r) => {
    const p99 = scenarioFigure(r, sequential('p99'), 'max');
    return [{ measure: 'GET /v1/workloads/{id} p99', target: '≤ 5 ms', measured: ms(p99.value), met: atMost(p99.value, 5) }];
  },
  stats: (r) => {
    const p99 = scenarioFigure(r, onlyKind('stats', sequential('p99')), 'max');
    return [{ measure: `GET /v1/workloads/stats last_30_days p99, worst group_by (${p99.scenario})`, target: '≤ 50 ms', measured: ms(p99.value), met: atMost(p99.value, 50) }];
  },
  sync: (r) => {
    const targets = object(r['targets']);
    const ready = num(object(targets['readySeconds'])['measured']);
    const retained = num(object(targets['retainedBytesPerPod'])['measured']);
    const pods = num(targets['pods']);
    return [
      { measure: `initial LIST of ${count(pods)} pods (4 clusters) to ready`, target: '≤ 30 s', measured: ready === null ? 'n/a' : `${ready.toFixed(1)} s`, met: atMost(ready, 30) },
      { measure: 'retained memory per pod (heap after full GC, minus an idle service)', target: '≤ 600 B', measured: retained === null ? 'n/a' : `${Math.round(retained)} B`, met: atMost(retained, 600) },
    ];
  },
  ingest: (r) => {
    const targets = object(r['targets']);
    const rate = num(object(targets['eventsPerSecond'])['measured']);
    const atRates = array(object(targets['lagP99Ms'])['measuredAtEachRate']).map((x) => `${count(num(x['rate']))}: ${ms(num(x['p99']))}`).join(', ');
    // The step whose target rate is issue 17's; a --quick run has none (it steps at lower rates).
    const step = array(r['steps']).find((s) => num(s['targetRate']) === LAG_RATE);
    const lag = object(step?.['lag']);
    const p99 = num(lag['p99']);
    // Samples never visible before the probe gave up are not in the p99, which may then be too low.
    const unresolved = num(lag['unresolved']) ?? 0;
    const lagMeasured = step === undefined ? `no ${count(LAG_RATE)} ev/s step` : `${ms(p99)}${unresolved > 0 ? ` (+${count(unresolved)} never visible)` : ''}`;
    const lagMet = p99 === null ? null : p99 > 500 ? false : unresolved > 0 ? null : true;
    // The step that sustained the most, and how busy the machine was while it was offered.
    const best = array(r['steps']).reduce<Json | undefined>((top, s) => ((num(s['sustainedRate']) ?? 0) > (num(top?.['sustainedRate']) ?? -1) ? s : top), undefined);
    const cpu = cpuInWindow(object(object(best?.['cpuSeconds'])['window']), num(best?.['windowSeconds']), num(object(r['machine'])['cores']));
    return [
      {
        measure: `watch events absorbed (highest sustained rate${best === undefined ? '' : `, at ${count(num(best['offeredRate']))} ev/s offered`}${cpu === '' ? '' : `; ${cpu}`})`,
        target: '≥ 10,000 ev/s',
        measured: `${count(rate)} ev/s`,
        met: atLeast(rate, 10_000),
      },
      {
        measure: `event → visible in the API, p99 at ${count(LAG_RATE)} ev/s offered (by offered ev/s: ${atRates})`,
        target: '≤ 500 ms',
        measured: lagMeasured,
        met: lagMet,
      },
    ];
  },
  parse: (r) => {
    const first = array(r['results'])[0];
    const ns = num(object(first?.['ours'])['nsPerSample']);
    const ratios = array(r['results']).map((x) => num(x['speedup'])).filter((x): x is number => x !== null);
    const minRatio = ratios.length === 0 ? null : Math.min(...ratios);
    return [
      { measure: `dcgm text parse, ${String(first?.['payload'] ?? 'payload')}`, target: '≤ 400 ns/sample', measured: ns === null ? 'n/a' : `${Math.round(ns)} ns/sample`, met: atMost(ns, 400) },
      { measure: 'speed-up over parse-prometheus-text-format, lowest of every payload', target: '≥ 5×', measured: minRatio === null ? 'n/a' : `${minRatio.toFixed(1)}×`, met: atLeast(minRatio, 5) },
    ];
  },
  rings: (r) => {
    const rings = object(r['rings']);
    const perGpu = num(object(rings['perGpu'])['ringBytes']);
    return [
      { measure: `telemetry rings, 24 h at 15 s (${count(num(rings['gpus']))} GPUs), bytes per GPU`, target: '≤ 48 KiB', measured: perGpu === null ? 'n/a' : `${(perGpu / 1024).toFixed(1)} KiB`, met: atMost(perGpu, 48 * 1024) },
    ];
  },
  // Issue 17: the whole reference scale in one service process, measured (bench/full-scale.ts).
  'full-scale': (r) => {
    const target = object(r['target']);
    const peak = num(target['peakRssBytes']);
    const peakAnon = num(target['peakRssAnonBytes']);
    const pods = num(object(r['fleet'])['pods']);
    const rows = num(object(r['parameters'])['rows']);
    const gpus = num(object(r['exporters'])['gpus']);
    return [
      {
        measure:
          `whole process, ${count(pods)} pods synced + ${rowCount(rows)} rows + ${count(gpus)} GPUs in one process, peak RSS (measured, VmHWM); ` +
          `anonymous (non-file-backed) peak ${gib(peakAnon)}, since file-backed pages of SQLite's mapped index count in RSS`,
        target: '≤ 1.5 GiB',
        measured: gib(peak),
        met: atMost(peak, 1.5 * 1024 ** 3),
      },
    ];
  },
  metrics: (r) => {
    const metrics = object(r['metrics']);
    const scenario = Object.entries(object(metrics['scenarios'])).find(([name]) => name.endsWith('-GPU job last_24h') && !name.startsWith('metrics 8-'));
    const p99 = scenario === undefined ? null : num(object(scenario[1])['p99']);
    const gpus = num(object(metrics['bigJob'])['gpus']);
    return [{ measure: `GET /v1/workloads/{id}/metrics, ${count(gpus)}-GPU job, last_24h, p99`, target: '≤ 10 ms', measured: ms(p99), met: atMost(p99, 10) }];
  },
  ranking: (r) => {
    const ranking = object(r['ranking']);
    const gpus = num(ranking['gpus']);
    let worst: { p99: number | null; name: string } = { p99: null, name: '' };
    for (const [name, figures] of Object.entries(object(ranking['scenarios']))) {
      const p99 = num(object(figures)['p99']);
      if (p99 !== null && (worst.p99 === null || p99 > worst.p99)) worst = { p99, name };
    }
    // A pass over fewer GPUs than the target's says nothing about 10,000.
    const met = gpus === null || gpus < 10_000 ? (worst.p99 !== null && worst.p99 > 20 ? false : null) : atMost(worst.p99, 20);
    return [{ measure: `GET /v1/workloads/metrics over ${count(gpus)} GPUs, p99, worst scenario (${worst.name})`, target: '≤ 20 ms', measured: ms(worst.p99), met }];
  },
  mixed: (r) => {
    const targets = object(r['targets']);
    const worst = num(object(targets['p99Ms'])['worst']);
    const errors = num(targets['errors']);
    const ingest = object(r['ingest']);
    const endpoints = array(r['endpoints']);
    const slowest = endpoints.filter((e) => num(e['p99']) === worst).map((e) => String(e['endpoint']));
    const health = num(endpoints.find((e) => e['endpoint'] === 'health')?.['p99']);
    const cpu = cpuInWindow(object(ingest['cpuSeconds']), num(object(r['parameters'])['seconds']), num(object(r['machine'])['cores']));
    return [
      {
        measure: `every endpoint while ingest is offered ${count(num(ingest['offeredPerSecond']))} ev/s (absorbed ${count(num(ingest['absorbedPerSecond']))}${cpu === '' ? '' : `; ${cpu}`}): worst p99${slowest.length === 0 ? '' : ` (${slowest.join(', ')})`}`,
        target: '≤ 250 ms',
        measured: ms(worst),
        met: atMost(worst, 250),
      },
      { measure: '… failed requests', target: '0', measured: count(errors), met: errors === null ? null : errors === 0 },
      { measure: '/v1/health p99 while ingest runs', target: '≤ 50 ms', measured: ms(health), met: atMost(health, 50) },
    ];
  },
  // Issue 39: the fleet's history over a month with a day series, and its nodes now (bench/fleet.ts).
  fleet: (r) => {
    const nodes = num(object(r['fleet'])['nodes']);
    // The scenarios sit at the top of fleet.json, not under a dataset.
    const asDataset = { datasets: [r] };
    const history = scenarioFigure(asDataset, onlyKind('history', sequential('p99')), 'max');
    const list = scenarioFigure(asDataset, onlyKind('nodes', sequential('p99')), 'max');
    const byNode = scenarioFigure(asDataset, onlyKind('history-by-node', sequential('p99')), 'max');
    // A run over fewer nodes (--quick) says nothing about 1,250, unless it already misses.
    const verdict = (value: number | null, limit: number) =>
      nodes !== null && nodes >= FLEET_NODES ? atMost(value, limit) : value !== null && value > limit ? false : null;
    return [
      {
        measure: `GET /v1/fleet last_30_days day series over ${count(nodes)} nodes × 8 GPUs, p99, worst scenario (${history.scenario})`,
        target: '≤ 50 ms',
        measured: ms(history.value),
        met: verdict(history.value, 50),
      },
      {
        measure: `GET /v1/fleet/nodes p99, worst scenario (${list.scenario})`,
        target: '≤ 10 ms',
        measured: ms(list.value),
        met: verdict(list.value, 10),
      },
      {
        measure: '… the same month grouped by node (every node a group in each day: megabytes of JSON), p99',
        target: 'none',
        measured: ms(byNode.value),
        met: null,
      },
    ];
  },
};

/** Issue 40: the worst p99 of a kind of cost scenario (bench/cost.ts), in-process at 1M rows. */
function costLines(r: Json): Omit<TargetLine, 'row'>[] {
  const rows = num(object(r['parameters'])['rows']);
  const scenarios = Array.isArray(r['scenarios']) ? (r['scenarios'] as Json[]) : [];
  const worst = (kind: string) => {
    const p99s = scenarios.filter((s) => s['kind'] === kind).map((s) => num(object(s['latency'])['p99']) ?? 0);
    return p99s.length === 0 ? null : Math.max(...p99s);
  };
  const full = rows !== null && rows >= 1_000_000;
  const chargeback = worst('chargeback');
  return [
    {
      measure: `chargeback for a month over ${count(rows)} rows, by team and by submitter, p99 (in process)`,
      target: '≤ 100 ms',
      measured: ms(chargeback),
      met: full ? atMost(chargeback, 100) : chargeback !== null && chargeback > 100 ? false : null,
    },
    { measure: '… statistics last_30_days with cost, worst p99 (in process)', target: 'none', measured: ms(worst('stats-cost')), met: null },
    { measure: '… the same without prices, p99', target: 'none', measured: ms(worst('stats')), met: null },
    { measure: '… rankings sort_by=cost, p99', target: 'none', measured: ms(worst('ranking-cost')), met: null },
  ];
}

/** Every target line, from bench/results/<row><suffix>.json. */
export function readTargets(suffix: '' | '.quick'): TargetLine[] {
  return Object.entries(READERS).flatMap(([row, read]) => {
    const file = join(RESULTS_DIR, `${row}${suffix}.json`);
    const hint = MISSING_HINTS[row];
    if (!existsSync(file)) return [{ row, measure: `(no ${row}${suffix}.json${hint === undefined ? '' : `: ${hint(suffix)}`})`, target: '', measured: 'n/a', met: null }];
    return read(JSON.parse(readFileSync(file, 'utf8')) as Json).map((line) => ({ row, ...line }));
  });
}

export function targetsMarkdown(lines: readonly TargetLine[]): string {
  const verdict = (met: boolean | null) => (met === null ? 'n/a' : met ? 'met' : '**missed**');
  return [
    '| row | measure | target | measured | |',
    '|---|---|---|---:|---|',
    ...lines.map((l) => `| ${l.row} | ${l.measure} | ${l.target} | ${l.measured} | ${verdict(l.met)} |`),
  ].join('\n');
}

export interface SideBySideLine {
  comparison: string;
  ours: string;
  theirs: string;
  /** theirs ÷ ours: above 1, we are faster (or smaller). */
  ratio: string;
}

const p50p99 = (run: Json): string => `${ms(num(run['p50']))} / ${ms(num(run['p99']))}`;
const ratioText = (value: number | null): string => (value === null ? 'n/a' : `${value.toFixed(1)}×`);
const bytes = (value: number | null): string => (value === null ? 'n/a' : `${Math.round(value).toLocaleString('en-US')} B`);

/** The side-by-side comparisons of the last full run (prometheus.json, kube-apiserver.json, parse.json). */
export function readSideBySide(suffix: '' | '.quick'): SideBySideLine[] {
  const load = (row: string): Json | null => {
    const file = join(RESULTS_DIR, `${row}${suffix}.json`);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Json) : null;
  };
  const lines: SideBySideLine[] = [];
  const prometheus = load('prometheus');
  for (const pair of array(prometheus?.['pairs'])) {
    const ratio = object(pair['ratio']);
    if (pair['ratio'] === null || pair['ratio'] === undefined) continue;
    lines.push({
      comparison: `Prometheus: ${String(pair['name'])}, p50 / p99`,
      ours: p50p99(object(object(pair['ours'])['sequential'])),
      theirs: p50p99(object(object(pair['prometheus'])['sequential'])),
      ratio: `${ratioText(num(ratio['p50']))} / ${ratioText(num(ratio['p99']))}`,
    });
  }
  const memory = object(prometheus?.['memory']);
  if (prometheus !== null && memory['ratio'] !== undefined) {
    lines.push({
      comparison: `Prometheus: memory per GPU (RSS growth, ${count(num(memory['gpus']))} GPUs)`,
      ours: bytes(num(object(memory['ours'])['rssDeltaPerGpu'])),
      theirs: bytes(num(object(memory['prometheus'])['rssDeltaPerGpu'])),
      ratio: ratioText(num(object(memory['ratio'])['rssPerGpu'])),
    });
  }
  const apiserver = load('kube-apiserver');
  for (const pair of array(apiserver?.['pairs'])) {
    lines.push({
      comparison: `kube-apiserver: ${String(pair['name'])}, p50 / p99`,
      ours: p50p99(object(pair['ours'])),
      theirs: p50p99(object(pair['theirs'])),
      ratio: `${ratioText(num(object(pair['ratio'])['p50']))} / ${ratioText(num(object(pair['ratio'])['p99']))}`,
    });
  }
  const parse = load('parse');
  for (const result of array(parse?.['results'])) {
    lines.push({
      comparison: `parse-prometheus-text-format: ${String(result['payload'])}, ns/sample`,
      ours: `${count(num(object(result['ours'])['nsPerSample']))} ns`,
      theirs: `${count(num(object(result['oracle'])['nsPerSample']))} ns`,
      ratio: ratioText(num(result['speedup'])),
    });
  }
  return lines;
}

export function sideBySideMarkdown(lines: readonly SideBySideLine[]): string {
  return [
    '| comparison | ours | theirs | theirs ÷ ours |',
    '|---|---:|---:|---:|',
    ...lines.map((l) => `| ${l.comparison} | ${l.ours} | ${l.theirs} | ${l.ratio} |`),
  ].join('\n');
}

const BEGIN = '<!-- bench:targets:begin (written by npm run bench; do not edit by hand) -->';
const END = '<!-- bench:targets:end -->';

const SIDE_BEGIN = '<!-- bench:side-by-side:begin (written by npm run bench; do not edit by hand) -->';
const SIDE_END = '<!-- bench:side-by-side:end -->';

/** Replaces the text between two markers; false when they are missing. */
export function replaceBetween(text: string, begin: string, end: string, content: string): string | null {
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return null;
  return `${text.slice(0, from + begin.length)}\n${content}\n${text.slice(to)}`;
}

/** Writes both tables between their markers in `docPath`; false when a pair of markers is missing. */
export function writeTargetsSection(docPath: string, lines: readonly TargetLine[], sideBySide: readonly SideBySideLine[]): boolean {
  const withTargets = replaceBetween(readFileSync(docPath, 'utf8'), BEGIN, END, targetsMarkdown(lines));
  const withBoth = withTargets === null ? null : replaceBetween(withTargets, SIDE_BEGIN, SIDE_END, sideBySideMarkdown(sideBySide));
  if (withBoth === null) return false;
  writeFileSync(docPath, withBoth);
  return true;
}
