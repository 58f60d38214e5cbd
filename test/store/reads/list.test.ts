import { expect } from 'chai';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import type { Keyset, ListPage, WorkloadFilter } from '../../../src/query/ports.js';
import { systemClock } from '../../../src/domain/clock.js';
import { SQLITE } from '../../../src/store/sql/dialect.js';
import { describeQuery, listQuery } from '../../../src/store/reads/list-queries.js';
import { sqliteOnly } from '../../support/backend.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aWorkload } from '../../support/workload-builder.js';
import { ADMIN, at, inOrg, ORG, openTempStore, type TempStore } from '../temp-store.js';

const ids = (records: readonly WorkloadRecord[]) => records.map((r) => r.workloadId);
const keysetOf = (record: WorkloadRecord): Keyset => ({ submittedAt: record.submittedAt, workloadId: record.workloadId });
/** The cursor after a page, as the query layer builds it from the page's last item. */
function cursorAfter(page: ListPage): Keyset {
  const last = page.items.at(-1);
  if (last === undefined) throw new Error('The page is empty');
  return keysetOf(last);
}
/** The list order: submitted_at DESC, workload_id DESC. */
const inListOrder = (records: readonly WorkloadRecord[]) =>
  [...records].sort((a, b) => b.submittedAt - a.submittedAt || (a.workloadId < b.workloadId ? 1 : a.workloadId > b.workloadId ? -1 : 0));

/** Whether a stored row matches the filter: the definition the list's count must agree with. */
function matches(row: Record<string, unknown>, filter: WorkloadFilter): boolean {
  const { organizationId, initiatives } = filter.scope;
  const at = Number(row.submitted_at);
  return row.organization_id === organizationId
    && (initiatives === null || initiatives.includes(String(row.initiative_id)))
    && (filter.initiativeId === undefined || row.initiative_id === filter.initiativeId)
    && (filter.status === undefined || row.status === filter.status)
    && (filter.submittedBy === undefined || row.submitted_by === filter.submittedBy)
    && (filter.isManaged === undefined || Number(row.is_managed) === (filter.isManaged ? 1 : 0))
    && (filter.submittedFrom === undefined || at >= filter.submittedFrom)
    && (filter.submittedBefore === undefined || at < filter.submittedBefore);
}

