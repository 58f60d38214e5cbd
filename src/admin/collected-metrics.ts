// Series whose values live elsewhere (status objects, counters kept by their owner) and are read when
// Prometheus scrapes: nothing on a hot path touches prom-client.
import { Counter, Gauge, type Registry } from 'prom-client';

export type Labels = Record<string, string>;
export type Sample = { labels: Labels; value: number };

/** A counter whose value is a monotonic count kept elsewhere. */
export function counterFrom(registry: Registry, name: string, help: string, labelNames: string[], read: () => Sample[]): void {
  const collect = function (this: Counter) {
    this.reset();
    for (const { labels, value } of read()) this.inc(labels, value);
  };
  new Counter({ name, help, labelNames, registers: [registry], collect });
}

export function gaugeFrom(registry: Registry, name: string, help: string, labelNames: string[], read: () => Sample[]): void {
  const collect = function (this: Gauge) {
    this.reset();
    for (const { labels, value } of read()) this.set(labels, value);
  };
  new Gauge({ name, help, labelNames, registers: [registry], collect });
}
