import { expect } from 'chai';
import { systemClock } from '../../src/domain/clock.js';
import { rankWorkloads } from '../../src/query/ranking.js';
import type { TelemetryReader } from '../../src/query/ports.js';
import { noTelemetry } from '../../src/query/empty-sources.js';
import { aWorkload } from '../support/workload-builder.js';
import { openTestIndex, type TestIndex } from '../support/test-index.js';

/** Telemetry reporting fixed last-hour values: the port's contract, with data. */
function telemetryOf(values: Record<string, number>): TelemetryReader {
  return { ...noTelemetry, lastHour: async () => new Map(Object.entries(values).map(([id, avg]) => [id, { avg, current: avg }])) };
}

describe('query/ranking by a GPU metric', () => {
  let t: TestIndex;
  beforeEach(async ()  => {
    t = await openTestIndex({ clock: systemClock });
    await t.seed.upsertWorkloads(['w-a', 'w-b', 'w-c', 'w-d'].map((workloadId) => aWorkload({ workloadId })));
  });
  afterEach(() => t.close());

  const admin = { organizationId: 'acme', initiatives: null };

  it('breaks ties by the smaller workload_id in both orders', async () => {
    const telemetry = telemetryOf({ 'w-c': 50, 'w-a': 50, 'w-b': 50, 'w-d': 10 });
    const rank = (order: 'asc' | 'desc') =>
      rankWorkloads({ index: t.index, telemetry }, admin, { sortBy: 'gpu_utilization', order, limit: 10 }, Date.now()).then((r) => r.entries.map((e) => e.workloadId));
    expect(await rank('desc')).to.deep.equal(['w-a', 'w-b', 'w-c', 'w-d']);
    expect(await rank('asc')).to.deep.equal(['w-d', 'w-a', 'w-b', 'w-c']);
  });

  it('averages over every ranked workload in scope, not only the returned page', async () => {
    const telemetry = telemetryOf({ 'w-a': 90, 'w-b': 60, 'w-c': 30, 'unknown-id': 100 });
    const result = await rankWorkloads({ index: t.index, telemetry }, admin, { sortBy: 'gpu_utilization', order: 'desc', limit: 1 }, Date.now());
    expect(result.entries.map((e) => e.workloadId)).to.deep.equal(['w-a']);
    expect(result.totalCount).to.equal(3);
    expect(result.scopeAverage).to.equal(60);
  });
});
