import { expect } from 'chai';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { getJson, openWatch, pod } from './sim-client.js';

describe('simulated Kubernetes API: fault injection', () => {
  let sim: KubeApi;
  beforeEach(async () => {
    sim = await startKubeApi();
  });
  afterEach(() => sim.close());

  it('dropWatches destroys every open watch stream and reports how many', async () => {
    const a = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=0`);
    const b = await openWatch(`${sim.url}/apis/batch/v1/jobs?watch=true&resourceVersion=0`);
    expect(sim.faults.dropWatches()).to.equal(2);
    await Promise.all([a.ended, b.ended]);
    expect(sim.faults.dropWatches()).to.equal(0);
  });

  for (const status of [500, 401, 429] as const) {
    it(`failNext answers the next N matching requests with ${status} and then recovers`, async () => {
      sim.faults.failNext(status, { count: 2, path: '/api/v1/pods' });
      expect((await getJson(`${sim.url}/api/v1/nodes`)).status).to.equal(200);
      const first = await getJson(`${sim.url}/api/v1/pods`);
      expect(first.status).to.equal(status);
      expect(first.body).to.include({ kind: 'Status', code: status });
      expect((await getJson(`${sim.url}/api/v1/pods`)).status).to.equal(status);
      expect((await getJson(`${sim.url}/api/v1/pods`)).status).to.equal(200);
    });
  }

  it('failNext on a watch path fails the watch request, not the list', async () => {
    sim.faults.failNext(500, { path: /pods$/, watch: true });
    expect((await getJson(`${sim.url}/api/v1/pods`)).status).to.equal(200);
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true`);
    expect(watch.status).to.equal(500);
    watch.close();
  });

  it('hang accepts matching requests and never answers until cleared', async () => {
    sim.faults.hang({ path: '/api/v1/pods' });
    const hung = await fetch(`${sim.url}/api/v1/pods`, { signal: AbortSignal.timeout(300) }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    expect(hung).to.equal('TimeoutError');
    expect((await getJson(`${sim.url}/api/v1/nodes`)).status).to.equal(200);
    sim.faults.clear();
    expect((await getJson(`${sim.url}/api/v1/pods`)).status).to.equal(200);
  });

  it('restart closes every connection, refuses for a period and keeps the store', async () => {
    sim.store.create('pods', pod('ml', 'survivor'));
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${sim.store.resourceVersion}`);
    const restarted = sim.faults.restart(300);
    await watch.ended;
    const refused = await fetch(`${sim.url}/version`).then(
      () => 'answered',
      (error: Error & { cause?: { code?: string } }) => error.cause?.code,
    );
    expect(refused).to.equal('ECONNREFUSED');
    await restarted;
    const after = await getJson(`${sim.url}/api/v1/pods`);
    expect((after.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name)).to.deep.equal(['survivor']);
  });

  it('expireVersions compacts now so an older watch gets 410', async () => {
    const old = sim.store.create('pods', pod('ml', 'a')).metadata.resourceVersion;
    sim.store.create('pods', pod('ml', 'b'));
    sim.faults.expireVersions();
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${old}`);
    await watch.ended;
    expect(watch.events[0]?.object).to.include({ code: 410, reason: 'Expired' });
  });

  it('counts requests per path, separating lists from watches', async () => {
    await getJson(`${sim.url}/api/v1/pods`);
    await getJson(`${sim.url}/api/v1/pods?limit=1`);
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=1`);
    watch.close();
    expect(sim.faults.requestCount('/api/v1/pods')).to.equal(3);
    expect(sim.faults.requestCount('/api/v1/pods', { watch: false })).to.equal(2);
    expect(sim.faults.requestCount(/pods$/, { watch: true })).to.equal(1);
    expect(sim.faults.requestCount('/api/v1/nodes')).to.equal(0);
  });
});
