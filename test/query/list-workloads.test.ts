import { expect } from 'chai';
import { listWorkloads } from '../../src/query/list-workloads.js';
import { aWorkload } from '../support/workload-builder.js';
import { openTempStore, type TempStore } from '../store/temp-store.js';

describe('query/list-workloads cursor', () => {
  let t: TempStore;
  beforeEach(async ()  => {
    t = openTempStore();
    await t.store.upsertWorkloads(Array.from({ length: 6 }, (_, i) => aWorkload({ initiativeId: i % 2 ? 'llm' : 'vision', submittedAt: Date.parse('2026-11-01T00:00:00Z') + i })));
  });
  afterEach(() => t.close());

  it('accepts a next_token after a token refresh that lists the same teams in another order', async () => {
    const first = await listWorkloads(t.store, { organizationId: 'acme', initiatives: ['llm', 'vision'] }, { limit: 2 });
    expect(first.nextToken).to.be.a('string');
    const next = await listWorkloads(t.store, { organizationId: 'acme', initiatives: ['vision', 'llm', 'vision'] }, { limit: 2, nextToken: first.nextToken ?? '' });
    expect(next.workloads).to.have.length(2);
  });

  it('refuses a next_token once the caller\'s teams changed', async () => {
    const first = await listWorkloads(t.store, { organizationId: 'acme', initiatives: ['llm', 'vision'] }, { limit: 2 });
    await listWorkloads(t.store, { organizationId: 'acme', initiatives: ['llm'] }, { limit: 2, nextToken: first.nextToken ?? '' }).then(
      () => expect.fail('a cursor of other teams was accepted'),
      (error: { code?: string }) => expect(error.code).to.equal('VALIDATION_ERROR'),
    );
  });
});
