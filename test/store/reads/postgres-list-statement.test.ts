// The one statement a PostgreSQL list runs (workload-index.ts): the page with its count, and the fixed
// row counts a page reads. Its plans and answers against a real server: test/store/postgres/'s
// reads-plans, prepared-reads and the list suites run on PostgreSQL.
import { expect } from 'chai';
import { rowsToRead, withCount } from '../../../src/store/reads/page-count.js';

describe('PostgreSQL list statement', () => {
  it('reads 21, 51 or 101 rows for the API\'s page sizes (1-100, plus the row that tells whether more follow)', () => {
    expect([2, 21, 22, 51, 52, 101].map(rowsToRead)).to.deep.equal([21, 21, 51, 51, 101, 101]);
    expect(rowsToRead(150)).to.equal(150);
  });

  it('writes the row count into the page and binds both parts\' parameters once', () => {
    const query = withCount(
      { sql: 'SELECT w.* FROM workloads w WHERE w.organization_id = @org ORDER BY w.submitted_at DESC LIMIT @limit', params: { org: 'acme' } },
      { sql: 'SELECT SUM(t.workloads) AS n FROM workload_totals t WHERE t.organization_id = @org', params: { org: 'acme' } },
      21,
    );
    expect(query.sql).to.include('LIMIT 21').and.not.include('@limit');
    expect(query.sql).to.match(/^SELECT page\.\*, \(SELECT SUM/);
    expect(query.params).to.deep.equal({ org: 'acme' });
  });

  it('refuses a parameter that the page and the count would bind to different values', () => {
    const page = { sql: 'SELECT 1 WHERE @org = @org LIMIT @limit', params: { org: 'acme' } };
    expect(() => withCount(page, { sql: 'SELECT @org', params: { org: 'globex' } }, 21)).to.throw('The page and its count bind @org to different values');
    expect(() => withCount(page, { sql: 'SELECT 1', params: {} }, 0.5)).to.throw('Not a row count: 0.5');
  });
});
