// The console as `npm run build` builds it: under its size budget, its page naming only files the
// build wrote, and its value lists equal to the API's own. (What it imports: test/architecture.test.ts.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { SIZE_BUDGET_BYTES } from '../../console/build.mjs';
import * as contract from '../../console/src/contract.js';
import { builtConsole } from '../support/built-console.js';
import { startTestService, type JsonBody } from '../support/service-harness.js';

describe('web console build', function () {
  this.timeout(60_000);

  it(`is under ${SIZE_BUDGET_BYTES / 1024} KB gzipped, all files together`, async () => {
    const built = await builtConsole();
    expect(built.totalGzipBytes).to.be.greaterThan(10_000);
    expect(built.totalGzipBytes, built.files.map((f) => `${f.name} ${f.gzipBytes}`).join(', ')).to.be.below(SIZE_BUDGET_BYTES);
    expect(SIZE_BUDGET_BYTES).to.equal(200 * 1024);
  });

  it('writes a page that names only files of the build, under hashed names', async () => {
    const built = await builtConsole();
    const page = readFileSync(join(built.outDir, 'index.html'), 'utf8');
    const named = [...page.matchAll(/(?:src|href)="\/ui\/([^"]+)"/g)].map((m) => m[1]);
    expect(named).to.have.length(3);
    for (const name of named) {
      expect(built.files.map((f) => f.name)).to.include(name);
      expect(name).to.match(/-[A-Z0-9]{8}\.(js|css|svg)$/);
    }
    expect(built.files.map((f) => f.name)).to.include('licenses.txt');
    expect(readFileSync(join(built.outDir, 'licenses.txt'), 'utf8')).to.include('uPlot').and.include('MIT');
  });

  it("lists the API's own values: statuses, metrics, windows, sort keys, ranges, groupings, intervals, page sizes, sharing, node states, chargeback splits", async () => {
    const service = await startTestService();
    try {
      const doc: JsonBody = (await service.get('/v1/openapi.json', { as: null })).body;
      const parameter = (path: string, name: string): JsonBody => doc.paths[path].get.parameters.find((p: JsonBody) => p.name === name).schema;
      expect(contract.WORKLOAD_STATUSES).to.deep.equal(parameter('/v1/workloads', 'status').enum);
      expect(contract.METRICS_TIME_RANGES).to.deep.equal(parameter('/v1/workloads/{workload_id}/metrics', 'time_range').enum);
      expect(contract.METRIC_NAMES.join(',')).to.match(new RegExp(parameter('/v1/workloads/{workload_id}/metrics', 'metrics').pattern));
      expect(contract.RANKING_SORT_KEYS).to.deep.equal(parameter('/v1/workloads/metrics', 'sort_by').enum);
      expect(contract.STATS_TIME_RANGES).to.deep.equal(parameter('/v1/workloads/stats', 'time_range').enum);
      expect(contract.STATS_GROUP_KEYS).to.deep.equal(parameter('/v1/workloads/stats', 'group_by').enum);
      const workload = doc.paths['/v1/workloads/{workload_id}'].get.responses['200'].content['application/json'].schema.properties.data;
      expect([...contract.GPU_SHARING, null]).to.deep.equal(workload.properties.gpu_sharing.enum);
      expect(contract.TREND_INTERVALS).to.deep.equal(parameter('/v1/workloads/stats', 'interval').enum);
      const limit = parameter('/v1/workloads', 'limit');
      expect(contract.LIST_LIMITS.every((n) => n >= limit.minimum && n <= limit.maximum)).to.equal(true);
      expect(Math.max(...contract.LIST_LIMITS)).to.equal(limit.maximum);
      // The Fleet page reads the fleet with the statistics' ranges and intervals, and filters its nodes by state.
      expect(contract.STATS_TIME_RANGES).to.deep.equal(parameter('/v1/fleet', 'time_range').enum);
      expect(contract.TREND_INTERVALS).to.deep.equal(parameter('/v1/fleet', 'interval').enum);
      expect(contract.FLEET_NODE_STATES).to.deep.equal(parameter('/v1/fleet/nodes', 'state').enum);
      const nodesLimit = parameter('/v1/fleet/nodes', 'limit');
      expect(contract.LIST_LIMITS.every((n) => n >= nodesLimit.minimum && n <= nodesLimit.maximum)).to.equal(true);
      expect(contract.CHARGEBACK_GROUP_KEYS).to.deep.equal(parameter('/v1/chargeback', 'group_by').enum);
    } finally {
      await service.stop();
    }
  });
});
