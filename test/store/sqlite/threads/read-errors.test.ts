// Errors crossing from a read worker to the main thread (src/store/sqlite/threads/worker-errors.ts),
// through the same structured clone a worker's reply goes through: each comes back with its name,
// message and data fields, and the API answers a crossed error exactly as it answers the original.
import { expect } from 'chai';
import BetterSqlite3 from 'better-sqlite3';
import sinon from 'sinon';
import { ApiError } from '../../../../src/domain/errors.js';
import { IndexBusyError } from '../../../../src/query/ports.js';
import { deserializeError, serializeError } from '../../../../src/store/sqlite/threads/worker-errors.js';
import { startTestService, type TestService } from '../../../support/service-harness.js';

/** What the main thread gets for an error thrown in a worker. */
function crossed(error: unknown): Error {
  return deserializeError(structuredClone(serializeError(error)));
}

describe('read errors across the worker boundary', () => {
  it('an SqliteError keeps its class, code and message', () => {
    const error = crossed(new BetterSqlite3.SqliteError('database disk image is malformed', 'SQLITE_CORRUPT'));
    expect(error).to.be.instanceOf(BetterSqlite3.SqliteError);
    expect(error).to.include({ code: 'SQLITE_CORRUPT', message: 'database disk image is malformed' });
  });

  it('a built-in error keeps its class; any other its name, message, stack and data fields', () => {
    expect(crossed(new RangeError('Too many parameters'))).to.be.instanceOf(RangeError);
    const original = Object.assign(new Error('Cannot read it'), { name: 'CursorError', code: 'BAD_CURSOR', details: [{ field: 'cursor' }] });
    const error = crossed(original);
    expect(error).to.include({ name: 'CursorError', message: 'Cannot read it', code: 'BAD_CURSOR', stack: original.stack });
    expect((error as unknown as { details: unknown }).details).to.deep.equal([{ field: 'cursor' }]);
  });

  it('leaves out a field that is not data, rather than failing the reply', () => {
    const error = crossed(Object.assign(new Error('odd'), { code: 'ODD', retry: () => 1 }));
    expect(error).to.include({ code: 'ODD', message: 'odd' });
    expect(error).not.to.have.property('retry');
  });

  it('a thrown non-error becomes an Error that says what was thrown', () => {
    expect(crossed('boom')).to.include({ name: 'Error', message: 'Non-error thrown: boom' });
  });

  describe('as a client sees it', () => {
    let t: TestService;
    before(async () => {
      t = await startTestService();
    });
    after(() => t.stop());
    afterEach(() => sinon.restore());

    it('an ApiError that crossed answers its own status, code, details and headers', async () => {
      const details = [{ location: 'query' as const, field: 'cursor', message: 'is not a cursor of this listing' }];
      const original = new ApiError('VALIDATION_ERROR', 'Invalid query parameter "cursor"', { details, headers: { 'Cache-Control': 'no-store' } });
      sinon.stub(t.service.index, 'list').rejects(crossed(original));
      const res = await t.get('/v1/workloads');
      expect(res.status).to.equal(400);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.body.error).to.deep.equal({ code: 'VALIDATION_ERROR', message: 'Invalid query parameter "cursor"', details });
    });

    it('an IndexBusyError answers 503 UNAVAILABLE with its Retry-After, in whole seconds', async () => {
      sinon.stub(t.service.index, 'list').rejects(new IndexBusyError('The index is busy; retry shortly', 1.5));
      const res = await t.get('/v1/workloads');
      expect(res.status).to.equal(503);
      expect(res.headers.get('retry-after')).to.equal('2');
      expect(res.body.error).to.deep.equal({ code: 'UNAVAILABLE', message: 'The index is busy; retry shortly', details: [] });
    });

    it('an error named ApiError with a code outside the contract is still a 500 that says nothing internal', async () => {
      sinon.stub(t.service.index, 'list').rejects(crossed(Object.assign(new Error('secret path /var/lib/x'), { name: 'ApiError', code: 'SQLITE_CORRUPT' })));
      const res = await t.get('/v1/workloads');
      expect(res.status).to.equal(500);
      expect(res.body.error.code).to.equal('INTERNAL');
      expect(JSON.stringify(res.body)).not.to.contain('secret');
    });
  });
});
