// bench/full-scale.ts end to end at a tiny shape: one service with a pre-filled index, two simulated
// clusters whose nodes run dcgm-exporter pods, and the exporter fleet serving those nodes' GPUs. The
// service must find every exporter through its pod informers and attribute every GPU the exporters
// name to a synced workload; the figures themselves are the benchmark's to report, not asserted here.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { runFullScaleBench, TARGET_RSS_BYTES } from '../../bench/full-scale.js';

describe('bench/full-scale.ts: the whole scale in one service process (tiny shape)', function () {
  this.timeout(120_000);

  it('syncs, scrapes every exporter of every cluster, attributes the GPUs and reports memory against the target', async () => {
    const lines: string[] = [];
    const outcome = await runFullScaleBench({
      quick: true,
      overrides: { rows: 1_000, shape: { pods: 300, jobs: 30, namespaces: 4, nodes: 6 }, clusters: 2, gpusPerNode: 8, scrapeIntervalSeconds: 2, ticks: 2 },
      log: (line) => lines.push(line),
    });
    expect(outcome.requestErrors, lines.join('\n')).to.equal(0);
    const results = JSON.parse(readFileSync(outcome.resultsFile, 'utf8')) as {
      exporters: { count: number; gpus: number; attributedGpus: number };
      sync: { rows: number; readySeconds: number };
      ticks: { ticks: { samples: number }[]; failures: number; gauges: { exporters: number; telemetryGpus: number; attributedGpus: number; indexRows: number } };
      target: { rssBytes: number; peakRssBytes: number | null; met: boolean | null };
      fleet: { expectedWorkloads: number };
    };
    expect(results.exporters).to.include({ count: 6, gpus: 48 });
    expect(results.exporters.attributedGpus).to.be.above(0);
    expect(results.sync.rows).to.equal(1_000 + results.fleet.expectedWorkloads);
    expect(results.ticks.ticks).to.have.length(2);
    expect(results.ticks.failures).to.equal(0);
    expect(results.ticks.gauges).to.include({ exporters: 6, telemetryGpus: 48, attributedGpus: results.exporters.attributedGpus });
    expect(results.target.rssBytes).to.equal(TARGET_RSS_BYTES);
    if (process.platform === 'linux') expect(results.target.peakRssBytes).to.be.above(0);
    expect(lines.join('\n')).to.match(/target ≤ 1\.50 GiB: (met|MISSED)/);
  });
});