describe('store/workload-reads list', () => {
  let t: TestIndex;
  beforeEach(async () => {
    t = await openTestIndex({ clock: systemClock });
  });
  afterEach(() => t.close());

  async function all(filter: WorkloadFilter): Promise<string[]> {
    return ids((await t.index.list(filter, { limit: 100, after: null })).items);
  }

  it('orders by submitted_at descending, then workload_id descending', async () => {
    const sameTime = at('2026-11-10T10:00:00Z');
    const records = [
      aWorkload({ workloadId: 'b', submittedAt: sameTime }),
      aWorkload({ workloadId: 'c', submittedAt: sameTime }),
      aWorkload({ workloadId: 'a', submittedAt: sameTime }),
      aWorkload({ workloadId: 'z', submittedAt: sameTime - 1 }),
      aWorkload({ workloadId: 'y', submittedAt: sameTime + 1 }),
    ];
    await t.seed.upsertWorkloads(records);
    expect(await all(inOrg())).to.deep.equal(['y', 'c', 'b', 'a', 'z']);
  });

  describe('filters', () => {
    const base = at('2026-11-10T00:00:00Z');
    let llm: WorkloadRecord, vision: WorkloadRecord, running: WorkloadRecord, bob: WorkloadRecord, unmanaged: WorkloadRecord, otherOrg: WorkloadRecord;

    beforeEach(async ()  => {
      llm = aWorkload({ initiativeId: 'llm', submittedAt: base });
      vision = aWorkload({ initiativeId: 'vision', submittedAt: base + 1000 });
      running = aWorkload({ status: 'running', completedAt: null, exitCode: null, submittedAt: base + 2000 });
      bob = aWorkload({ submittedBy: 'bob', submittedAt: base + 3000 });
      unmanaged = aWorkload({ isManaged: false, submittedAt: base + 4000 });
      otherOrg = aWorkload({ organizationId: 'globex', submittedAt: base + 5000 });
      await t.seed.upsertWorkloads([llm, vision, running, bob, unmanaged, otherOrg]);
    });

    it('keeps to the scope\'s organization', async () => {
      expect(await all(inOrg())).to.not.include(otherOrg.workloadId);
      expect(await all({ scope: { organizationId: 'globex', initiatives: null } })).to.deep.equal([otherOrg.workloadId]);
    });

    it('filters by initiative_id', async () => {
      expect(await all(inOrg({ initiativeId: 'vision' }))).to.deep.equal([vision.workloadId]);
    });

    it('filters by status', async () => {
      expect(await all(inOrg({ status: 'running' }))).to.deep.equal([running.workloadId]);
      expect(await all(inOrg({ status: 'cancelled' }))).to.deep.equal([]);
    });

    it('filters by submitted_by', async () => {
      expect(await all(inOrg({ submittedBy: 'bob' }))).to.deep.equal([bob.workloadId]);
    });

    it('filters by is_managed, both ways', async () => {
      expect(await all(inOrg({ isManaged: false }))).to.deep.equal([unmanaged.workloadId]);
      expect(await all(inOrg({ isManaged: true }))).to.have.lengthOf(4);
    });

    it('takes start inclusive and end exclusive on submitted_at', async () => {
      expect(await all(inOrg({ submittedFrom: base + 1000, submittedBefore: base + 3000 }))).to.deep.equal(
        [running.workloadId, vision.workloadId],
      );
    });

    it('combines filters', async () => {
      expect(await all(inOrg({ initiativeId: 'llm', isManaged: true, status: 'completed', submittedBy: 'alice' }))).to.deep.equal([llm.workloadId]);
    });

    it('shows an admin scope every initiative', async () => {
      expect(await all(inOrg())).to.have.lengthOf(5);
    });

    it('shows a team scope only its initiatives', async () => {
      const scope = { organizationId: ORG, initiatives: ['vision'] };
      expect(await all({ scope })).to.deep.equal([vision.workloadId]);
      expect(await all({ scope, initiativeId: 'llm' })).to.deep.equal([]);
      const both = { organizationId: ORG, initiatives: ['vision', 'llm'] };
      expect(await all({ scope: both })).to.have.lengthOf(5);
    });

    it('shows a scope with no initiatives nothing', async () => {
      const page = await t.index.list({ scope: { organizationId: ORG, initiatives: [] } }, { limit: 100, after: null });
      expect(page).to.deep.equal({ items: [], totalCount: 0, hasMore: false });
    });
  });

  it('pages a team scope of several initiatives in list order, each row once, with ties across teams', async () => {
    // Teams interleave in time and share timestamps, so the per-team pages must merge exactly.
    const teams = ['llm', 'vision', 'speech'];
    const scoped = Array.from({ length: 90 }, (_, i) =>
      aWorkload({ initiativeId: teams[i % 3] ?? 'llm', submittedAt: at('2026-11-01T00:00:00Z') + Math.floor(i / 4) * 60_000, status: i % 5 === 0 ? 'running' : 'completed' }),
    );
    await t.seed.upsertWorkloads([...scoped, aWorkload({ initiativeId: 'audio', submittedAt: at('2026-11-01T00:00:30Z') })]);
    const scope = { organizationId: ORG, initiatives: ['llm', 'vision', 'speech', 'llm'] };
    for (const [filter, expected] of [
      [{ scope }, scoped],
      [{ scope, status: 'running' as const }, scoped.filter((r) => r.status === 'running')],
    ] as const) {
      const seen: string[] = [];
      let after: Keyset | null = null;
      for (let pages = 0; pages < 20; pages += 1) {
        const page: ListPage = await t.index.list(filter, { limit: 7, after });
        expect(page.totalCount).to.equal(expected.length);
        seen.push(...ids(page.items));
        if (!page.hasMore) break;
        after = cursorAfter(page);
      }
      expect(seen).to.deep.equal(ids(inListOrder(expected)));
    }
  });

  describe('paging', () => {
    const start = at('2026-11-01T00:00:00Z');
    let records: WorkloadRecord[];

    beforeEach(async ()  => {
      // Pairs share a submitted_at so that the cursor must break ties on workload_id.
      records = Array.from({ length: 250 }, (_, i) => aWorkload({ submittedAt: start + Math.floor(i / 2) * 60_000 }));
      await t.seed.upsertWorkloads(records);
    });

    it('returns each row exactly once over pages of 100, with totalCount and hasMore', async () => {
      const seen: string[] = [];
      let after: Keyset | null = null;
      const pages: { size: number; totalCount: number; hasMore: boolean }[] = [];
      for (;;) {
        const page = await t.index.list(inOrg(), { limit: 100, after });
        pages.push({ size: page.items.length, totalCount: page.totalCount, hasMore: page.hasMore });
        seen.push(...ids(page.items));
        if (!page.hasMore) break;
        after = cursorAfter(page);
      }
      expect(pages).to.deep.equal([
        { size: 100, totalCount: 250, hasMore: true },
        { size: 100, totalCount: 250, hasMore: true },
        { size: 50, totalCount: 250, hasMore: false },
      ]);
      expect(seen).to.deep.equal(ids(inListOrder(records)));
    });

    it('does not show rows submitted after paging began (they sort before the cursor)', async () => {
      const first = await t.index.list(inOrg(), { limit: 100, after: null });
      const newer = Array.from({ length: 30 }, (_, i) => aWorkload({ submittedAt: start + 10 * 86_400_000 + i }));
      await t.seed.upsertWorkloads(newer);

      const second = await t.index.list(inOrg(), { limit: 100, after: cursorAfter(first) });
      const third = await t.index.list(inOrg(), { limit: 100, after: cursorAfter(second) });
      const seen = [...ids(first.items), ...ids(second.items), ...ids(third.items)];
      expect(seen).to.deep.equal(ids(inListOrder(records)));
      expect(third.hasMore).to.equal(false);
      expect(second.totalCount).to.equal(280);
      expect((await t.index.list(inOrg(), { limit: 100, after: null })).items.slice(0, 30).map((r) => r.workloadId))
        .to.have.members(ids(newer));
    });

    it('pages correctly with an end date, whichever bound is tighter', async () => {
      const before = start + 100 * 60_000; // the first 200 records
      const expected = ids(inListOrder(records.filter((r) => r.submittedAt < before)));
      const first = await t.index.list(inOrg({ submittedBefore: before }), { limit: 100, after: null });
      const second = await t.index.list(inOrg({ submittedBefore: before }), { limit: 100, after: cursorAfter(first) });
      expect([...ids(first.items), ...ids(second.items)]).to.deep.equal(expected);
      expect(second.hasMore).to.equal(false);

      // A cursor beyond the end date must not widen the filter.
      const beyond = { submittedAt: start + 200 * 60_000, workloadId: 'zzz' };
      const page = await t.index.list(inOrg({ submittedBefore: before }), { limit: 100, after: beyond });
      expect(ids(page.items)).to.deep.equal(expected.slice(0, 100));
    });

    it('counts every match whatever the page size', async () => {
      const page = await t.index.list(inOrg(), { limit: 1, after: null });
      expect(page.items).to.have.lengthOf(1);
      expect(page.totalCount).to.equal(250);
      expect(page.hasMore).to.equal(true);
    });
  });

  describe('totalCount', () => {
    /** The rows of the table itself that match: the count the rollup must give. */
    async function counted(filter: WorkloadFilter): Promise<number> {
      const rows = await t.sql('SELECT organization_id, initiative_id, status, submitted_by, is_managed, submitted_at FROM workloads');
      return rows.filter((row) => matches(row, filter)).length;
    }

    const filters: WorkloadFilter[] = [
      inOrg(),
      inOrg({ status: 'running' }),
      inOrg({ initiativeId: 'vision', status: 'completed' }),
      inOrg({ submittedBy: 'bob', isManaged: false }),
      inOrg({ isManaged: true }),
      inOrg({ submittedFrom: at('2026-11-03T00:00:00Z') }),
      { scope: { organizationId: ORG, initiatives: ['llm', 'audio'] } },
      { scope: { organizationId: ORG, initiatives: ['llm'] }, status: 'failed' },
      { scope: { organizationId: 'globex', initiatives: null } },
    ];

    it('matches COUNT(*) of the filter through inserts, updates of counted fields and deletes', async () => {
      const statuses = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
      const records = Array.from({ length: 120 }, (_, i) => aWorkload({
        organizationId: i % 7 === 0 ? 'globex' : ORG,
        initiativeId: ['llm', 'vision', 'audio'][i % 3],
        submittedBy: ['alice', 'bob'][i % 2],
        status: statuses[i % 5],
        isManaged: i % 4 !== 0,
        submittedAt: at('2026-11-01T00:00:00Z') + i * 3_600_000,
        completedAt: at('2026-11-01T00:00:00Z') + i * 3_600_000,
        resourceVersion: '1',
      }));
      const check = async (stage: string) => {
        for (const filter of filters) {
          const page = await t.index.list(filter, { limit: 5, after: null });
          expect(page.totalCount, `${stage}: ${JSON.stringify(filter)}`).to.equal(await counted(filter));
        }
      };
      await t.seed.upsertWorkloads(records);
      await check('after insert');

      await t.seed.upsertWorkloads(records.filter((_, i) => i % 3 === 0).map((r, i) => ({
        ...r, resourceVersion: '2', status: statuses[(i + 2) % 5], initiativeId: 'audio', submittedBy: 'carol', isManaged: !r.isManaged,
        organizationId: i % 5 === 0 ? 'globex' : r.organizationId,
      })));
      await t.seed.upsertWorkloads(records.filter((_, i) => i % 3 === 1).map((r) => ({ ...r, resourceVersion: '3', name: 'renamed' })));
      await check('after update');

      expect(await t.seed.deleteFinishedBatch(at('2026-11-03T00:00:00Z'), 1000)).to.be.greaterThan(0);
      await check('after retention');
    });

    it('counts with dates from the table itself', async () => {
      await t.seed.upsertWorkloads([aWorkload({ submittedAt: at('2026-11-01T00:00:00Z') }), aWorkload({ submittedAt: at('2026-11-05T00:00:00Z') })]);
      const page = await t.index.list(inOrg({ submittedBefore: at('2026-11-02T00:00:00Z') }), { limit: 5, after: null });
      expect(page.totalCount).to.equal(1);
    });
  });

  sqliteOnly.describe('the list\'s SQLite query plans', () => {
    let lite: TempStore;
    beforeEach(() => {
      lite = openTempStore();
    });
    afterEach(() => lite.close());

    const filters: Record<string, Partial<WorkloadFilter>> = {
      none: {},
      initiative_id: { initiativeId: 'llm' },
      status: { status: 'running' },
      submitted_by: { submittedBy: 'alice' },
      is_managed: { isManaged: false },
      start_date: { submittedFrom: at('2026-11-01T00:00:00Z') },
      end_date: { submittedBefore: at('2026-12-01T00:00:00Z') },
      'start_date and end_date': { submittedFrom: at('2026-11-01T00:00:00Z'), submittedBefore: at('2026-12-01T00:00:00Z') },
    };

    function planOf(filter: WorkloadFilter, after: Keyset | null): string[] {
      const query = listQuery(SQLITE, filter, after);
      return (lite.db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all({ ...query.params, limit: 21 }) as { detail: string }[])
        .map((row) => row.detail);
    }

    for (const [name, extra] of Object.entries(filters)) {
      for (const after of [null, { submittedAt: at('2026-11-15T00:00:00Z'), workloadId: 'm' }]) {
        it(`walks an index in list order for filter ${name}${after ? ' after a cursor' : ''}`, () => {
          const plan = planOf(inOrg(extra), after);
          expect(plan.some((line) => /^SEARCH w USING (COVERING )?INDEX workloads_org_/.test(line)), plan.join('\n')).to.equal(true);
          expect(plan.filter((line) => /^SCAN w\b/.test(line)), plan.join('\n')).to.deep.equal([]);
          expect(plan.filter((line) => /TEMP B-TREE/.test(line)), plan.join('\n')).to.deep.equal([]);
        });
      }
    }

    it('uses the cursor as the index range, not as a filter over earlier pages', () => {
      const plan = planOf(inOrg({ status: 'completed' }), { submittedAt: 1, workloadId: 'x' });
      expect(plan.join('\n')).to.include('(submitted_at,workload_id)<(?,?)');
    });

    it('searches an index for a team scope', () => {
      const plan = planOf({ scope: { organizationId: ORG, initiatives: ['llm', 'vision'] } }, null);
      expect(plan.filter((line) => /^SCAN w\b/.test(line)), plan.join('\n')).to.deep.equal([]);
    });
  });

  describe('describe', () => {
    it('names the given workloads that match the filter', async () => {
      const a = aWorkload({ name: 'a', initiativeId: 'llm' });
      const b = aWorkload({ name: 'b', initiativeId: 'vision' });
      const c = aWorkload({ name: 'c', organizationId: 'globex' });
      await t.seed.upsertWorkloads([a, b, c, aWorkload()]);
      const described = await t.index.describe([a.workloadId, b.workloadId, c.workloadId, 'unknown'], { scope: { organizationId: ORG, initiatives: ['llm'] } });
      expect([...described]).to.deep.equal([[a.workloadId, { name: 'a', initiativeId: 'llm' }]]);
      const admin = await t.index.describe([a.workloadId, b.workloadId], { scope: ADMIN });
      expect([...admin.keys()]).to.have.members([a.workloadId, b.workloadId]);
    });

    it('returns an empty map for no ids', async () => {
      expect((await t.index.describe([], inOrg())).size).to.equal(0);
    });
  });

  sqliteOnly.describe('describe\'s SQLite query plan', () => {
    let lite: TempStore;
    beforeEach(() => {
      lite = openTempStore();
    });
    afterEach(() => lite.close());

    it('looks each id up by its primary key, never walking the organization (a team scope included)', async ()  => {
      await lite.store.upsertWorkloads(Array.from({ length: 50 }, (_, i) => aWorkload({ name: `w${i}` })));
      lite.db.exec('ANALYZE');
      for (const filter of [inOrg(), { scope: { organizationId: ORG, initiatives: ['llm', 'vision'] } }, inOrg({ status: 'running' })]) {
        const query = describeQuery(SQLITE, filter);
        const plan = (lite.db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all({ ...query.params, ids: '["a","b"]' }) as { detail: string }[]).map((r) => r.detail);
        expect(plan[0], plan.join('\n')).to.match(/^SCAN ids VIRTUAL TABLE/);
        expect(plan.some((line) => /^SEARCH w USING INDEX sqlite_autoindex_workloads_1 \(workload_id=\?\)/.test(line)), plan.join('\n')).to.equal(true);
        expect(plan.filter((line) => /workloads_org_/.test(line)), plan.join('\n')).to.deep.equal([]);
      }
    });
  });
});
