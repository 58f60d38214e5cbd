// The read pool against the main-thread store on the same real SQLite file, with real worker threads:
// the same answers for every read of the WorkloadIndex port, every committed write visible to the
// next read, the same errors, back-pressure, and a main thread that stays free while reads run.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import BetterSqlite3 from 'better-sqlite3';
import type { WorkloadRecord } from '../../../../src/domain/workload.js';
import type { Keyset, WorkloadFilter, WorkloadIndex } from '../../../../src/query/ports.js';
import { IndexBusyError } from '../../../../src/query/ports.js';
import { ReadPool } from '../../../../src/store/sqlite/threads/read-pool.js';
import { rejectionOf } from '../../../support/rejection.js';
import { aPodInterval, aWorkload } from '../../../support/workload-builder.js';
import { at, HOUR_MS, inOrg, openTempStore, type TempStore } from '../../temp-store.js';
import { sqliteOnly } from '../../../support/backend.js';

const NOW = at('2026-11-20T12:00:00Z');
const TEAM = { organizationId: 'acme', initiatives: ['llm', 'vision'] };
const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
/** The most reads of one burst: the pool's queue (maxQueue below) holds all but the one running. */
const MAX_BURST = 4096;

/** A mixed index: two organizations, three teams, every status, open and closed pods. */
async function seed(t: TempStore, count: number): Promise<WorkloadRecord[]> {
  const workloads = Array.from({ length: count }, (_, i) => {
    const status = STATUSES[i % STATUSES.length] ?? 'completed';
    const submittedAt = at('2026-10-01T00:00:00Z') + i * 7 * 60_000;
    const started = status === 'pending' ? null : submittedAt + 60_000;
    const finished = status === 'pending' || status === 'running' ? null : submittedAt + (1 + (i % 5)) * HOUR_MS;
    return aWorkload({
      organizationId: i % 9 === 0 ? 'globex' : 'acme',
      initiativeId: ['llm', 'vision', 'speech'][i % 3],
      submittedBy: `user-${i % 11}`,
      instanceType: i % 4 === 0 ? 'a100' : 'h100',
      gpuCount: [1, 2, 4, 8][i % 4],
      isManaged: i % 2 === 0,
      status,
      submittedAt,
      startedAt: started,
      completedAt: finished,
      exitCode: status === 'failed' ? 1 : status === 'completed' ? 0 : null,
    });
  });
  await t.store.upsertWorkloads(workloads);
  await t.store.upsertPodIntervals(workloads.filter((w) => w.startedAt !== null).map((w) => aPodInterval(w)));
  return workloads;
}

async function allPages(index: WorkloadIndex, filter: WorkloadFilter, limit: number) {
  const pages = [];
  let after: Keyset | null = null;
  for (;;) {
    const page = await index.list(filter, { limit, after });
    pages.push(page);
    const last = page.items.at(-1);
    if (!page.hasMore || last === undefined) return pages;
    after = { submittedAt: last.submittedAt, workloadId: last.workloadId };
  }
}

