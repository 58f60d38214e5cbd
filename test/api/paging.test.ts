// Keyset paging over HTTP: every row exactly once, even while rows arrive between pages.
import { expect } from 'chai';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { aWorkload } from '../support/workload-builder.js';

const BASE = Date.parse('2026-11-01T00:00:00Z');

describe('API paging', () => {
  let t: TestService;
  let rows: WorkloadRecord[];
  before(async () => {
    t = await startTestService();
    // Pairs share a submitted_at so the workload_id tie-break is exercised at page edges.
    rows = Array.from({ length: 250 }, (_, i) =>
      aWorkload({ workloadId: `b${String(i).padStart(4, '0')}-0000-4000-8000-000000000000`, submittedAt: BASE + Math.floor(i / 2) * 60_000, status: i % 3 === 0 ? 'running' : 'completed' }),
    );
    await t.service.store.upsertWorkloads(rows);
  });
  after(() => t.stop());

  async function pageThrough(query: string, between: (page: number) => void = () => undefined): Promise<string[]> {
    const seen: string[] = [];
    let token: string | undefined;
    for (let page = 0; page < 20; page += 1) {
      const suffix: string = token ? `&next_token=${encodeURIComponent(token)}` : '';
      const res = await t.get(`/v1/workloads?${query}${suffix}`);
      expect(res.status).to.equal(200);
      seen.push(...res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id));
      token = res.body.metadata.next_token;
      if (token === undefined) {
        expect(res.body.metadata).to.not.have.property('next_token'); // left out, never null
        return seen;
      }
      between(page);
    }
    throw new Error('paging did not end within 20 pages');
  }

  it('returns each of 250 rows exactly once, in list order, while new rows are inserted between pages', async () => {
    let added = 0;
    const seen = await pageThrough('limit=100', async ()  => {
      added += 1;
      // Newer rows sort before the cursor: they belong to a fresh listing, not to the pages already being read.
      await t.service.store.upsertWorkloads([aWorkload({ workloadId: `c${added}-new`, submittedAt: BASE + 365 * 86_400_000 })]);
    });
    const expected = [...rows].sort((a, b) => b.submittedAt - a.submittedAt || (a.workloadId < b.workloadId ? 1 : -1)).map((r) => r.workloadId);
    expect(seen).to.deep.equal(expected);
    expect(new Set(seen).size).to.equal(250);
  });

  it('keeps total_count at every match, not the page', async () => {
    const res = await t.get('/v1/workloads?status=running&limit=5');
    expect(res.body.metadata.total_count).to.equal(rows.filter((r) => r.status === 'running').length);
    expect(res.body.data.workloads).to.have.length(5);
  });

  it('pages a filtered listing to its end with the same filters', async () => {
    const seen = await pageThrough('status=running&limit=7');
    expect(seen).to.have.length(rows.filter((r) => r.status === 'running').length);
  });

  it('refuses a next_token reused with other filters', async () => {
    const first = await t.get('/v1/workloads?status=running&limit=5');
    const token = encodeURIComponent(first.body.metadata.next_token);
    const res = await t.get(`/v1/workloads?status=completed&limit=5&next_token=${token}`);
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details[0]).to.include({ location: 'query', field: 'next_token' });
    expect(res.body.error.details[0].message).to.contain('other filters');
  });

  it('accepts a next_token with another page size (the page size is not a filter)', async () => {
    const first = await t.get('/v1/workloads?limit=5');
    const res = await t.get(`/v1/workloads?limit=50&next_token=${encodeURIComponent(first.body.metadata.next_token)}`);
    expect(res.status).to.equal(200);
    expect(res.body.data.workloads).to.have.length(50);
  });

  it('refuses a next_token issued to a caller with other teams', async () => {
    const asAdmin = await t.get('/v1/workloads?limit=5');
    const res = await t.get(`/v1/workloads?limit=5&next_token=${encodeURIComponent(asAdmin.body.metadata.next_token)}`, { as: t.callers.lead });
    expect(res.status).to.equal(400);
  });
});
