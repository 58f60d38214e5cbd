import { expect } from 'chai';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { getJson, openWatch, pod } from './sim-client.js';

describe('simulated Kubernetes API: list and watch', () => {
  let sim: KubeApi;
  beforeEach(async () => {
    sim = await startKubeApi({ bookmarkIntervalMs: 50 });
  });
  afterEach(() => sim.close());

  it('list pages through pods with limit and continue, in key order, at one resourceVersion', async () => {
    for (const name of ['c', 'a', 'e', 'b', 'd']) sim.store.create('pods', pod('ml', name));
    const first = await getJson(`${sim.url}/api/v1/pods?limit=2`);
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ kind: 'PodList', apiVersion: 'v1' });
    const meta = first.body.metadata as { resourceVersion: string; continue: string; remainingItemCount: number };
    expect(meta).to.include({ resourceVersion: '5', remainingItemCount: 3 });
    const names: string[] = [];
    let body = first.body;
    for (;;) {
      names.push(...(body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
      const token = (body.metadata as { continue?: string }).continue;
      if (token === undefined) break;
      body = (await getJson(`${sim.url}/api/v1/pods?limit=2&continue=${token}`)).body;
      expect((body.metadata as { resourceVersion: string }).resourceVersion).to.equal('5');
    }
    expect(names).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('list filters by namespace and equality label selectors and omits kind on items', async () => {
    sim.store.create('pods', pod('ml', 'train', { app: 'llm', tier: 'gpu' }));
    sim.store.create('pods', pod('ml', 'serve', { app: 'llm' }));
    sim.store.create('pods', pod('web', 'front', { app: 'llm', tier: 'gpu' }));
    const { body } = await getJson(`${sim.url}/api/v1/namespaces/ml/pods?labelSelector=${encodeURIComponent('app=llm,tier')}`);
    const items = body.items as Record<string, unknown>[];
    expect(items.map((i) => (i.metadata as { name: string }).name)).to.deep.equal(['train']);
    expect(items[0]).to.not.have.property('kind');
    const notGpu = await getJson(`${sim.url}/api/v1/pods?labelSelector=${encodeURIComponent('tier!=gpu')}`);
    expect((notGpu.body.items as unknown[]).length).to.equal(1);
  });

  it('serves jobs, nodes, namespaces, configmaps and /version', async () => {
    sim.store.create('jobs', { metadata: { namespace: 'ml', name: 'j1' }, spec: {} });
    sim.store.create('nodes', { metadata: { name: 'n1', labels: { 'node.kubernetes.io/instance-type': 'p5.48xlarge' } } });
    sim.store.create('namespaces', { metadata: { name: 'ml' } });
    sim.store.create('configmaps', { metadata: { namespace: 'gpucap', name: 'capacity' }, data: { 'capacity.yaml': 'x' } });
    expect((await getJson(`${sim.url}/apis/batch/v1/namespaces/ml/jobs`)).body).to.include({ kind: 'JobList', apiVersion: 'batch/v1' });
    expect((await getJson(`${sim.url}/apis/batch/v1/jobs`)).body.items).to.have.length(1);
    expect((await getJson(`${sim.url}/api/v1/nodes`)).body).to.include({ kind: 'NodeList' });
    expect((await getJson(`${sim.url}/api/v1/namespaces/ml`)).body).to.include({ kind: 'Namespace' });
    expect((await getJson(`${sim.url}/api/v1/namespaces/gpucap/configmaps`)).body.items).to.have.length(1);
    expect((await getJson(`${sim.url}/version`)).body).to.include({ major: '1' });
  });

  it('watch replays ADDED, MODIFIED and DELETED in order after the given resourceVersion', async () => {
    sim.store.create('pods', pod('ml', 'before'));
    const from = sim.store.resourceVersion;
    sim.store.create('pods', pod('ml', 'p'));
    const watch = await openWatch(`${sim.url}/api/v1/namespaces/ml/pods?watch=true&resourceVersion=${from}`);
    sim.store.patchStatus('pods', { namespace: 'ml', name: 'p' }, { phase: 'Running' });
    sim.store.delete('pods', { namespace: 'ml', name: 'p' });
    sim.store.create('pods', pod('other', 'ignored'));
    const events = await watch.until((e) => e.length >= 3);
    watch.close();
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events.map((e) => e.object.metadata.resourceVersion)).to.deep.equal(['2', '3', '4']);
    expect(events[2]?.object).to.deep.include({ kind: 'Pod', status: { phase: 'Running' } });
  });

  it('watch without resourceVersion starts with a synthetic ADDED per existing object', async () => {
    sim.store.create('pods', pod('ml', 'a'));
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=1`);
    const events = await watch.until((e) => e.length >= 1);
    watch.close();
    expect(events[0]).to.deep.include({ type: 'ADDED' });
  });

  it('watch sends BOOKMARKs with the current resourceVersion when allowWatchBookmarks is true', async () => {
    sim.store.create('pods', pod('ml', 'a'));
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=1`);
    const events = await watch.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    watch.close();
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).to.deep.equal({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '1' } });
  });

  it('watch ends the stream after timeoutSeconds', async () => {
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=1`);
    const started = Date.now();
    await watch.ended;
    expect(Date.now() - started).to.be.within(800, 2500);
  });

  it('a label-selected watch sees an object leave the selection as DELETED', async () => {
    sim.store.create('pods', pod('ml', 'p', { gpu: 'yes' }));
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=1&labelSelector=gpu%3Dyes`);
    const current = sim.store.get('pods', { namespace: 'ml', name: 'p' });
    if (current === undefined) throw new Error('Pod "ml/p" is missing');
    sim.store.update('pods', { ...current, metadata: { ...current.metadata, labels: { gpu: 'no' } } });
    const events = await watch.until((e) => e.length >= 1);
    watch.close();
    expect(events.map((e) => e.type)).to.deep.equal(['DELETED']);
  });

  it('after compaction a watch from an older version gets an ERROR event with a 410 Expired Status', async () => {
    sim.store.create('pods', pod('ml', 'a'));
    sim.store.create('pods', pod('ml', 'b'));
    sim.store.compact();
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=1`);
    await watch.ended;
    expect(watch.status).to.equal(200);
    expect(watch.events).to.have.length(1);
    expect(watch.events[0]).to.deep.include({ type: 'ERROR' });
    expect(watch.events[0]?.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    const fresh = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=2`);
    sim.store.create('pods', pod('ml', 'c'));
    expect((await fresh.until((e) => e.length >= 1))[0]?.type).to.equal('ADDED');
    fresh.close();
  });

  it('after compaction a list continue token or an Exact resourceVersion from before it gets 410', async () => {
    for (const name of ['a', 'b', 'c']) sim.store.create('pods', pod('ml', name));
    const first = await getJson(`${sim.url}/api/v1/pods?limit=1`);
    sim.store.create('pods', pod('ml', 'd'));
    sim.store.compact();
    const token = (first.body.metadata as { continue: string }).continue;
    const expired = await getJson(`${sim.url}/api/v1/pods?limit=1&continue=${token}`);
    expect(expired.status).to.equal(410);
    expect(expired.body).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    const exact = await getJson(`${sim.url}/api/v1/pods?resourceVersion=2&resourceVersionMatch=Exact`);
    expect(exact.status).to.equal(410);
    expect((await getJson(`${sim.url}/api/v1/pods?resourceVersion=2`)).status).to.equal(200);
  });

  it('answers a wrong bearer token with a 401 Status', async () => {
    const res = await getJson(`${sim.url}/api/v1/pods`, 'wrong');
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
});
