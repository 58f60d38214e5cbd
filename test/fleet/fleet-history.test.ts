// The fleet's history from the ledger to the read: a node's GPU time integrated exactly between
// changes, written by the cluster's writer through the real index (SQLite file or PostgreSQL), the
// mark that keeps a takeover from counting a bucket twice, retention, and the range read whose
// summary, groups and series add up.
import { expect } from 'chai';
import { HOUR_MS, type FleetHourRow } from '../../src/domain/fleet-ledger.js';
import { FleetInventory } from '../../src/fleet/fleet-inventory.js';
import { FleetLedgerWriters } from '../../src/fleet/fleet-ledger-writer.js';
import { NodeLedger } from '../../src/fleet/node-ledger.js';
import { fleetHistory } from '../../src/query/fleet-history.js';
import { FixedClock } from '../support/fixed-clock.js';
import { nodeFrom } from '../support/fleet-fixtures.js';
import { rejectionOf } from '../support/rejection.js';
import { openTestIndex, type TestIndex } from '../support/test-index.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const MIN = 60_000;
const H100 = { gpuModel: 'H100', instanceType: 'p5.48xlarge', capacityType: null };
const quiet = { info: () => undefined, warn: () => undefined };

function hourRow(node: string, hour: number, values: Partial<FleetHourRow>): FleetHourRow {
  return {
    clusterId: 'c1', node, hour, organizationId: 'acme', gpuModel: 'H100', instanceType: 'p5.48xlarge', capacityType: null,
    capacityMs: 0, unavailableMs: 0, allocatedMs: 0, idleMs: 0, ...values,
  };
}

