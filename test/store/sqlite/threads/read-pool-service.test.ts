// The real service with read workers (read_workers): the API answers from the workers, sees each
// write of the main thread at once, reads at the service clock's time (the harness' fixed clock),
// answers 503 with Retry-After while the pool refuses reads, exposes the pool's gauges, and stops the
// workers on shutdown.
import { expect } from 'chai';
import type { WorkloadFilter } from '../../../../src/query/ports.js';
import { ReadPool } from '../../../../src/store/sqlite/threads/read-pool.js';
import { sqliteOnly } from '../../../support/backend.js';
import { startTestService, type TestService } from '../../../support/service-harness.js';
import { aPodInterval, aWorkload } from '../../../support/workload-builder.js';

sqliteOnly.describe('service with read workers', function () {
  // The workers load through tsx: about a second on a busy machine.
  this.timeout(60_000);
  let t: TestService;

  before(async () => {
    t = await startTestService({ env: { GPUCAP_READ_WORKERS: '2' } });
  });
  after(async () => t?.stop());

  it('serves the API from the read pool, with every write visible to the next request', async () => {
    expect(t.service.readPool).to.be.instanceOf(ReadPool);
    for (let i = 0; i < 5; i++) {
      const workload = aWorkload({ workloadId: `aaaaaaaa-0000-4000-8000-00000000000${i}`, submittedAt: Date.parse('2026-11-19T00:00:00Z') + i });
      await t.service.store.upsertWorkloads([workload]);
      await t.service.store.upsertPodIntervals([aPodInterval(workload)]);
      const list = await t.get('/v1/workloads?limit=1');
      expect(list.status).to.equal(200);
      expect(list.body.data.workloads[0].workload_id).to.equal(workload.workloadId);
      const one = await t.get(`/v1/workloads/${workload.workloadId}`);
      expect(one.status).to.equal(200);
      expect(one.body.data.gpu_hours_used).to.equal(16);
    }
  });

  it('reads a running workload at the service clock\'s time, not the worker\'s', async () => {
    const id = 'bbbbbbbb-0000-4000-8000-000000000001';
    const started = t.clock.now() - 3_600_000;
    const running = aWorkload({ workloadId: id, status: 'running', gpuCount: 2, submittedAt: started, startedAt: started, completedAt: null, exitCode: null });
    await t.service.store.upsertWorkloads([running]);
    await t.service.store.upsertPodIntervals([aPodInterval(running)]);
    expect((await t.get(`/v1/workloads/${id}`)).body.data).to.include({ duration_seconds: 3600, gpu_hours_used: 2 });
    t.clock.advance(3_600_000);
    expect((await t.get(`/v1/workloads/${id}`)).body.data).to.include({ duration_seconds: 7200, gpu_hours_used: 4 });
  });

  it('answers 503 UNAVAILABLE with Retry-After while every worker is busy and the read queue is full', async () => {
    const pool = t.service.readPool as ReadPool;
    const acme: WorkloadFilter = { scope: { organizationId: 'acme', initiatives: null } };
    // The request must arrive while the workers still run the calls that hold them: longer calls
    // until one does, however fast the machine is.
    for (let ids = 50_000; ; ids *= 2) {
      const manyIds = Array.from({ length: ids }, (_, i) => `id-${i}`);
      const calls: Promise<unknown>[] = [pool.index.describe(manyIds, acme), pool.index.describe(manyIds, acme)];
      expect(pool.status()).to.include({ busy: 2, queued: 0 });
      // Fill the queue with cheap calls until the pool refuses one.
      for (let queued = -1; pool.status().queued > queued; ) {
        queued = pool.status().queued;
        calls.push(pool.index.activeGpus(acme).catch(() => 'refused'));
      }
      const response = await t.get('/v1/workloads?limit=1');
      await Promise.all(calls);
      if (response.status === 200 && ids < 3_200_000) continue;
      expect(response.status).to.equal(503);
      expect(response.headers.get('retry-after')).to.equal('1');
      expect(response.body.error).to.deep.equal({
        code: 'UNAVAILABLE',
        message: 'The index is busy: 128 reads are waiting for a worker; retry shortly',
        details: [],
      });
      expect(response.body.request_id).to.be.a('string');
      break;
    }
    expect((await t.get('/v1/workloads?limit=1')).status, 'once the queue drained').to.equal(200);
  });

  it('exposes the queue depth and busy workers on /metrics', async () => {
    const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
    expect(text).to.match(/^gpucap_read_pool_queue_depth\{[^}]*\} 0$/m);
    expect(text).to.match(/^gpucap_read_pool_busy_workers\{[^}]*\} 0$/m);
  });

  it('stops the workers when the service stops', async () => {
    const other = await startTestService({ env: { GPUCAP_READ_WORKERS: '1' } });
    const pool = other.service.readPool as ReadPool;
    expect(pool.status().ready).to.equal(1);
    await other.stop();
    expect(pool.status().ready).to.equal(0);
    await pool.index.list({ scope: { organizationId: 'acme', initiatives: null } }, { limit: 1, after: null }).then(
      () => expect.fail('expected the read to fail'),
      (error: Error) => expect(error.message).to.equal('Cannot read the index: the read pool is closed'),
    );
  });
});
