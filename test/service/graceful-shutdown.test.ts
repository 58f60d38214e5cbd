// stop() as SIGTERM runs it: readiness flips first so load balancers stop sending traffic, requests
// that still arrive during the shutdown delay are served, then the API stops accepting connections,
// in-flight requests finish within the grace period, and all closes.
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { pino } from 'pino';
import sinon from 'sinon';
import { splitHostPort } from '../../src/runtime/http-listener.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';
import { aWorkload } from '../support/workload-builder.js';

/** 'connected' when a TCP connection to host:port opens, else the error code (ECONNREFUSED). */
function tryConnect(address: string): Promise<string> {
  const { host, port } = splitHostPort(address);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Makes the API's list read take `ms`, and resolves `reached` when a request gets there. */
function slowList(t: TestService, ms: number): { reached: Promise<void> } {
  const store = t.service.index;
  const list = store.list.bind(store);
  let arrived: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  sinon.stub(store, 'list').callsFake(async (...args) => {
    arrived();
    await sleep(ms);
    return list(...args);
  });
  return { reached };
}

describe('graceful shutdown', () => {
  const workload = aWorkload({ workloadId: 'de000000-0000-4000-8000-000000000001' });

  describe('draining', () => {
    let t: TestService;
    const logged: string[] = [];
    before(async () => {
      const lines = new Writable({
        write(chunk: Buffer, _encoding, done) {
          logged.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
          done();
        },
      });
      t = await startTestService({ logger: pino({ level: 'info' }, lines) }); // shutdown_grace_seconds = 2
      await t.service.store.upsertWorkloads([workload]);
    });
    after(async () => {
      sinon.restore();
      await t.stop(); // a second stop() is safe
    });

    it('finishes an in-flight request, answers /readyz 503 while draining, then refuses new connections', async () => {
      const { apiAddress, adminAddress } = t.service;
      expect(await tryConnect(apiAddress)).to.equal('connected');
      const { reached } = slowList(t, 300);

      const inFlight = t.get('/v1/workloads');
      await reached;
      const stopping = t.service.stop();

      const readyz = await fetch(`${t.adminUrl}/readyz`);
      expect(readyz.status).to.equal(503);
      expect(await readyz.json()).to.deep.include({ ready: false, shuttingDown: true });
      // The drain closes the listener in the same tick as it logs: a connection attempted before that
      // sits in the kernel's accept queue and is reset (ECONNRESET), which says nothing about the drain.
      await waitFor(() => logged.includes('draining requests'), { timeoutMs: 5000, what: 'the drain to start' });
      expect(await tryConnect(apiAddress), 'a new API connection while draining').to.equal('ECONNREFUSED');

      const res = await inFlight;
      expect(res.status).to.equal(200);
      expect(res.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.deep.equal([workload.workloadId]);

      await stopping;
      expect(await tryConnect(apiAddress), 'a new API connection after stop').to.equal('ECONNREFUSED');
      expect(await tryConnect(adminAddress), 'a new admin connection after stop').to.equal('ECONNREFUSED');
    });
  });

  describe('shutdown delay', () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ env: { GPUCAP_SHUTDOWN_DELAY_SECONDS: '1' } });
      await t.service.store.upsertWorkloads([workload]);
    });
    after(() => t.stop());

    it('keeps answering new requests, /v1/health healthy among them, while /readyz fails, until the delay is over', async () => {
      const started = Date.now();
      const stopping = t.service.stop();
      const readyz = await fetch(`${t.adminUrl}/readyz`);
      expect(readyz.status).to.equal(503);
      // A client whose endpoint list is not updated yet still gets real answers, not refusals.
      const health = await t.get('/v1/health', { as: null });
      expect([health.status, health.body.data.status]).to.deep.equal([200, 'healthy']);
      const res = await t.get('/v1/workloads');
      expect(res.status).to.equal(200);
      expect(res.body.data.workloads).to.have.length(1);
      await stopping;
      expect(Date.now() - started).to.be.at.least(1000);
      expect(await tryConnect(t.service.apiAddress)).to.equal('ECONNREFUSED');
    });
  });

  describe('keep-alive connections', () => {
    let t: TestService;
    before(async () => {
      t = await startTestService(); // shutdown_grace_seconds = 2
      await t.service.store.upsertWorkloads([workload]);
    });
    after(async () => {
      sinon.restore();
      await t.stop();
    });

    it('stop() returns once in-flight requests are done, not after the whole grace period, and tells the client to close', async () => {
      // A pooled keep-alive connection, as load balancers and HTTP clients hold them.
      expect((await t.get('/v1/health', { as: null })).status).to.equal(200);
      const { reached } = slowList(t, 300);
      const inFlight = t.get('/v1/workloads');
      await reached;
      const started = Date.now();
      const stopping = t.service.stop();

      const res = await inFlight;
      expect(res.status).to.equal(200);
      // Without it the client reuses a connection the server is about to cut, and its next request fails.
      expect(res.headers.get('connection'), 'Connection header of a response sent while draining').to.equal('close');
      await stopping;
      expect(Date.now() - started, 'stop() waited out the grace period for idle keep-alive connections').to.be.lessThan(1500);
    });
  });
});
