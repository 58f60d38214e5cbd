// The bound on queue percentiles (src/store/statistics/queue-percentiles.ts, wait-buckets.ts), on the
// test backend: up to `exactWaits` workloads in the filter they are exact; past it they come from wait
// buckets, each the wait of one of the workloads, never above the exact percentile and less than
// WAIT_BUCKET_ERROR (1/128) below it; and a group's buckets stay a few thousand whatever its waits.
import { expect } from 'chai';
import { nearestRank, PERCENTILES } from '../../../src/domain/percentiles.js';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import { EXACT_QUEUE_WAITS, WAIT_BUCKET_ERROR, type QueuePercentiles, type WorkloadFilter } from '../../../src/query/ports.js';
import { waitBucket, waitBucketSql, WaitBuckets } from '../../../src/store/statistics/wait-buckets.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aWorkload } from '../../support/workload-builder.js';

const DAY_START = Date.parse('2026-11-10T00:00:00Z');
const NOW = Date.parse('2026-11-20T00:00:00Z');
const COUNT = 1_200;
const TEAMS = ['llm', 'vision', 'audio'];

/**
 * A few waits on the buckets' edges; then every other one spread from 0 to about 35 days over every
 * octave, and the rest dense between 100,000 and 110,000 s, many to a bucket (512 s wide there).
 */
function waitMsOf(i: number): number {
  const edges = [255_999, 256_000, 511_999, 512_000, 1_023_500, 65_536_000];
  if (i < edges.length) return edges[i] as number;
  const spread = ((i * 2_654_435_761) % 1_000_003) / 1_000_003; // deterministic, in [0, 1)
  return i % 2 === 0 ? Math.floor(1000 * 2 ** (spread * 21.5)) + (i % 1000) : Math.floor(100_000_000 + spread * 10_000_000);
}

const WORKLOADS: WorkloadRecord[] = Array.from({ length: COUNT }, (_, i) => {
  const submittedAt = DAY_START + i * 60_000;
  const startedAt = submittedAt + waitMsOf(i);
  return aWorkload({
    workloadId: `e${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
    initiativeId: TEAMS[i % TEAMS.length] as string,
    submittedAt,
    startedAt,
    completedAt: startedAt + 3_600_000,
  });
});

const FILTER: WorkloadFilter = { scope: { organizationId: 'acme', initiatives: null }, submittedFrom: DAY_START, submittedBefore: NOW };
const secondsOf = (w: WorkloadRecord): number => Math.floor(((w.startedAt as number) - w.submittedAt) / 1000);

/** The exact nearest-rank percentiles of the workloads' waits in whole seconds. */
function exactOf(workloads: readonly WorkloadRecord[]): number[] {
  const sorted = workloads.map(secondsOf).sort((a, b) => a - b);
  return PERCENTILES.map((p) => sorted[nearestRank(p, sorted.length) - 1] as number);
}

describe('store/statistics queue percentiles bound', function () {
  this.timeout(120_000);
  let t: TestIndex;
  before(async () => {
    t = await openTestIndex({ clock: new FixedClock(NOW) });
    await t.seed.upsertWorkloads(WORKLOADS);
  });
  after(() => t.close());

  const read = (exactWaits: number | undefined): Promise<QueuePercentiles> =>
    t.index.queuePercentiles(FILTER, { groupBy: 'initiative_id', percentiles: PERCENTILES, ...(exactWaits === undefined ? {} : { exactWaits }) }, NOW);

  it(`is exact up to exactWaits workloads (default ${EXACT_QUEUE_WAITS.toLocaleString('en-US')})`, async () => {
    for (const exactWaits of [undefined, COUNT]) {
      const answer = await read(exactWaits);
      expect(answer.exact, String(exactWaits)).to.equal(true);
      expect(answer.summary).to.deep.equal(exactOf(WORKLOADS));
      for (const team of TEAMS) {
        expect(answer.groups.find((g) => g.key === team)?.values, team).to.deep.equal(exactOf(WORKLOADS.filter((w) => w.initiativeId === team)));
      }
    }
  });

  it('past exactWaits, answers from buckets: a wait of the range, at most 1/128 below the exact one, never above', async () => {
    const answer = await read(COUNT - 1);
    expect(answer.exact).to.equal(false);
    const waits = new Set(WORKLOADS.map(secondsOf));
    const within = (got: (number | null)[], exact: number[], label: string) =>
      exact.forEach((x, i) => {
        const value = got[i] as number;
        expect(waits.has(value), `${label} p${PERCENTILES[i]} ${value} is a workload's wait`).to.equal(true);
        expect(value, `${label} p${PERCENTILES[i]}`).to.be.at.most(x).and.at.least(x * (1 - WAIT_BUCKET_ERROR));
      });
    within(answer.summary, exactOf(WORKLOADS), 'summary');
    expect(answer.groups.map((g) => g.key).sort()).to.deep.equal([...TEAMS].sort());
    for (const team of TEAMS) within(answer.groups.find((g) => g.key === team)?.values ?? [], exactOf(WORKLOADS.filter((w) => w.initiativeId === team)), team);
    // Far enough apart that the bound is not met by luck: some percentile is off the exact one.
    const exactOnes = await read(undefined);
    const byTeam = (of: QueuePercentiles) => TEAMS.flatMap((team) => of.groups.find((g) => g.key === team)?.values ?? []);
    expect([...answer.summary, ...byTeam(answer)]).to.not.deep.equal([...exactOnes.summary, ...byTeam(exactOnes)]);
  });

  it('answers null in a summary of no workload, and from buckets past an exactWaits of 0', async () => {
    const empty = await t.index.queuePercentiles({ ...FILTER, initiativeId: 'nobody' }, { groupBy: null, percentiles: [50, 99], exactWaits: 0 }, NOW);
    expect(empty).to.deep.equal({ exact: true, summary: [null, null], groups: [] });
    const one: WorkloadFilter = { ...FILTER, submittedBefore: DAY_START + 60_000 };
    const single = await t.index.queuePercentiles(one, { groupBy: null, percentiles: [50, 99], exactWaits: 0 }, NOW);
    expect(single).to.deep.equal({ exact: false, summary: [255, 255], groups: [] });
  });

  it('buckets in SQL exactly as in JavaScript, on the edges of every octave', async () => {
    const values = [0, 1, 255, 256, 257, 511, 512, 513];
    for (let bits = 10; bits <= 46; bits += 3) values.push(2 ** bits - 1, 2 ** bits, 2 ** bits + 12_345);
    for (const value of values) {
      const [row] = await t.sql(`SELECT ${waitBucketSql('x.s')} AS bucket FROM (SELECT CAST(? AS BIGINT) AS s) AS x`, [value]);
      expect(Number(row?.bucket), String(value)).to.equal(waitBucket(value));
    }
  });
});

describe('store/statistics wait buckets', () => {
  it('holds at most 256 + 128 buckets per doubling in a group, whatever the waits', () => {
    const buckets = new WaitBuckets();
    for (let i = 0; i < 200_000; i++) buckets.add('', Math.floor(2 ** ((i * 0.618_033_988_7) % 31)));
    const held = buckets.rows().length;
    expect(held).to.be.at.most(256 + 128 * (31 - 8));
    expect(buckets.rows().reduce((sum, row) => sum + row.n, 0)).to.equal(200_000);
  });

  it('spans less than 1/128 of any wait in a bucket', () => {
    for (let s = 0; s < 3_000_000; s += 997) {
      const low = waitBucket(s);
      expect(low).to.be.at.most(s);
      expect(s - low).to.be.below(Math.max(1, s * WAIT_BUCKET_ERROR));
    }
  });
});
