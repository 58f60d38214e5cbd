// next_token carries a MAC under a key the index keeps (src/query/cursor.ts): over HTTP, a token the
// service issued pages on, in JSON and CSV, on every service of the same index; one built or altered
// by a caller (a position moved, with the filters' digest recomputed as anyone can; a MAC byte
// flipped; the MAC-less version 1) is the invalid-cursor VALIDATION_ERROR, and so is a token of
// another index.
import { expect } from 'chai';
import type { WorkloadRecord } from '../../src/domain/workload.js';
import { filterDigest } from '../../src/query/cursor.js';
import { TEST_BACKEND, testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { aWorkload } from '../support/workload-builder.js';

const BASE = Date.parse('2026-11-01T00:00:00Z');
const ROWS: WorkloadRecord[] = Array.from({ length: 12 }, (_, i) =>
  aWorkload({ workloadId: `c${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`, submittedAt: BASE + i * 60_000 }),
);
/** Newest first, as the list orders them. */
const LISTED = ROWS.map((row) => row.workloadId).reverse();

type Fields = [version: number, submittedAt: number, workloadId: string, digest: string, mac?: string];

const decode = (token: string): Fields => JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Fields;
const encode = (fields: unknown[]): string => Buffer.from(JSON.stringify(fields)).toString('base64url');

/** The unkeyed digest of an ORG_ADMIN's unfiltered listing, recomputed from the code as an attacker would. */
const recomputedDigest = (): string =>
  filterDigest({
    initiativeId: undefined, status: undefined, submittedBy: undefined, isManaged: undefined,
    submittedFrom: undefined, submittedBefore: undefined, scope: undefined, org: 'acme', teams: null,
  });

async function pageIds(t: TestService, query: string): Promise<{ ids: string[]; next: string | undefined }> {
  const res = await t.get(`/v1/workloads?${query}`);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return { ids: res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id), next: res.body.metadata.next_token };
}

function expectNotIssued(res: { status: number; body: { error: { code: string; details: unknown[] } } }): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body.error.code).to.equal('VALIDATION_ERROR');
  expect(res.body.error.details).to.deep.equal([{ location: 'query', field: 'next_token', message: 'is not a token this service issued' }]);
}

describe('API next_token MAC', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
    await t.service.store.upsertWorkloads(ROWS);
  });
  after(() => t.stop());

  it('pages on with the tokens it issued, to the last page', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await pageIds(t, `limit=5${token === undefined ? '' : `&next_token=${token}`}`);
      seen.push(...page.ids);
      token = page.next;
    } while (token !== undefined);
    expect(seen).to.deep.equal(LISTED);
  });

  it('refuses a token moved to another position, its digest recomputed', async () => {
    const first = await pageIds(t, 'limit=2');
    const [version, , , digest, mac] = decode(first.next ?? '');
    expect(digest, 'the filters\' digest is anyone\'s to recompute').to.equal(recomputedDigest());
    const skipTo = ROWS[3] as WorkloadRecord;
    const forged = encode([version, skipTo.submittedAt, skipTo.workloadId, recomputedDigest(), mac]);
    expectNotIssued(await t.get(`/v1/workloads?limit=2&next_token=${forged}`));
    // The same position in the pre-MAC format, version 1.
    expectNotIssued(await t.get(`/v1/workloads?limit=2&next_token=${encode([1, skipTo.submittedAt, skipTo.workloadId, recomputedDigest()])}`));
  });

  it('refuses a token with one byte of its MAC flipped, and an old-version one', async () => {
    const first = await pageIds(t, 'limit=2');
    const fields = decode(first.next ?? '');
    const mac = Buffer.from(fields[4] ?? '', 'base64url');
    expect(mac).to.have.length(16);
    mac[7] = (mac[7] as number) ^ 0x01;
    expectNotIssued(await t.get(`/v1/workloads?limit=2&next_token=${encode([...fields.slice(0, 4), mac.toString('base64url')])}`));
    // What version 1 issued for this very page: its fields without the MAC.
    expectNotIssued(await t.get(`/v1/workloads?limit=2&next_token=${encode([1, ...fields.slice(1, 4)])}`));
  });

  it('refuses a forged token on the CSV export too, and pages it with an issued one', async () => {
    const first = await pageIds(t, 'limit=2');
    const [version, , , digest, mac] = decode(first.next ?? '');
    const skipTo = ROWS[3] as WorkloadRecord;
    const forged = encode([version, skipTo.submittedAt, skipTo.workloadId, digest, mac]);
    const refused = await t.getText(`/v1/workloads?limit=2&next_token=${forged}`, { headers: { Accept: 'text/csv' } });
    expect(refused.status).to.equal(400);
    expect(JSON.parse(refused.text).error.details[0]).to.include({ field: 'next_token', message: 'is not a token this service issued' });
    const issued = await t.getText(`/v1/workloads?limit=2&next_token=${first.next}`, { headers: { Accept: 'text/csv' } });
    expect(issued.status).to.equal(200);
    expect(issued.text).to.contain(LISTED[2]).and.contain(LISTED[3]);
  });
});

describe('API next_token across services', () => {
  let dir: { path: string; remove(): void };
  let location: TestIndexLocation;
  const running: TestService[] = [];
  beforeEach(async () => {
    dir = makeTempDir('gpucap-cursor-');
    location = await testIndexLocation(dir.path);
  });
  afterEach(async () => {
    for (const service of running.splice(0)) await service.stop().catch(() => undefined);
    await location.remove();
    dir.remove();
  });

  const start = async (index?: TestIndexLocation): Promise<TestService> => {
    const service = await startTestService(index === undefined ? {} : { index });
    running.push(service);
    return service;
  };

  it('accepts, on a second service started on the same index at the same time, the tokens of the first, and back', async () => {
    const [a, b] = (await Promise.all([start(location), start(location)])) as [TestService, TestService];
    await a.service.store.upsertWorkloads(ROWS);
    const fromA = await pageIds(a, 'limit=4');
    const onB = await pageIds(b, `limit=4&next_token=${fromA.next}`);
    expect(onB.ids).to.deep.equal(LISTED.slice(4, 8));
    const onA = await pageIds(a, `limit=4&next_token=${onB.next}`);
    expect(onA.ids).to.deep.equal(LISTED.slice(8, 12));
    const secrets = location.kind === 'sqlite' ? 'the file' : 'the database';
    expect(await a.service.index.cursorKey(), `one key in ${secrets}`).to.deep.equal(await b.service.index.cursorKey());
  });

  it(`accepts a token after the service restarts on the same index (${TEST_BACKEND === 'sqlite' ? 'the SQLite file reopened' : 'PostgreSQL'})`, async () => {
    const before = await start(location);
    await before.service.store.upsertWorkloads(ROWS);
    const first = await pageIds(before, 'limit=5');
    await running.splice(0).at(0)?.stop();
    const after = await start(location);
    expect((await pageIds(after, `limit=5&next_token=${first.next}`)).ids).to.deep.equal(LISTED.slice(5, 10));
  });

  it('refuses, on a new index holding the same workloads, a token of the old one', async () => {
    const old = await start(location);
    await old.service.store.upsertWorkloads(ROWS);
    const first = await pageIds(old, 'limit=5');
    const fresh = await start();
    await fresh.service.store.upsertWorkloads(ROWS);
    expect((await pageIds(fresh, 'limit=5')).ids, 'the same first page').to.deep.equal(first.ids);
    expectNotIssued(await fresh.get(`/v1/workloads?limit=5&next_token=${first.next}`));
  });
});