describe('fleet/history', () => {
  describe('the ledger', () => {
    it('integrates each split between its changes, and begins at the bucket boundary after the fleet is known', () => {
      const ledger = new NodeLedger('c1', MIN);
      ledger.set('n1', T0 - 30_000, { capacity: 8, unavailable: 0, allocated: 0 }, H100);
      ledger.begin(T0 - 30_000); // the record begins at T0
      ledger.set('n1', T0 + 15_000, { capacity: 8, unavailable: 0, allocated: 2.5 }, H100);
      ledger.set('n1', T0 + 90_000, { capacity: 8, unavailable: 6, allocated: 2 }, H100);
      ledger.advance(T0 + 2 * MIN);
      const [row] = ledger.hours(T0, T0 + 2 * MIN);
      expect(row).to.include({ node: 'n1', hour: T0, capacityMs: 8 * 120_000, gpuModel: 'H100' });
      expect(row?.allocatedMs).to.equal(2.5 * 75_000 + 2 * 30_000);
      expect(row?.unavailableMs).to.equal(6 * 30_000);
    });

    it('keeps the minutes of a node that went, under its last labels, and nothing after', () => {
      const ledger = new NodeLedger('c1', MIN);
      ledger.begin(T0);
      ledger.set('n1', T0, { capacity: 4, unavailable: 0, allocated: 4 }, H100);
      ledger.set('n1', T0 + 30_000, null, { gpuModel: null, instanceType: '', capacityType: null });
      ledger.advance(T0 + 5 * MIN);
      expect(ledger.hours(T0, T0 + 5 * MIN)).to.deep.equal([{
        clusterId: 'c1', node: 'n1', hour: T0, ...H100, capacityMs: 120_000, unavailableMs: 0, allocatedMs: 120_000, idleMs: 0,
      }]);
    });

    it('refuses a bucket that does not divide an hour', () => {
      expect(() => new NodeLedger('c1', 7 * MIN)).to.throw('a bucket of 420000 ms does not divide an hour');
    });
  });

  describe('idle GPU time', () => {
    it('goes to the nodes the workload\'s pods hold GPUs on, by their shares, and is written with the hour', async () => {
      const clock = new FixedClock(T0);
      const inventory = new FleetInventory({
        defaultOrganizationId: 'acme', keys: { instanceType: 'node.kubernetes.io/instance-type', gpuProduct: 'nvidia.com/gpu.product', capacityType: '' },
        gpuResources: ['nvidia.com/gpu'], clock, bucketMs: MIN,
      });
      const cluster = inventory.attach({ clusterId: 'c1' });
      const nodes = [nodeFrom('node-whole-h100.json', 'gpu-a', 'p5.48xlarge'), nodeFrom('node-whole-h100.json', 'gpu-b', 'p5.48xlarge')];
      cluster.onEvent('nodes', { type: 'SYNC', items: nodes, resourceVersion: '1' }, undefined);
      const intervals = inventory.intervalsOf('c1');
      intervals.retainPods(new Set());
      for (const [pod, node, gpus] of [['p1', 'gpu-a', 3], ['p2', 'gpu-b', 1]] as const) {
        intervals.interval({ podUid: pod, workloadId: 'w1', gpus, startedAt: T0, finishedAt: null }, node);
      }
      const [{ ledger } = { ledger: undefined }] = inventory.ledgers();
      if (ledger === undefined) throw new Error('the cluster has its ledger');
      inventory.idle({ workloadId: 'w1', end: T0 + 2 * MIN, idleSeconds: 120 });
      inventory.idle({ workloadId: 'nobody', end: T0 + 2 * MIN, idleSeconds: 60 });
      clock.set(T0 + 3 * MIN);
      const writes: FleetHourRow[][] = [];
      const writer = new FleetLedgerWriters(() => inventory.ledgers(), { clock, logger: quiet });
      writer.becomeWriter('c1', {
        fleetLedgerMark: async () => null,
        writeFleetLedger: async (write) => writes.push([...write.hours]),
      });
      await writer.flushAll();
      const idle = Object.fromEntries((writes[0] ?? []).map((row) => [row.node, row.idleMs]));
      expect(idle).to.deep.equal({ 'gpu-a': 90_000, 'gpu-b': 30_000 });
      expect(writes[0]?.find((row) => row.node === 'gpu-a')?.allocatedMs).to.equal(3 * 3 * MIN);
    });
  });

  describe('written by the cluster\'s writer', () => {
    let t: TestIndex;
    let clock: FixedClock;

    beforeEach(async () => {
      clock = new FixedClock(T0);
      t = await openTestIndex({ clock });
    });
    afterEach(() => t.close());

    const history = (from: number, to: number, grain: 'hour' | 'day' = 'hour') =>
      t.index.fleetHistory({ organizationId: 'acme', grain, from, to, byNode: true });

    it('adds the closed buckets once, and a takeover goes on from the mark without counting one twice', async () => {
      // Two replicas follow the same cluster; each integrates it.
      const ledgers = [new NodeLedger('c1', MIN), new NodeLedger('c1', MIN)];
      for (const ledger of ledgers) {
        ledger.set('n1', T0, { capacity: 8, unavailable: 0, allocated: 4 }, H100);
        ledger.begin(T0);
      }
      const [first, second] = ledgers.map((ledger) => new FleetLedgerWriters(() => [{ clusterId: 'c1', organizationId: 'acme', ledger }], {
        clock, logger: quiet,
      }));
      if (first === undefined || second === undefined) throw new Error('two replicas');
      first.becomeWriter('c1', t.seed);
      clock.set(T0 + 2 * MIN + 10_000);
      await first.flushAll();
      await second.flushAll(); // a standby writes nothing
      expect(await t.seed.fleetLedgerMark('c1')).to.equal(T0 + 2 * MIN);

      // The first replica goes; the second takes over three minutes later, from the mark.
      first.standby('c1');
      second.becomeWriter('c1', t.seed);
      clock.set(T0 + 5 * MIN + 1);
      await second.flushAll();
      const [row] = await history(T0, T0 + HOUR_MS);
      expect(row).to.include({ node: 'n1', capacityMs: 8 * 5 * MIN, allocatedMs: 4 * 5 * MIN, unavailableMs: 0 });
      const [day] = await history(T0, T0 + 24 * HOUR_MS, 'day');
      expect(day).to.include({ capacityMs: 8 * 5 * MIN });
    });

    it('stores each node\'s capacity type, read from its labels, with its hours and its days', async () => {
      const inventory = new FleetInventory({
        defaultOrganizationId: 'acme', keys: { instanceType: 'node.kubernetes.io/instance-type', gpuProduct: 'nvidia.com/gpu.product', capacityType: '' },
        gpuResources: ['nvidia.com/gpu'], clock, bucketMs: MIN,
      });
      const cluster = inventory.attach({ clusterId: 'c1' });
      const spot = nodeFrom('node-whole-h100.json', 'gpu-spot', 'p5.48xlarge');
      spot.metadata.labels = { ...spot.metadata.labels, 'karpenter.sh/capacity-type': 'spot' };
      const unlabelled = nodeFrom('node-whole-h100.json', 'gpu-plain', 'p5.48xlarge');
      cluster.onEvent('nodes', { type: 'SYNC', items: [spot, unlabelled], resourceVersion: '1' }, undefined);
      inventory.intervalsOf('c1').retainPods(new Set());
      const writer = new FleetLedgerWriters(() => inventory.ledgers(), { clock, logger: quiet });
      writer.becomeWriter('c1', t.seed);
      clock.set(T0 + 2 * MIN);
      await writer.flushAll();
      for (const table of ['fleet_hours', 'fleet_days']) {
        expect(await t.sql(`SELECT node, capacity_type FROM ${table} ORDER BY node`), table).to.deep.equal([
          { node: 'gpu-plain', capacity_type: null }, { node: 'gpu-spot', capacity_type: 'spot' },
        ]);
      }
    });

    it('refuses a write whose expected mark is not the stored one, and writes nothing of it', async () => {
      await t.seed.writeFleetLedger({ clusterId: 'c1', expectedMark: null, to: T0 + MIN, hours: [hourRow('n1', T0, { capacityMs: 8 * MIN })] });
      const stale = t.seed.writeFleetLedger({ clusterId: 'c1', expectedMark: null, to: T0 + 2 * MIN, hours: [hourRow('n1', T0, { capacityMs: 8 * MIN })] });
      expect((await rejectionOf(stale)).message).to.match(/marked up to \d+, not nothing/);
      const [row] = await history(T0, T0 + HOUR_MS);
      expect(row?.capacityMs).to.equal(8 * MIN);
      expect(await t.seed.fleetLedgerMark('c1')).to.equal(T0 + MIN);
    });

    it('refuses hours of another cluster, twice the same hour, or negative time', async () => {
      const write = (hours: FleetHourRow[]) => t.seed.writeFleetLedger({ clusterId: 'c1', expectedMark: null, to: T0 + MIN, hours });
      expect((await rejectionOf(write([{ ...hourRow('n1', T0, {}), clusterId: 'c2' }]))).message).to.include('an hour of node "n1" is of cluster "c2"');
      expect((await rejectionOf(write([hourRow('n1', T0, {}), hourRow('n1', T0, {})]))).message).to.include('node "n1" has its hour');
      expect((await rejectionOf(write([hourRow('n1', T0, { allocatedMs: -1 })]))).message).to.include('negative or non-finite');
      expect(await t.seed.fleetLedgerMark('c1')).to.equal(null);
    });

    it('retention deletes the hours and days before the cutoff', async () => {
      const old = T0 - 40 * 24 * HOUR_MS;
      await t.seed.writeFleetLedger({
        clusterId: 'c1', expectedMark: null, to: T0 + MIN,
        hours: [hourRow('n1', old, { capacityMs: 1 }), hourRow('n1', T0, { capacityMs: 2 })],
      });
      const deleted = await t.seed.deleteFinishedBatch(T0 - 30 * 24 * HOUR_MS, 500);
      expect(deleted).to.equal(2); // its hour and its day
      expect((await history(old, T0 + HOUR_MS)).map((r) => r.capacityMs)).to.deep.equal([2]);
      expect((await history(old - 24 * HOUR_MS, T0 + 24 * HOUR_MS, 'day')).map((r) => r.capacityMs)).to.deep.equal([2]);
    });

    it('reads a range from whole days and edge hours whose summary, groups and series add up', async () => {
      const day = 24 * HOUR_MS;
      const hours: FleetHourRow[] = [];
      // Three days of two nodes of two models, from 06:00 of the first to 18:00 of the third.
      for (let at = T0 + 6 * HOUR_MS; at < T0 + 2 * day + 18 * HOUR_MS; at += HOUR_MS) {
        hours.push(hourRow('n1', at, { capacityMs: 8 * HOUR_MS, allocatedMs: 3 * HOUR_MS, idleMs: HOUR_MS }));
        hours.push(hourRow('n2', at, { gpuModel: 'A100', instanceType: 'p4d', capacityMs: 4 * HOUR_MS, unavailableMs: 4 * HOUR_MS }));
      }
      await t.seed.writeFleetLedger({ clusterId: 'c1', expectedMark: null, to: T0 + 3 * day, hours });
      const budget = {
        organizationId: 'acme', period: 'month' as const, allocatedGpuHours: 1, initiatives: [],
        pools: [{ poolId: 'h100', name: 'H100', allocatedGpuHours: 1, instanceTypes: ['p5.48xlarge'] }],
      };
      const window = { from: T0 + 12 * HOUR_MS + 5, to: T0 + 2 * day + 12 * HOUR_MS };
      const result = await fleetHistory({ index: t.index, budget }, 'acme', { window, interval: 'day', groupBy: 'pool_id' });
      const hoursIn = 12 + 24 + 12; // widened: 12:00 of day 1 to 12:00 of day 3
      expect(result.window).to.deep.equal({ from: T0 + 12 * HOUR_MS, to: T0 + 2 * day + 12 * HOUR_MS });
      expect(result.summary).to.deep.include({
        capacityGpuHours: 12 * hoursIn, unavailableGpuHours: 4 * hoursIn, allocatedGpuHours: 3 * hoursIn, idleGpuHours: hoursIn,
        unallocatedGpuHours: 5 * hoursIn,
      });
      expect(result.summary.allocationRate).to.equal(3 / 8);
      expect(result.summary.utilizationRate).to.equal(2 / 12);
      expect([...result.groups.keys()].sort()).to.deep.equal(['', 'h100']);
      expect(result.groups.get('h100')?.capacityGpuHours).to.equal(8 * hoursIn);
      const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
      expect(sum([...result.groups.values()].map((g) => g.capacityGpuHours))).to.equal(result.summary.capacityGpuHours);
      expect(result.series?.map((s) => s.figures.capacityGpuHours)).to.deep.equal([12 * 12, 12 * 24, 12 * 12]);
      expect(sum((result.series ?? []).map((s) => s.figures.allocatedGpuHours))).to.equal(result.summary.allocatedGpuHours);
      expect(result.series?.[1]?.groups.get('h100')?.allocatedGpuHours).to.equal(3 * 24);
    });
  });
});
