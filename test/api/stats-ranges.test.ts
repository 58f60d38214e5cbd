// GET /v1/workloads/stats: the figures and every time_range (DECISIONS "Statistics"), with the clock
// set by hand. Each scenario lives in its own stretch of the calendar, more than 30 days from the
// others, so that no window of one scenario reaches the workloads of another.
//
// Range scenarios seed pending workloads with one distinct submitter each; `group_by=submitted_by`
// then names exactly which workloads a window holds.
import { expect } from 'chai';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';
import { NO_USAGE, NO_USAGE_TOTALS } from '../support/no-usage.js';

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;

let counter = 0;
/** A pending workload whose submitter names it. */
function marker(submittedBy: string, submittedAtIso: string): WorkloadRecord {
  counter += 1;
  return aWorkload({
    workloadId: `s0000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    name: submittedBy,
    submittedBy,
    initiativeId: 'ranges',
    status: 'pending',
    submittedAt: at(submittedAtIso),
    startedAt: null,
    completedAt: null,
    exitCode: null,
  });
}

// --- Summary scenario: clock 2027-02-15T12:00:00Z ------------------------------------------------
const SUMMARY_NOW = '2027-02-15T12:00:00.000Z';
const done = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000001', status: 'completed', exitCode: 0, submittedBy: 'alice', initiativeId: 'llm',
  instanceType: 'p5.48xlarge', gpuCount: 8,
  submittedAt: at('2027-02-14T08:00:00Z'), startedAt: at('2027-02-14T08:00:00Z'), completedAt: at('2027-02-14T10:00:00Z'),
});
const failed = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000002', status: 'failed', exitCode: 1, submittedBy: 'bob', initiativeId: 'vision',
  instanceType: 'a3-highgpu-8g', gpuCount: 2,
  submittedAt: at('2027-02-14T12:00:00Z'), startedAt: at('2027-02-14T12:00:00Z'), completedAt: at('2027-02-14T13:00:00Z'),
});
const running = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000003', status: 'running', exitCode: null, submittedBy: 'alice', initiativeId: 'vision',
  instanceType: 'a3-highgpu-8g', gpuCount: 4,
  submittedAt: at('2027-02-15T11:00:00Z'), startedAt: at('2027-02-15T11:30:00Z'), completedAt: null,
});
const pending = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000004', status: 'pending', exitCode: null, submittedBy: 'carol', initiativeId: 'audio',
  instanceType: 'unknown', gpuCount: 1,
  submittedAt: at('2027-02-15T09:00:00Z'), startedAt: null, completedAt: null,
});
const cancelled = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000005', status: 'cancelled', exitCode: 0, submittedBy: 'carol', initiativeId: 'llm',
  instanceType: 'g5.xlarge', gpuCount: 1,
  submittedAt: at('2027-02-15T05:00:00Z'), startedAt: at('2027-02-15T06:00:00Z'), completedAt: at('2027-02-15T07:00:00Z'),
});
const done2 = aWorkload({
  workloadId: 's1000000-0000-4000-8000-000000000006', status: 'completed', exitCode: 0, submittedBy: 'bob', initiativeId: 'audio',
  instanceType: 'g5.xlarge', gpuCount: 2,
  submittedAt: at('2027-02-14T00:00:00Z'), startedAt: at('2027-02-14T00:00:00Z'), completedAt: at('2027-02-14T03:00:00Z'),
});
const SUMMARY_WORKLOADS = [done, failed, running, pending, cancelled, done2];
// GPU-hours come from pod intervals: `done` ran a first pod for 30 min that failed and was retried
// (8 GPUs × 0.5 h + 8 GPUs × 1.5 h = 16), not from gpu_count × duration. The pending one has no pod.
const SUMMARY_PODS = [
  aPodInterval(done, { podUid: 'done-pod-0', finishedAt: at('2027-02-14T08:30:00Z') }),
  aPodInterval(done, { podUid: 'done-pod-1', startedAt: at('2027-02-14T08:30:00Z') }),
  aPodInterval(failed),
  aPodInterval(running),
  aPodInterval(cancelled),
  aPodInterval(done2),
];

// --- Range scenarios ---------------------------------------------------------------------------
const MARKERS = [
  // ISO week across a year boundary: 2027-01-01 is a Friday; its week starts Monday 2026-12-28.
  marker('y-sunday-before', '2026-12-27T23:59:59.999Z'),
  marker('y-monday', '2026-12-28T00:00:00.000Z'),
  marker('y-new-year', '2027-01-01T06:00:00.000Z'),
  // ISO week of Monday 2027-03-29 to Sunday 2027-04-04.
  marker('w-previous-sunday', '2027-03-28T23:59:59.999Z'),
  marker('w-monday', '2027-03-29T00:00:00.000Z'),
  marker('w-sunday', '2027-04-04T23:59:59.000Z'),
  marker('w-next-monday', '2027-04-05T00:00:00.000Z'),
  // Month boundaries: May/June/July 2027.
  marker('m-may-last', '2027-05-31T23:59:59.999Z'),
  marker('m-june-first', '2027-06-01T00:00:00.000Z'),
  marker('m-june-last', '2027-06-30T23:59:59.999Z'),
  marker('m-july-first', '2027-07-01T00:00:00.000Z'),
  // February of the leap year 2028.
  marker('l-january-last', '2028-01-31T23:59:59.999Z'),
  marker('l-february-first', '2028-02-01T00:00:00.000Z'),
  marker('l-february-29', '2028-02-29T12:00:00.000Z'),
  marker('l-february-29-last', '2028-02-29T23:59:59.999Z'),
  marker('l-march-first', '2028-03-01T00:00:00.000Z'),
  // today: Tuesday 2027-08-10.
  marker('t-yesterday-last', '2027-08-09T23:59:59.999Z'),
  marker('t-midnight', '2027-08-10T00:00:00.000Z'),
  marker('t-afternoon', '2027-08-10T15:00:00.000Z'),
  // Rolling windows around now = 2027-10-20T12:00:00.000Z.
  marker('r-30d-before-edge', '2027-09-20T11:59:59.999Z'),
  marker('r-30d-edge', '2027-09-20T12:00:00.000Z'),
  marker('r-7d-before-edge', '2027-10-13T11:59:59.999Z'),
  marker('r-7d-edge', '2027-10-13T12:00:00.000Z'),
  marker('r-now', '2027-10-20T12:00:00.000Z'),
  marker('r-after-now', '2027-10-20T12:00:00.001Z'),
  // custom ranges, now = 2027-12-20T00:00:00Z.
  marker('c-before-start', '2027-11-30T23:59:59.999Z'),
  marker('c-start', '2027-12-01T00:00:00.000Z'),
  marker('c-middle', '2027-12-05T00:00:00.000Z'),
  marker('c-before-end', '2027-12-09T23:59:59.999Z'),
  marker('c-end', '2027-12-10T00:00:00.000Z'),
];

describe('API statistics: figures and time ranges', () => {
  let t: TestService;

  before(async () => {
    t = await startTestService();
    await t.service.store.upsertWorkloads([...SUMMARY_WORKLOADS, ...MARKERS]);
    await t.service.store.upsertPodIntervals(SUMMARY_PODS);
  });
  after(() => t.stop());

  async function stats(query: string) {
    const res = await t.get(`/v1/workloads/stats${query ? `?${query}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as {
      summary: { total_workloads: number; total_gpu_hours: number; average_duration_seconds: number; success_rate: number };
      grouped: Record<string, string | number>[];
    };
  }

  /** Submitters of the workloads in the window (each range marker has its own), checked against total_workloads. */
  async function inWindow(query: string): Promise<string[]> {
    const data = await stats(`${query}${query ? '&' : ''}group_by=submitted_by`);
    const names = data.grouped.map((g) => String(g.submitted_by)).sort();
    expect(data.summary.total_workloads, 'total_workloads').to.equal(names.length);
    return names;
  }

  async function validationDetails(query: string) {
    const res = await t.get(`/v1/workloads/stats?${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    return res.body.error.details as { location: string; field: string; message: string }[];
  }

  describe('summary figures', () => {
    beforeEach(() => t.clock.set(SUMMARY_NOW));

    it('sums count, GPU-hours from pod intervals, average duration of started workloads and success rate', async () => {
      const data = await stats('');
      // 6 workloads; GPU-hours 16 + 2 + 2 (running, up to now) + 0 + 1 + 6 = 27;
      // durations of the 5 started: 7200 + 3600 + 1800 + 3600 + 10800 = 27000 → 5400;
      // success = 2 completed / (2 completed + 1 failed); cancelled and unfinished count in neither;
      // waits: running 1800, pending 10800 (since 09:00), cancelled 3600, the rest 0 → 16200 / 6.
      expect(data.summary).to.deep.equal({ total_workloads: 6, total_gpu_hours: 27, average_duration_seconds: 5400, success_rate: 0.6667, average_queue_seconds: 2700, ...NO_USAGE_TOTALS });
    });

    it('counts a running workload\'s GPU-hours and duration up to now', async () => {
      t.clock.set(at(SUMMARY_NOW) + HOUR / 2);
      const data = await stats('');
      // The running workload now has 4 GPUs × 1 h and 3600 s: 27 + 2 = 29 GPU-hours, (27000 + 1800) / 5;
      // the pending one has waited 1800 s more: (16200 + 1800) / 6.
      expect(data.summary).to.deep.equal({ total_workloads: 6, total_gpu_hours: 29, average_duration_seconds: 5760, success_rate: 0.6667, average_queue_seconds: 3000, ...NO_USAGE_TOTALS });
    });

    it('success_rate is 0 when no workload in the range completed or failed', async () => {
      // today (2027-02-15): the cancelled, the pending and the running workload.
      const data = await stats('time_range=today');
      expect(data.summary).to.deep.equal({ total_workloads: 3, total_gpu_hours: 3, average_duration_seconds: 2700, success_rate: 0, average_queue_seconds: 5400, ...NO_USAGE_TOTALS });
    });

    it('a range without workloads has zero figures and no groups', async () => {
      const data = await stats('time_range=custom&start_date=2027-02-01&end_date=2027-02-02&group_by=initiative_id');
      expect(data).to.deep.equal({ summary: { total_workloads: 0, total_gpu_hours: 0, average_duration_seconds: 0, success_rate: 0, average_queue_seconds: 0, ...NO_USAGE_TOTALS }, grouped: [] });
    });

    it('grouped is [] when group_by is omitted', async () => {
      expect((await stats('')).grouped).to.deep.equal([]);
    });

    it('group_by=submitted_by gives each submitter\'s figures, sorted by gpu_hours descending', async () => {
      expect((await stats('group_by=submitted_by')).grouped).to.deep.equal([
        { submitted_by: 'alice', workload_count: 2, gpu_hours: 18, success_rate: 1, average_queue_seconds: 900, ...NO_USAGE },
        { submitted_by: 'bob', workload_count: 2, gpu_hours: 8, success_rate: 0.5, average_queue_seconds: 0, ...NO_USAGE },
        { submitted_by: 'carol', workload_count: 2, gpu_hours: 1, success_rate: 0, average_queue_seconds: 7200, ...NO_USAGE },
      ]);
    });

    it('group_by=initiative_id gives each initiative\'s figures, sorted by gpu_hours descending', async () => {
      expect((await stats('group_by=initiative_id')).grouped).to.deep.equal([
        { initiative_id: 'llm', workload_count: 2, gpu_hours: 17, success_rate: 1, average_queue_seconds: 1800, ...NO_USAGE },
        { initiative_id: 'audio', workload_count: 2, gpu_hours: 6, success_rate: 1, average_queue_seconds: 5400, ...NO_USAGE },
        { initiative_id: 'vision', workload_count: 2, gpu_hours: 4, success_rate: 0, average_queue_seconds: 900, ...NO_USAGE },
      ]);
    });

    it('group_by=instance_type gives each instance type\'s figures, sorted by gpu_hours descending', async () => {
      expect((await stats('group_by=instance_type')).grouped).to.deep.equal([
        { instance_type: 'p5.48xlarge', workload_count: 1, gpu_hours: 16, success_rate: 1, average_queue_seconds: 0, ...NO_USAGE },
        { instance_type: 'g5.xlarge', workload_count: 2, gpu_hours: 7, success_rate: 1, average_queue_seconds: 1800, ...NO_USAGE },
        { instance_type: 'a3-highgpu-8g', workload_count: 2, gpu_hours: 4, success_rate: 0, average_queue_seconds: 900, ...NO_USAGE },
        { instance_type: 'unknown', workload_count: 1, gpu_hours: 0, success_rate: 0, average_queue_seconds: 10800, ...NO_USAGE },
      ]);
    });

    it('group figures add up to the summary', async () => {
      const data = await stats('group_by=initiative_id');
      expect(data.grouped.reduce((sum, g) => sum + Number(g.workload_count), 0)).to.equal(data.summary.total_workloads);
      expect(data.grouped.reduce((sum, g) => sum + Number(g.gpu_hours), 0)).to.equal(data.summary.total_gpu_hours);
    });
  });

  describe('this_week (ISO week, from Monday 00:00 UTC)', () => {
    it('on Sunday 23:59:59 covers the week since Monday, not the Sunday before it', async () => {
      t.clock.set('2027-04-04T23:59:59.000Z');
      expect(await inWindow('time_range=this_week')).to.deep.equal(['w-monday', 'w-sunday']);
    });

    it('on Monday 00:00:00.000 starts a new week: the Sunday just ended is out', async () => {
      t.clock.set('2027-04-05T00:00:00.000Z');
      expect(await inWindow('time_range=this_week')).to.deep.equal(['w-next-monday']);
    });

    it('includes a workload submitted at Monday 00:00:00.000 exactly', async () => {
      t.clock.set('2027-03-29T00:00:00.000Z');
      expect(await inWindow('time_range=this_week')).to.deep.equal(['w-monday']);
    });

    it('runs across a year boundary: on Friday 2027-01-01 the week began Monday 2026-12-28', async () => {
      t.clock.set('2027-01-01T12:00:00.000Z');
      expect(await inWindow('time_range=this_week')).to.deep.equal(['y-monday', 'y-new-year']);
    });
  });

  describe('this_month (from the 1st, 00:00 UTC)', () => {
    it('on the last instant of a month covers that month from its first instant', async () => {
      t.clock.set('2027-06-30T23:59:59.999Z');
      expect(await inWindow('time_range=this_month')).to.deep.equal(['m-june-first', 'm-june-last']);
    });

    it('at 00:00:00.000 of the 1st starts a new month', async () => {
      t.clock.set('2027-07-01T00:00:00.000Z');
      expect(await inWindow('time_range=this_month')).to.deep.equal(['m-july-first']);
    });

    it('covers February 29 in a leap year', async () => {
      t.clock.set('2028-02-29T23:59:59.999Z');
      expect(await inWindow('time_range=this_month')).to.deep.equal(['l-february-29', 'l-february-29-last', 'l-february-first']);
    });

    it('leaves February behind on March 1 of a leap year', async () => {
      t.clock.set('2028-03-01T00:00:00.000Z');
      expect(await inWindow('time_range=this_month')).to.deep.equal(['l-march-first']);
    });

    it('is the calendar month, not the ISO week: on Friday 2027-01-01 only January counts', async () => {
      t.clock.set('2027-01-01T12:00:00.000Z');
      expect(await inWindow('time_range=this_month')).to.deep.equal(['y-new-year']);
    });
  });

  describe('today (from 00:00 UTC)', () => {
    it('at 00:00:00.000 holds only what was submitted at that instant', async () => {
      t.clock.set('2027-08-10T00:00:00.000Z');
      expect(await inWindow('time_range=today')).to.deep.equal(['t-midnight']);
    });

    it('later in the day holds everything since midnight up to now, and nothing of yesterday', async () => {
      t.clock.set('2027-08-10T15:00:00.000Z');
      expect(await inWindow('time_range=today')).to.deep.equal(['t-afternoon', 't-midnight']);
    });

    it('does not hold a workload submitted after now', async () => {
      t.clock.set('2027-08-10T14:59:59.999Z');
      expect(await inWindow('time_range=today')).to.deep.equal(['t-midnight']);
    });
  });

  describe('rolling windows (last_7_days, last_30_days)', () => {
    beforeEach(() => t.clock.set('2027-10-20T12:00:00.000Z'));

    it('last_7_days starts exactly 7 × 24 h before now and ends at now', async () => {
      expect(await inWindow('time_range=last_7_days')).to.deep.equal(['r-7d-edge', 'r-now']);
    });

    it('last_30_days starts exactly 30 × 24 h before now and ends at now', async () => {
      expect(await inWindow('time_range=last_30_days')).to.deep.equal(['r-30d-edge', 'r-7d-before-edge', 'r-7d-edge', 'r-now']);
    });

    it('the default range is last_30_days', async () => {
      expect(await inWindow('')).to.deep.equal(['r-30d-edge', 'r-7d-before-edge', 'r-7d-edge', 'r-now']);
    });

    it('last_30_days reaches into January from March 1 of a leap year (February has 29 days)', async () => {
      t.clock.set('2028-03-01T00:00:00.000Z');
      // 30 days before 2028-03-01T00:00 is 2028-01-31T00:00.
      expect(await inWindow('time_range=last_30_days')).to.deep.equal([
        'l-february-29', 'l-february-29-last', 'l-february-first', 'l-january-last', 'l-march-first',
      ]);
    });

    it('last_7_days from March 1 of a leap year starts on February 23', async () => {
      t.clock.set('2028-03-01T00:00:00.000Z');
      expect(await inWindow('time_range=last_7_days')).to.deep.equal(['l-february-29', 'l-february-29-last', 'l-march-first']);
    });
  });

  describe('custom', () => {
    beforeEach(() => t.clock.set('2027-12-20T00:00:00.000Z'));

    it('with start_date only runs from start_date (inclusive) up to now', async () => {
      expect(await inWindow('time_range=custom&start_date=2027-12-01')).to.deep.equal(['c-before-end', 'c-end', 'c-middle', 'c-start']);
    });

    it('with start_date only leaves out workloads submitted after now', async () => {
      t.clock.set('2027-12-09T23:59:59.999Z');
      expect(await inWindow('time_range=custom&start_date=2027-12-01')).to.deep.equal(['c-before-end', 'c-middle', 'c-start']);
    });

    it('with start_date and end_date includes start_date and excludes end_date', async () => {
      expect(await inWindow('time_range=custom&start_date=2027-12-01&end_date=2027-12-10')).to.deep.equal(['c-before-end', 'c-middle', 'c-start']);
    });

    it('takes date-times with an offset to the millisecond', async () => {
      // 2027-12-05T02:00:00+02:00 is 2027-12-05T00:00:00Z; the end is one millisecond after c-before-end.
      const query = `time_range=custom&start_date=${encodeURIComponent('2027-12-05T02:00:00+02:00')}&end_date=2027-12-10T00:00:00.000Z`;
      expect(await inWindow(query)).to.deep.equal(['c-before-end', 'c-middle']);
      expect(await inWindow('time_range=custom&start_date=2027-12-01T00:00:00.001Z&end_date=2027-12-09T23:59:59.999Z')).to.deep.equal(['c-middle']);
    });
  });

  describe('validation', () => {
    it('custom without start_date is a VALIDATION_ERROR on start_date', async () => {
      expect(await validationDetails('time_range=custom')).to.deep.equal([
        { location: 'query', field: 'start_date', message: 'is required when time_range is custom' },
      ]);
      const withEndOnly = await validationDetails('time_range=custom&end_date=2027-12-10');
      expect(withEndOnly.map((d) => d.field)).to.deep.equal(['start_date']);
    });

    for (const range of ['today', 'this_week', 'this_month', 'last_7_days', 'last_30_days']) {
      it(`start_date with time_range=${range} is a VALIDATION_ERROR on start_date`, async () => {
        const details = await validationDetails(`time_range=${range}&start_date=2027-12-01`);
        expect(details).to.have.length(1);
        expect(details[0]).to.include({ location: 'query', field: 'start_date' });
        expect(details[0]?.message).to.contain(range);
      });
    }

    it('end_date with a non-custom range is a VALIDATION_ERROR on end_date', async () => {
      const details = await validationDetails('time_range=last_7_days&end_date=2027-12-10');
      expect(details).to.have.length(1);
      expect(details[0]).to.include({ location: 'query', field: 'end_date' });
    });

    it('start_date without time_range is a VALIDATION_ERROR, since the default range is last_30_days', async () => {
      const details = await validationDetails('start_date=2027-12-01');
      expect(details.map((d) => d.field)).to.deep.equal(['start_date']);
    });

    it('custom with end_date equal to start_date is a VALIDATION_ERROR on end_date', async () => {
      expect(await validationDetails('time_range=custom&start_date=2027-12-01&end_date=2027-12-01')).to.deep.equal([
        { location: 'query', field: 'end_date', message: 'must be after start_date' },
      ]);
    });

    it('custom with end_date before start_date is a VALIDATION_ERROR on end_date', async () => {
      const details = await validationDetails('time_range=custom&start_date=2027-12-10&end_date=2027-12-01T23:00:00Z');
      expect(details.map((d) => d.field)).to.deep.equal(['end_date']);
    });

    it('a date that does not exist is a VALIDATION_ERROR on start_date', async () => {
      const details = await validationDetails('time_range=custom&start_date=2027-02-29');
      expect(details.map((d) => d.field)).to.deep.equal(['start_date']);
    });

    it('an unknown time_range is a VALIDATION_ERROR listing the ranges', async () => {
      const details = await validationDetails('time_range=yesterday');
      expect(details).to.have.length(1);
      expect(details[0]).to.include({ location: 'query', field: 'time_range' });
      expect(details[0]?.message).to.contain('today, this_week, this_month, last_7_days, last_30_days, custom');
    });

    it('an unknown group_by is a VALIDATION_ERROR listing the keys', async () => {
      const details = await validationDetails('group_by=status');
      expect(details).to.have.length(1);
      expect(details[0]).to.include({ location: 'query', field: 'group_by' });
      expect(details[0]?.message).to.contain('submitted_by, initiative_id, instance_type');
    });
  });
});
