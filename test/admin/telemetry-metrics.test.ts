// The exporter series on /metrics, read from the sampler's statuses at scrape time: how many
// exporters and GPUs each cluster has, and how many of them the last scrape failed for (what the
// chart's GpucapExportersFailing alert divides).
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerTelemetryMetrics } from '../../src/admin/telemetry-metrics.js';

describe('registerTelemetryMetrics exporter series', () => {
  const exporters = [
    { clusterId: 'west', consecutiveFailures: 0, lastGpus: 8 },
    { clusterId: 'west', consecutiveFailures: 3, lastGpus: 4 },
    { clusterId: 'west', consecutiveFailures: 1, lastGpus: 0 },
    { clusterId: 'east', consecutiveFailures: 0, lastGpus: 2 },
  ];
  let registry: Registry;
  beforeEach(() => {
    registry = new Registry();
    const stats = { gpus: 0, attributedGpus: 0, workloads: 0, ringBytes: 0, ringReservedBytes: 0, exporters: 0, gpuPods: 0 };
    registerTelemetryMetrics(registry, { stats: () => stats, exporters: () => exporters, lastTick: () => null });
  });

  const scrape = async (name: string) =>
    Object.fromEntries(((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []).map((v) => [v.labels.cluster, v.value]));

  it('counts exporters and failing exporters by cluster', async () => {
    expect(await scrape('gpucap_exporters')).to.deep.equal({ west: 3, east: 1 });
    expect(await scrape('gpucap_exporters_failing')).to.deep.equal({ west: 2, east: 0 });
  });

  it('sums the GPUs each exporter last reported, and those of the failing ones, by cluster', async () => {
    expect(await scrape('gpucap_exporter_gpus')).to.deep.equal({ west: 12, east: 2 });
    expect(await scrape('gpucap_exporter_gpus_failing')).to.deep.equal({ west: 4, east: 0 });
  });
});