sqliteOnly.describe('read pool', function () {
  // Each pool start loads the worker through tsx: about a second on a busy machine.
  this.timeout(60_000);

  describe('answers', () => {
    let t: TempStore;
    let pool: ReadPool;
    let workloads: WorkloadRecord[];

    before(async () => {
      t = openTempStore();
      workloads = await seed(t, 300);
      pool = await ReadPool.open({ dbPath: t.path, size: 2 });
    });
    after(async () => {
      await pool?.close();
      t?.close();
    });

    const filters: [string, WorkloadFilter][] = [
      ['the whole organization', inOrg()],
      ['a team scope', inOrg({}, TEAM)],
      ['a status and a submitter', inOrg({ status: 'running', submittedBy: 'user-3' })],
      ['a date range, managed only', inOrg({ submittedFrom: at('2026-10-05T00:00:00Z'), submittedBefore: at('2026-10-20T00:00:00Z'), isManaged: true })],
      ['a team without teams', inOrg({}, { organizationId: 'acme', initiatives: [] })],
    ];

    for (const [name, filter] of filters) {
      it(`list pages through ${name} as the main-thread store does`, async () => {
        expect(await allPages(pool.index, filter, 17)).to.deep.equal(await allPages(t.index, filter, 17));
      });

      it(`stats of ${name}, without and with each group_by, equal the main-thread store's`, async () => {
        for (const groupBy of [null, 'submitted_by', 'initiative_id', 'instance_type'] as const) {
          expect(await pool.index.stats(filter, groupBy, NOW), String(groupBy)).to.deep.equal(await t.index.stats(filter, groupBy, NOW));
        }
      });

      it(`rankByGpuHours, usage and activeGpus of ${name} equal the main-thread store's`, async () => {
        for (const order of ['asc', 'desc'] as const) {
          const options = { order, limit: 7, now: NOW };
          expect(await pool.index.rankByGpuHours(filter, options)).to.deep.equal(await t.index.rankByGpuHours(filter, options));
        }
        for (const window of [{ from: null, to: NOW }, { from: at('2026-10-10T00:00:00Z'), to: at('2026-10-12T00:00:00Z') }]) {
          expect(await pool.index.usage(filter, window)).to.deep.equal(await t.index.usage(filter, window));
        }
        expect(await pool.index.activeGpus(filter)).to.equal(await t.index.activeGpus(filter));
      });
    }

    it('describe answers the same Map as the main-thread store', async () => {
      const ids = [...workloads.slice(0, 40).map((w) => w.workloadId), 'not-a-workload'];
      const described = await pool.index.describe(ids, inOrg({}, TEAM));
      expect(described).to.be.instanceOf(Map);
      expect(described.size).to.be.greaterThan(0);
      expect(described).to.deep.equal(await t.index.describe(ids, inOrg({}, TEAM)));
    });

    it('get reads a running workload at the caller\'s `now`, not the worker\'s clock', async () => {
      const running = workloads.find((w) => w.status === 'running') as WorkloadRecord;
      for (const now of [NOW, NOW + 5 * HOUR_MS]) {
        const view = await pool.index.get(running.workloadId, now);
        expect(view).to.deep.equal(await t.index.get(running.workloadId, now));
      }
      expect((await pool.index.get(running.workloadId, NOW + HOUR_MS))?.durationSeconds).to.equal(
        ((await pool.index.get(running.workloadId, NOW))?.durationSeconds ?? 0) + 3600,
      );
      expect(await pool.index.get('not-a-workload', NOW)).to.equal(undefined);
    });

    it('every write committed on the main thread is seen by the next read through the pool', async () => {
      for (let i = 0; i < 20; i++) {
        const workload = aWorkload({ workloadId: `fresh-${i}`, status: 'running', submittedAt: NOW + i, completedAt: null, exitCode: null });
        await t.store.upsertWorkloads([workload]);
        await t.store.upsertPodIntervals([aPodInterval(workload)]);
        const [page, view] = await Promise.all([pool.index.list(inOrg(), { limit: 1, after: null }), pool.index.get(workload.workloadId, NOW + HOUR_MS)]);
        expect(page.items[0]?.workloadId).to.equal(workload.workloadId);
        expect(view?.gpuHoursUsed).to.be.greaterThan(0);
        expect(page.totalCount).to.equal((await t.index.list(inOrg(), { limit: 1, after: null })).totalCount);
      }
    });

    it('an SQLite error keeps its class, code and message', async () => {
      const bad = () => ({ limit: 'x' as unknown as number, after: null });
      const expected = await rejectionOf(t.index.list(inOrg(), bad()));
      const error = await rejectionOf(pool.index.list(inOrg(), bad()));
      expect(expected).to.be.instanceOf(BetterSqlite3.SqliteError);
      expect(error).to.be.instanceOf(BetterSqlite3.SqliteError);
      expect({ code: (error as { code?: string }).code, message: error.message }).to.deep.equal({ code: 'SQLITE_MISMATCH', message: expected.message });
    });

    it('a binding error keeps its built-in class and message', async () => {
      const expected = await rejectionOf(t.index.get({} as unknown as string, NOW));
      const error = await rejectionOf(pool.index.get({} as unknown as string, NOW));
      expect(error).to.be.instanceOf(expected.constructor as ErrorConstructor);
      expect(error.message).to.equal(expected.message);
      // The pool still answers afterwards: the failed call's transaction was ended.
      expect((await pool.index.list(inOrg(), { limit: 1, after: null })).items).to.have.length(1);
    });
  });

  describe('back-pressure', () => {
    it('refuses calls past maxQueue with an IndexBusyError saying when to retry, and answers the rest', async () => {
      const t = openTempStore();
      await seed(t, 50);
      const pool = await ReadPool.open({ dbPath: t.path, size: 1, maxQueue: 2 });
      try {
        const calls = Array.from({ length: 5 }, () => pool.index.stats(inOrg(), 'submitted_by', NOW).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ));
        expect(pool.status()).to.include({ busy: 1, queued: 2 });
        const outcomes = await Promise.all(calls);
        const expected = await t.index.stats(inOrg(), 'submitted_by', NOW);
        expect(outcomes.slice(0, 3)).to.deep.equal([{ value: expected }, { value: expected }, { value: expected }]);
        for (const outcome of outcomes.slice(3)) {
          const error = (outcome as { error: unknown }).error;
          expect(error).to.be.instanceOf(IndexBusyError);
          expect(error).to.include({ retryAfterSeconds: 1, message: 'The index is busy: 2 reads are waiting for a worker; retry shortly' });
        }
        expect(pool.status()).to.include({ busy: 0, queued: 0 });
      } finally {
        await pool.close();
        t.close();
      }
    });
  });

  describe('heavy reads', () => {
    it('never hold every worker: a list page overtakes waiting statistics', async () => {
      const t = openTempStore();
      await seed(t, 50);
      const pool = await ReadPool.open({ dbPath: t.path, size: 2 });
      try {
        const heavy = [pool.index.stats(inOrg(), null, NOW), pool.index.rankByGpuHours(inOrg(), { order: 'desc', limit: 5, now: NOW }), pool.index.usage(inOrg(), { from: null, to: NOW })];
        expect(pool.status(), 'one heavy read runs, two wait').to.include({ busy: 1, queued: 2 });
        const page = pool.index.list(inOrg(), { limit: 5, after: null });
        expect(pool.status(), 'the list page took the second worker').to.include({ busy: 2, queued: 2 });
        expect(await page).to.deep.equal(await t.index.list(inOrg(), { limit: 5, after: null }));
        await Promise.all(heavy);
        expect(pool.status()).to.include({ busy: 0, queued: 0 });
      } finally {
        await pool.close();
        t.close();
      }
    });
  });

  describe('the main thread while reads run', () => {
    let t: TempStore;
    let pool: ReadPool;

    before(async () => {
      t = openTempStore();
      await seed(t, 4000);
      pool = await ReadPool.open({ dbPath: t.path, size: 1, maxQueue: MAX_BURST });
    });
    after(async () => {
      await pool?.close();
      t?.close();
    });

    /** The longest gap between the ticks of a 2 ms interval timer while `work` runs: how long the loop was held. */
    async function longestTimerGap<T>(work: () => Promise<T>): Promise<{ result: T; maxGapMs: number }> {
      let last = performance.now();
      let maxGapMs = 0;
      const ticker = setInterval(() => {
        const now = performance.now();
        maxGapMs = Math.max(maxGapMs, now - last);
        last = now;
      }, 2);
      try {
        const result = await work();
        return { result, maxGapMs: Math.max(maxGapMs, performance.now() - last) };
      } finally {
        clearInterval(ticker);
      }
    }

    /** The machine's own stalls: the longest timer gap over `ms` with nothing to do. */
    async function idleGap(ms: number): Promise<number> {
      return (await longestTimerGap(() => sleep(ms))).maxGapMs;
    }

    /** Issues `count` reads at once (on the main thread they would run back to back, holding the loop). */
    async function burst(count: number, read: (index: WorkloadIndex) => Promise<unknown>, tag: string) {
      const started = performance.now();
      const { result, maxGapMs } = await longestTimerGap(async () => {
        const reads = Promise.all(Array.from({ length: count }, () => read(pool.index)));
        // A write while the worker is busy: it commits at once, without waiting for the reads.
        await sleep(5);
        const busy = pool.status().busy;
        await t.store.upsertWorkloads([aWorkload({ workloadId: `written-during-${tag}`, submittedAt: NOW + count })]);
        const queuedAfterWrite = pool.status().queued;
        return { busy, queuedAfterWrite, answered: (await reads).length };
      });
      return { readsMs: performance.now() - started, maxGapMs, ...result };
    }

    it('keeps its timers as on time as an idle loop, and writes, while a worker is busy with heavy reads', async () => {
      // Statistics grouped by submitter over a date range: a scan of every row of the range.
      const range = inOrg({ submittedFrom: at('2026-10-02T00:00:00Z'), submittedBefore: NOW });
      const read = (index: WorkloadIndex) => index.stats(range, 'submitted_by', NOW);
      // The bound is the machine's own: the longest gap of an idle loop, here and now, plus a quarter
      // of the reads' time. Reads on the main thread would hold the loop for all of that time at once,
      // so the reads are doubled until they last four idle gaps at least (and a quarter second): on a
      // noisy machine the burst grows rather than the bound losing its meaning.
      let idleMs = await idleGap(250);
      for (let count = 16; ; count *= 2) {
        const outcome = await burst(count, read, String(count));
        const last = count >= MAX_BURST;
        if (outcome.readsMs < Math.max(250, 4 * idleMs) && !last) continue;
        // Idle again for as long as the reads took: a stall of the machine during them would show here too.
        idleMs = Math.max(idleMs, await idleGap(outcome.readsMs));
        if (outcome.readsMs < 4 * idleMs && !last) continue;
        const bound = idleMs + outcome.readsMs / 4;
        expect(outcome.maxGapMs, `longest timer gap ${outcome.maxGapMs.toFixed(1)} ms while ${count} reads took ${outcome.readsMs.toFixed(0)} ms; ` +
          `idle, the longest gap was ${idleMs.toFixed(1)} ms, so the bound is ${bound.toFixed(1)} ms`).to.be.lessThan(bound);
        expect(outcome).to.include({ busy: 1, answered: count });
        expect(outcome.queuedAfterWrite, 'reads still waiting after the write').to.be.greaterThan(0);
        expect((await pool.index.list(inOrg(), { limit: 1, after: null })).items[0]?.workloadId).to.equal(`written-during-${count}`);
        return;
      }
    });
  });
});
