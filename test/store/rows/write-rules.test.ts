// What a write makes of a stored row (src/store/rows/write-rules.ts, applied by the PostgreSQL
// writer): a finished row is never reopened by an older event, but a newer finished view of it lands,
// as it does in SQLite. Then the same history through a cluster's writer on the test backend.
import { expect } from 'chai';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import { toRow } from '../../../src/store/rows/row-mapping.js';
import { mergeWorkload } from '../../../src/store/rows/write-rules.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aWorkload } from '../../support/workload-builder.js';

const STARTED = Date.parse('2026-11-10T10:00:00Z');
const DELETION = STARTED + 3_600_000;

const running = aWorkload({ workloadId: 'w-1', kind: 'Pod', status: 'running', startedAt: STARTED, completedAt: null, exitCode: null, resourceVersion: '5' });
/** A running pod deleted with a grace period: cancelled at once, its container still stopping. */
const marked: WorkloadRecord = { ...running, status: 'cancelled', completedAt: DELETION, exitCode: 0, resourceVersion: '6' };
/** Its container stopped 5 s into the grace period, killed. */
const killed: WorkloadRecord = { ...marked, exitCode: 137, resourceVersion: '7' };

describe('store/write-rules', () => {
  it('writes the container\'s exit code over a cancelled row that had none yet', () => {
    expect(mergeWorkload(toRow(marked), toRow(killed))).to.deep.include({ status: 'cancelled', completed_at: DELETION, exit_code: 137, resource_version: '7' });
  });

  it('lets a finished view replace another: a pod that stopped on its own before the deletion counts as failed', () => {
    const failed = { ...killed, status: 'failed' as const, completedAt: DELETION - 1000, exitCode: 1, resourceVersion: '8' };
    expect(mergeWorkload(toRow(marked), toRow(failed))).to.deep.include({ status: 'failed', completed_at: DELETION - 1000, exit_code: 1 });
  });

  it('keeps a finished row\'s status, times, exit code and version when an older event arrives', () => {
    const stale = { ...running, instanceType: 'p4d.24xlarge', resourceVersion: '5' };
    expect(mergeWorkload(toRow(killed), toRow(stale))).to.deep.include({
      status: 'cancelled', started_at: STARTED, completed_at: DELETION, exit_code: 137, resource_version: '7', instance_type: 'p4d.24xlarge',
    });
  });

  it('keeps a known capacity type when its node is gone (no label, NULL), and takes a new one', () => {
    const onSpot = { ...running, capacityType: 'spot' as const };
    expect(mergeWorkload(toRow(onSpot), toRow({ ...onSpot, capacityType: null, resourceVersion: '6' }))).to.deep.include({ capacity_type: 'spot' });
    expect(mergeWorkload(toRow(onSpot), toRow({ ...onSpot, capacityType: 'reserved', resourceVersion: '6' }))).to.deep.include({ capacity_type: 'reserved' });
    expect(mergeWorkload(toRow(onSpot), toRow({ ...onSpot, capacityType: null })), 'nothing changes').to.equal(null);
  });

  it('writes nothing when a finished row is delivered again', () => {
    expect(mergeWorkload(toRow(killed), toRow(killed))).to.equal(null);
  });

  describe('through a cluster\'s writer', () => {
    let t: TestIndex;
    beforeEach(async () => {
      t = await openTestIndex({ clock: new FixedClock(DELETION + 60_000) });
    });
    afterEach(() => t.close());

    it('shows a cancelled pod with the exit code its container stopped with, after the deletion', async () => {
      const writer = await t.writer('local');
      for (const record of [running, marked, killed]) await writer.upsertWorkloads([record]);
      expect(await t.index.get('w-1', DELETION + 60_000)).to.deep.include({ status: 'cancelled', completedAt: DELETION, exitCode: 137, resourceVersion: '7' });
    });
  });
});
