// The process's Prometheus registry: default Node metrics, API latency by route and status, and
// gauges that read their value when scraped (index rows), so nothing has to push updates.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface ServiceMetrics {
  registry: Registry;
  observeRequest(sample: { route: string; method: string; status: number; seconds: number }): void;
  /** Register a gauge computed at scrape time. */
  /** A gauge read at scrape time; an async read (a database query) is awaited by the scrape. */
  gaugeFrom(name: string, help: string, read: () => number | Promise<number>): void;
  counter(name: string, help: string, labelNames?: readonly string[]): Counter<string>;
}

export function createServiceMetrics(version: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'gpu-capacity-api' });
  collectDefaultMetrics({ register: registry, prefix: 'gpucap_' });
  new Gauge({
    name: 'gpucap_build_info',
    help: 'Version of the running service (always 1)',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version }, 1);
  const latency = new Histogram({
    name: 'gpucap_http_request_duration_seconds',
    help: 'Latency of /v1 requests by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    registry,
    observeRequest: ({ route, method, status, seconds }) => latency.observe({ route, method, status: String(status) }, seconds),
    gaugeFrom(name, help, read) {
      new Gauge({ name, help, registers: [registry], async collect() { this.set(await read()); } });
    },
    counter(name, help, labelNames = []) {
      return new Counter({ name, help, labelNames: [...labelNames], registers: [registry] });
    },
  };
}
