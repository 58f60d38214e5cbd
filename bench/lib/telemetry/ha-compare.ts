// How far two replicas' telemetry answers to the same question at the same `now` are apart: the share
// of byte-identical answers (their JSON), the relative difference of every figure (avg, min, max,
// current of every metric), and for rankings the overlap of the top 20 and Kendall's tau-b over the
// workloads both rank. Used by bench/telemetry-ha.ts.
import type { MetricName, MetricSummary } from '../../../src/domain/metrics.js';

const STATS = ['avg', 'min', 'max', 'current'] as const;
const TOP = 20;

export type Summaries = Record<MetricName, MetricSummary>;
export type Ranking = Map<string, { avg: number; current: number }>;

/** |a − b| relative to the larger magnitude: 0 when equal, 1 when one of them is 0 and the other not. */
export function relativeDifference(a: number, b: number): number {
  if (a === b) return 0;
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
}

/** Nearest-rank percentile of unsorted values (0 without any). */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

export interface DivergenceFigures {
  answers: number;
  /** Share of answers whose JSON is the same byte for byte. */
  identicalShare: number;
  /** Over every avg/min/max/current figure of every metric both answers hold. */
  figures: number;
  maxRelativeDifference: number;
  p99RelativeDifference: number;
  meanRelativeDifference: number;
  /** Figures one answer has and the other reports as null (no samples). */
  nullOnOneSide: number;
  /** The same, figure by figure: max and p99 relative difference of avg, min, max and current. */
  byStat?: Record<(typeof STATS)[number], { max: number; p99: number }>;
}

/** Summaries (GET /v1/workloads/{id}/metrics) of one time range, compared answer by answer. */
export class SummaryDivergence {
  #answers = 0;
  #identical = 0;
  #nullOnOneSide = 0;
  readonly #differences: number[] = [];
  readonly #byStat = { avg: [] as number[], min: [] as number[], max: [] as number[], current: [] as number[] };

  add(a: Summaries, b: Summaries): void {
    this.#answers += 1;
    if (JSON.stringify(a) === JSON.stringify(b)) this.#identical += 1;
    for (const metric of Object.keys(a) as MetricName[]) {
      for (const stat of STATS) {
        const x = a[metric][stat];
        const y = b[metric]?.[stat] ?? null;
        if (x === null && y === null) continue;
        if (x === null || y === null) {
          this.#nullOnOneSide += 1;
          continue;
        }
        const difference = relativeDifference(x, y);
        this.#differences.push(difference);
        this.#byStat[stat].push(difference);
      }
    }
  }

  figures(): DivergenceFigures {
    const d = this.#differences;
    return {
      answers: this.#answers,
      identicalShare: round6(this.#identical / Math.max(1, this.#answers)),
      figures: d.length,
      maxRelativeDifference: round6(d.reduce((max, v) => Math.max(max, v), 0)),
      p99RelativeDifference: round6(percentile(d, 0.99)),
      meanRelativeDifference: round6(d.reduce((sum, v) => sum + v, 0) / Math.max(1, d.length)),
      nullOnOneSide: this.#nullOnOneSide,
      byStat: Object.fromEntries(
        STATS.map((stat) => [stat, { max: round6(this.#byStat[stat].reduce((max, v) => Math.max(max, v), 0)), p99: round6(percentile(this.#byStat[stat], 0.99)) }]),
      ) as DivergenceFigures['byStat'],
    };
  }
}

export interface RankingFigures extends Omit<DivergenceFigures, 'nullOnOneSide'> {
  /** |top 20 of a ∩ top 20 of b| / 20, as the API orders them (avg descending, ties by workload id). */
  top20Overlap: { min: number; mean: number };
  /** Kendall's tau-b of the avg over the workloads both rank (1: same order). */
  kendallTau: { min: number; mean: number };
  /** Workloads ranked by one side only. */
  rankedByOneSide: number;
}

/** Orders workload ids as the API's ranking does: avg descending, ties to the smaller id. */
export function rankedIds(ranking: Ranking): string[] {
  return [...ranking].sort(([ia, a], [ib, b]) => b.avg - a.avg || (ia < ib ? -1 : ia > ib ? 1 : 0)).map(([id]) => id);
}

/** Kendall's tau-b of two series over the same items (O(n²): a thousand workloads take a few ms). */
export function kendallTauB(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  const n = x.length;
  for (let i = 0; i < n; i += 1) {
    const xi = x[i] ?? 0;
    const yi = y[i] ?? 0;
    for (let j = i + 1; j < n; j += 1) {
      const dx = Math.sign(xi - (x[j] ?? 0));
      const dy = Math.sign(yi - (y[j] ?? 0));
      if (dx === 0 && dy === 0) continue;
      if (dx === 0) tiesX += 1;
      else if (dy === 0) tiesY += 1;
      else if (dx === dy) concordant += 1;
      else discordant += 1;
    }
  }
  const denominator = Math.sqrt((concordant + discordant + tiesX) * (concordant + discordant + tiesY));
  return denominator === 0 ? 1 : (concordant - discordant) / denominator;
}

/** Last-hour rankings of one metric, compared answer by answer. */
export class RankingDivergence {
  #answers = 0;
  #identical = 0;
  #rankedByOneSide = 0;
  readonly #overlaps: number[] = [];
  readonly #taus: number[] = [];
  readonly #differences: number[] = [];

  add(a: Ranking, b: Ranking): void {
    this.#answers += 1;
    const ordered = (r: Ranking) => JSON.stringify([...r].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    if (ordered(a) === ordered(b)) this.#identical += 1;
    const topA = rankedIds(a).slice(0, TOP);
    const topB = new Set(rankedIds(b).slice(0, TOP));
    this.#overlaps.push(topA.filter((id) => topB.has(id)).length / Math.max(1, Math.min(TOP, a.size, b.size)));
    const xs: number[] = [];
    const ys: number[] = [];
    for (const [id, figures] of a) {
      const other = b.get(id);
      if (other === undefined) {
        this.#rankedByOneSide += 1;
        continue;
      }
      xs.push(figures.avg);
      ys.push(other.avg);
      this.#differences.push(relativeDifference(figures.avg, other.avg), relativeDifference(figures.current, other.current));
    }
    for (const id of b.keys()) if (!a.has(id)) this.#rankedByOneSide += 1;
    this.#taus.push(kendallTauB(xs, ys));
  }

  figures(): RankingFigures {
    const d = this.#differences;
    const mean = (values: number[]) => round6(values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length));
    const min = (values: number[]) => round6(values.reduce((m, v) => Math.min(m, v), values.length === 0 ? 0 : Infinity));
    return {
      answers: this.#answers,
      identicalShare: round6(this.#identical / Math.max(1, this.#answers)),
      figures: d.length,
      maxRelativeDifference: round6(d.reduce((max, v) => Math.max(max, v), 0)),
      p99RelativeDifference: round6(percentile(d, 0.99)),
      meanRelativeDifference: mean(d),
      top20Overlap: { min: min(this.#overlaps), mean: mean(this.#overlaps) },
      kendallTau: { min: min(this.#taus), mean: mean(this.#taus) },
      rankedByOneSide: this.#rankedByOneSide,
    };
  }
}
