// The names of every series family the service's admin /metrics exports, read from a real service
// with telemetry on: what alert rules and dashboards may name. A family is listed whether or not it
// has samples now (prom-client writes its # TYPE line either way); histograms add their series.
import { startTestService } from './service-harness.js';

export async function exportedMetricNames(): Promise<Set<string>> {
  const t = await startTestService();
  try {
    const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
    const names = new Set<string>();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      if (name === undefined) continue;
      names.add(name);
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    }
    return names;
  } finally {
    await t.stop();
  }
}

/** The series a PromQL expression names (`gpucap_…`, and Prometheus' own `up`). */
export function metricNamesIn(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\b(gpucap_[a-z0-9_]+|up)\b(?!\s*\()/g)].map((m) => m[1] ?? ''))];
}
