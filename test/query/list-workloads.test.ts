import { expect } from 'chai';
import { systemClock } from '../../src/domain/clock.js';
import { listWorkloads } from '../../src/query/list-workloads.js';
import { aWorkload } from '../support/workload-builder.js';
import { openTestIndex, type TestIndex } from '../support/test-index.js';

describe('query/list-workloads cursor', () => {
  let t: TestIndex;
  beforeEach(async ()  => {
    t = await openTestIndex({ clock: systemClock });
    await t.seed.upsertWorkloads(Array.from({ length: 6 }, (_, i) => aWorkload({ initiativeId: i % 2 ? 'llm' : 'vision', submittedAt: Date.parse('2026-11-01T00:00:00Z') + i })));
  });
  afterEach(() => t.close());

  it('accepts a next_token after a token refresh that lists the same teams in another order', async () => {
    const first = await listWorkloads(t.index, { organizationId: 'acme', initiatives: ['llm', 'vision'] }, { limit: 2 });
    expect(first.nextToken).to.be.a('string');
    const next = await listWorkloads(t.index, { organizationId: 'acme', initiatives: ['vision', 'llm', 'vision'] }, { limit: 2, nextToken: first.nextToken ?? '' });
    expect(next.workloads).to.have.length(2);
  });

  it('refuses a next_token once the caller\'s teams changed', async () => {
    const first = await listWorkloads(t.index, { organizationId: 'acme', initiatives: ['llm', 'vision'] }, { limit: 2 });
    await listWorkloads(t.index, { organizationId: 'acme', initiatives: ['llm'] }, { limit: 2, nextToken: first.nextToken ?? '' }).then(
      () => expect.fail('a cursor of other teams was accepted'),
      (error: { code?: string }) => expect(error.code).to.equal('VALIDATION_ERROR'),
    );
  });
});
