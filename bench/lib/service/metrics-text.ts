// Reads series out of a Prometheus text exposition (the service's /metrics), enough for a benchmark
// to follow counters and gauges: `name{label="value",...} 123`. Escaped quotes inside label values are
// not expected in what the service exposes and are not handled.

export interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([\w]+)="([^"]*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    series.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return series;
}

/** Sum of the series named `name` whose labels include every pair of `where`. */
export function sumOf(series: readonly Series[], name: string, where: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of series) {
    if (s.name !== name) continue;
    if (Object.entries(where).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** GET <adminUrl>/metrics, parsed. */
export async function scrape(adminUrl: string): Promise<Series[]> {
  const response = await fetch(`${adminUrl}/metrics`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`Cannot scrape ${adminUrl}/metrics: HTTP ${response.status}`);
  return parseMetrics(text);
}
