import { expect } from 'chai';
import type { RollupSource } from '../../../src/store/rollups/definitions.js';
import { rollupDeltas, type RollupDelta } from '../../../src/store/rollups/deltas.js';
import { DAY_MS } from '../../../src/store/rollups/figures.js';

const DAY = 20_400;
const row = (overrides: Partial<RollupSource> = {}): RollupSource => ({
  organization_id: 'acme', initiative_id: 'llm', status: 'running', submitted_by: 'alice', is_managed: 1, instance_type: 'p5',
  submitted_at: DAY * DAY_MS + 1000, started_at: DAY * DAY_MS + 2000, completed_at: null,
  gpu_seconds_closed: 0, open_gpus: 2, open_gpu_start_sum: (2 * (DAY * DAY_MS + 2000)) / 1000, failure_reason: null,
  ...overrides,
});
const table = (deltas: RollupDelta[], name: string) => deltas.find((d) => d.table === name);

describe('store/rollups rollupDeltas', () => {
  it('adds an inserted row to every rollup that holds it, keyed in the order of the key columns', () => {
    const deltas = rollupDeltas([], [row()]);
    // A running row has no failure reason: the failure reasons' rollup is not written at all.
    expect(deltas.map((d) => d.table)).to.deep.equal([
      'workload_counts', 'stats_daily_submitter', 'stats_daily_instance_type', 'workload_totals', 'stats_daily_initiative', 'stats_weekly_submitter',
    ]);
    expect(table(deltas, 'workload_counts')?.rows).to.deep.equal([{ key: ['acme', 'llm', 'running', 'alice', 1], values: [1] }]);
    expect(table(deltas, 'stats_daily_submitter')?.rows).to.deep.equal([{
      key: ['acme', DAY, 'llm', 'alice'],
      // workloads, completed, failed, started, open_started, duration_base_ms, open_gpus, gpu_base_ms, waiting, queue_base_ms
      values: [1, 0, 0, 1, 1, -2000, 2, -4000, 0, 1000],
    }]);
  });

  it('keys a weekly rollup by the Monday of the week, and bases the open figures there', () => {
    // DAY is a Saturday: its week began 5 days before.
    const monday = DAY - 5;
    expect(table(rollupDeltas([], [row()]), 'stats_weekly_submitter')?.rows).to.deep.equal([{
      key: ['acme', monday, 'llm', 'alice'],
      // At t, 1 running row on 2 GPUs: −5 days − 2 s + (t − Monday) ms run, twice that in GPU-ms; its wait ended at 1 s.
      values: [1, 0, 0, 1, 1, -5 * DAY_MS - 2000, 2, 2 * (-5 * DAY_MS - 2000), 0, 1000],
    }]);
    const pending = row({ status: 'pending', started_at: null, open_gpus: 0, open_gpu_start_sum: 0 });
    expect(table(rollupDeltas([], [pending]), 'stats_weekly_submitter')?.rows.map((r) => r.values.slice(-2))).to.deep.equal([[1, -5 * DAY_MS - 1000]]);
    // On a Monday, the weekly figures are the daily ones.
    const onMonday = rollupDeltas([], [row({ submitted_at: monday * DAY_MS + 1000, started_at: monday * DAY_MS + 2000, open_gpu_start_sum: (2 * (monday * DAY_MS + 2000)) / 1000 })]);
    expect(table(onMonday, 'stats_weekly_submitter')?.rows).to.deep.equal(table(onMonday, 'stats_daily_submitter')?.rows);
  });

  it('holds a waiting row\'s queue from the start of its day, and its final wait once it starts', () => {
    const pending = row({ status: 'pending', started_at: null, open_gpus: 0, open_gpu_start_sum: 0 });
    const queueOf = (deltas: RollupDelta[]) => table(deltas, 'stats_daily_instance_type')?.rows.map((r) => r.values.slice(-2));
    // Waiting 1 s into its day: at t it has waited −1000 + (t − day start) ms.
    expect(queueOf(rollupDeltas([], [pending]))).to.deep.equal([[1, -1000]]);
    // It started 1 s after its submission: no longer waiting, 1000 ms waited.
    expect(queueOf(rollupDeltas([pending], [row()]))).to.deep.equal([[-1, 2000]]);
    // Cancelled before it started, 5 s after its submission: it waited until then.
    const cancelled = row({ status: 'cancelled', started_at: null, completed_at: DAY * DAY_MS + 6000, open_gpus: 0, open_gpu_start_sum: 0 });
    expect(queueOf(rollupDeltas([], [cancelled]))).to.deep.equal([[0, 5000]]);
  });

  it('takes a deleted row out again, to exactly nothing', () => {
    expect(rollupDeltas([row()], [row()])).to.deep.equal([]);
    const removed = rollupDeltas([row()], []);
    const added = rollupDeltas([], [row()]);
    expect(removed.map((d) => d.rows.map((r) => r.values))).to.deep.equal(added.map((d) => d.rows.map((r) => r.values.map((v) => -v + 0))));
  });

  it('moves a relabelled row between keys and leaves out the tables it does not move in', () => {
    const deltas = rollupDeltas([row()], [row({ submitted_by: 'bob' })]);
    expect(deltas.map((d) => d.table)).to.deep.equal(['workload_counts', 'stats_daily_submitter', 'stats_weekly_submitter']);
    expect(table(deltas, 'workload_counts')?.rows).to.deep.equal([
      { key: ['acme', 'llm', 'running', 'alice', 1], values: [-1] },
      { key: ['acme', 'llm', 'running', 'bob', 1], values: [1] },
    ]);
  });

  it('sums the rows of one key into one delta row, and sorts the keys (numbers by value, text by code unit)', () => {
    const before = [row({ submitted_at: (DAY + 10) * DAY_MS }), row({ submitted_at: (DAY + 9) * DAY_MS })];
    const after = [row({ organization_id: 'Zed' }), row({ organization_id: 'Zed' }), row({ organization_id: 'zed' }), ...before];
    const counts = table(rollupDeltas(before, after), 'workload_counts')?.rows ?? [];
    expect(counts).to.deep.equal([{ key: ['Zed', 'llm', 'running', 'alice', 1], values: [2] }, { key: ['zed', 'llm', 'running', 'alice', 1], values: [1] }]);
    const days = table(rollupDeltas([], before), 'stats_daily_submitter')?.rows.map((r) => r.key[1]);
    expect(days).to.deep.equal([DAY + 9, DAY + 10]);
  });

  it('adds a row to the failure reasons\' rollup when it fails, and moves it when its reason changes', () => {
    const failed = { status: 'failed', completed_at: DAY * DAY_MS + 3_602_000, open_gpus: 0, open_gpu_start_sum: 0, gpu_seconds_closed: 7200 };
    const failing = rollupDeltas([row()], [row({ ...failed, failure_reason: 'oom_killed' })]);
    expect(table(failing, 'stats_daily_failure_reason')?.rows).to.deep.equal([{ key: ['acme', DAY, 'llm', 'oom_killed'], values: [1, 0, 1, 1, 0, 3_600_000, 0, 7_200_000, 0, 1000] }]);
    const moved = rollupDeltas([row({ ...failed, failure_reason: 'oom_killed' })], [row({ ...failed, failure_reason: 'gpu_error' })]);
    expect(moved.map((d) => d.table)).to.deep.equal(['stats_daily_failure_reason']);
    expect(table(moved, 'stats_daily_failure_reason')?.rows.map((r) => [r.key[3], r.values[0]])).to.deep.equal([['gpu_error', 1], ['oom_killed', -1]]);
  });

  it('keeps a key whose count is unchanged while another figure changes (a finished row whose pod closed)', () => {
    const done = { status: 'completed', completed_at: DAY * DAY_MS + 3_602_000, open_gpus: 0, open_gpu_start_sum: 0 };
    const deltas = rollupDeltas([row({ ...done, gpu_seconds_closed: 0 })], [row({ ...done, gpu_seconds_closed: 7200 })]);
    expect(deltas.map((d) => d.table)).to.deep.equal([
      'stats_daily_submitter', 'stats_daily_instance_type', 'workload_totals', 'stats_daily_initiative', 'stats_weekly_submitter',
    ]);
    // workloads, open_gpus, open_gpu_days, gpu_base_ms, waiting, waiting_days, queue_base_ms
    expect(table(deltas, 'workload_totals')?.rows).to.deep.equal([{ key: ['acme', 'llm', 'completed', 'p5'], values: [0, 0, 0, 7_200_000, 0, 0, 0] }]);
  });

  it('holds a waiting row\'s queue in workload_totals with its day, so that at t it has waited base + t − days × 1 day', () => {
    const pending = row({ status: 'pending', started_at: null, open_gpus: 0, open_gpu_start_sum: 0 });
    const queueOf = (deltas: RollupDelta[]) => table(deltas, 'workload_totals')?.rows.map((r) => [r.key[2], ...r.values.slice(-3)]);
    // Waiting 1 s into day DAY: at t, −1000 + t − DAY × 1 day = t − submitted_at.
    expect(queueOf(rollupDeltas([], [pending]))).to.deep.equal([['pending', 1, DAY, -1000]]);
    // It started 1 s after its submission: out of pending, into running with its 1000 ms.
    expect(queueOf(rollupDeltas([pending], [row()]))).to.deep.equal([['pending', -1, -DAY, 1000], ['running', 0, 0, 1000]]);
  });
});
