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
    const listedAt = String(sim.store.resourceVersion);
    const first = await getJson(`${sim.url}/api/v1/pods?limit=2`);
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ kind: 'PodList', apiVersion: 'v1' });
    const meta = first.body.metadata as { resourceVersion: string; continue: string; remainingItemCount: number };
    expect(meta).to.include({ resourceVersion: listedAt, remainingItemCount: 3 });
    const names: string[] = [];
    let body = first.body;
    for (;;) {
      names.push(...(body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
      const token = (body.metadata as { continue?: string }).continue;
      if (token === undefined) break;
      // A change between chunks does not move the version the list reports.
      sim.store.create('configmaps', { metadata: { namespace: 'ml', name: `between-${names.length}` } });
      body = (await getJson(`${sim.url}/api/v1/pods?limit=2&continue=${token}`)).body;
      expect((body.metadata as { resourceVersion: string }).resourceVersion).to.equal(listedAt);
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
    expect(events.map((e) => e.object.metadata.resourceVersion)).to.deep.equal([from + 1, from + 2, from + 3].map(String));
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
    const now = String(sim.store.resourceVersion);
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${now}`);
    const events = await watch.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    watch.close();
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).to.deep.equal({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: now } });
  });

  it('watch ends the stream after timeoutSeconds', async () => {
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=1`);
    const started = Date.now();
    await watch.ended;
    expect(Date.now() - started).to.be.within(800, 2500);
  });

  it('a label-selected watch sees an object leave the selection as DELETED', async () => {
    sim.store.create('pods', pod('ml', 'p', { gpu: 'yes' }));
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${sim.store.resourceVersion}&labelSelector=gpu%3Dyes`);
    const current = sim.store.get('pods', { namespace: 'ml', name: 'p' });
    if (current === undefined) throw new Error('Pod "ml/p" is missing');
    sim.store.update('pods', { ...current, metadata: { ...current.metadata, labels: { gpu: 'no' } } });
    const events = await watch.until((e) => e.length >= 1);
    watch.close();
    expect(events.map((e) => e.type)).to.deep.equal(['DELETED']);
  });

  it('after compaction a watch from an older version gets an ERROR event with a 410 Expired Status', async () => {
    const old = sim.store.create('pods', pod('ml', 'a')).metadata.resourceVersion;
    sim.store.create('pods', pod('ml', 'b'));
    sim.store.compact();
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${old}`);
    await watch.ended;
    expect(watch.status).to.equal(200);
    expect(watch.events).to.have.length(1);
    expect(watch.events[0]).to.deep.include({ type: 'ERROR' });
    expect(watch.events[0]?.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    const fresh = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${sim.store.compactedVersion}`);
    sim.store.create('pods', pod('ml', 'c'));
    expect((await fresh.until((e) => e.length >= 1))[0]?.type).to.equal('ADDED');
    fresh.close();
  });

  it('after compaction a list continue token or an Exact resourceVersion from before it gets 410', async () => {
    for (const name of ['a', 'b', 'c']) sim.store.create('pods', pod('ml', name));
    const first = await getJson(`${sim.url}/api/v1/pods?limit=1`);
    const old = (first.body.metadata as { resourceVersion: string }).resourceVersion;
    sim.store.create('pods', pod('ml', 'd'));
    sim.store.compact();
    const token = (first.body.metadata as { continue: string }).continue;
    const expired = await getJson(`${sim.url}/api/v1/pods?limit=1&continue=${token}`);
    expect(expired.status).to.equal(410);
    expect(expired.body).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    const exact = await getJson(`${sim.url}/api/v1/pods?resourceVersion=${old}&resourceVersionMatch=Exact`);
    expect(exact.status).to.equal(410);
    expect((await getJson(`${sim.url}/api/v1/pods?resourceVersion=${old}`)).status).to.equal(200);
  });

  for (const from of ['0', '']) {
    it(`watch from resourceVersion "${from}" sends the current state as ADDED, then only later changes`, async () => {
      sim.store.create('pods', pod('ml', 'a'));
      sim.store.patchStatus('pods', { namespace: 'ml', name: 'a' }, { phase: 'Running' });
      sim.store.create('pods', pod('ml', 'b'));
      const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${from}`);
      sim.store.delete('pods', { namespace: 'ml', name: 'b' });
      const events = await watch.until((e) => e.length >= 3);
      watch.close();
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED a', 'ADDED b', 'DELETED b']);
      expect(events[0]?.object).to.deep.include({ kind: 'Pod', apiVersion: 'v1', status: { phase: 'Running' } });
    });
  }

  it('watch from a version before the store\'s first one gets 410, as for any compacted version', async () => {
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=1`);
    await watch.ended;
    expect(watch.events[0]?.object).to.include({ code: 410, reason: 'Expired' });
  });

  it('list pages stay in key order and complete while pods are created and deleted between chunks', async () => {
    sim.store.seed('pods', Array.from({ length: 50 }, (_, i) => pod('ml', `p${String(i).padStart(2, '0')}`)));
    const names: string[] = [];
    const deletedUnlisted: string[] = [];
    let token: string | undefined;
    let round = 0;
    do {
      const { body } = await getJson(`${sim.url}/api/v1/pods?limit=7${token === undefined ? '' : `&continue=${token}`}`);
      names.push(...(body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
      token = (body.metadata as { continue?: string }).continue;
      // Behind the cursor (never listed), ahead of it (listed), and a delete (listed only if already passed).
      sim.store.create('pods', pod('ml', `a-behind-${round}`));
      sim.store.create('pods', pod('ml', `z-ahead-${round}`));
      const doomed = `p${String(48 - round).padStart(2, '0')}`;
      if (!names.includes(doomed)) deletedUnlisted.push(doomed);
      sim.store.delete('pods', { namespace: 'ml', name: doomed });
      round += 1;
    } while (token !== undefined);
    expect(names).to.deep.equal([...new Set(names)].sort());
    expect(names.filter((n) => n.startsWith('a-behind'))).to.deep.equal([]);
    expect(deletedUnlisted).to.not.deep.equal([]);
    expect(names.filter((n) => n.startsWith('p'))).to.have.length(50 - deletedUnlisted.length);
    expect(names.filter((n) => deletedUnlisted.includes(n))).to.deep.equal([]);
    expect(names.filter((n) => n.startsWith('z-ahead'))).to.have.length(round - 1);
  });

  it('answers a resourceVersion that is not a number with a 400 Status', async () => {
    const list = await getJson(`${sim.url}/api/v1/pods?resourceVersion=abc`);
    expect(list.status).to.equal(400);
    expect(list.body).to.include({ kind: 'Status', code: 400 });
    const watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=-1`);
    expect(watch.status).to.equal(400);
    watch.close();
  });

  it('answers a wrong bearer token with a 401 Status', async () => {
    const res = await getJson(`${sim.url}/api/v1/pods`, 'wrong');
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
});
