import { expect } from 'chai';
import { KubeStore, type StoreEvent } from '../../sim/kube-api/store.js';
import { SortedKeys } from '../../sim/kube-api/sorted-keys.js';
import { pod } from './sim-client.js';

describe('simulated Kubernetes API: store', () => {
  it('starts at resourceVersion 1000 with nothing to watch from before it', () => {
    const store = new KubeStore();
    expect(store.resourceVersion).to.equal(1000);
    expect(store.eventsSince(999)).to.equal('expired');
    expect(store.eventsSince(1000)).to.deep.equal([]);
    expect(store.create('pods', pod('ml', 'a')).metadata.resourceVersion).to.equal('1001');
  });

  it('seed gives each object its own version, keeps no events and compacts the history before it', () => {
    const store = new KubeStore();
    const before = store.create('pods', pod('ml', 'early')).metadata.resourceVersion;
    store.seed('pods', [pod('ml', 'b'), pod('ml', 'a')]);
    expect(store.list('pods').map((p) => [p.metadata.name, p.metadata.resourceVersion])).to.deep.equal([['a', '1003'], ['b', '1002'], ['early', '1001']]);
    expect(store.eventsSince(Number(before))).to.equal('expired');
    expect(store.eventsSince(store.resourceVersion)).to.deep.equal([]);
    expect(store.get('pods', { namespace: 'ml', name: 'a' })?.metadata.uid).to.be.a('string');
  });

  it('seed delivers ADDED to live subscribers and checks every object before storing any', () => {
    const store = new KubeStore();
    const seen: StoreEvent[] = [];
    store.subscribe((e) => seen.push(e));
    store.seed('pods', [pod('ml', 'a')]);
    expect(seen.map((e) => [e.type, e.object.metadata.name])).to.deep.equal([['ADDED', 'a']]);
    expect(() => store.seed('pods', [pod('ml', 'c'), pod('ml', 'a')])).to.throw('Cannot seed pods "ml/a": it already exists');
    expect(() => store.seed('pods', [pod('ml', 'd'), pod('ml', 'd')])).to.throw('Cannot seed pods "ml/d": it already exists');
    expect(store.list('pods').map((p) => p.metadata.name)).to.deep.equal(['a']);
  });

  it('freezes stored objects, so a caller cannot change them behind the store', () => {
    const store = new KubeStore();
    const given = pod('ml', 'a');
    const stored = store.create('pods', given);
    expect(() => {
      (stored.status as { phase: string }).phase = 'Running';
    }).to.throw(TypeError);
    expect(() => {
      (given.status as { phase: string }).phase = 'Running';
    }).to.throw(TypeError);
    expect(store.get('pods', { namespace: 'ml', name: 'a' })?.status).to.deep.equal({ phase: 'Pending' });
  });

  it('pages a namespace as one key range, not mixing in namespaces that share its prefix', () => {
    const store = new KubeStore();
    store.seed('pods', ['ml-x/a', 'ml/b', 'ml/c', 'ml0/d', 'm/e'].map((key) => pod(key.split('/')[0] ?? '', key.split('/')[1] ?? '')));
    const first = store.page('pods', { namespace: 'ml', limit: 1 });
    expect(first.items.map((p) => p.metadata.name)).to.deep.equal(['b']);
    expect(first.more).to.equal(true);
    expect(store.page('pods', { namespace: 'ml', after: 'ml/b', limit: 1 }).items.map((p) => p.metadata.name)).to.deep.equal(['c']);
    expect(store.page('pods', { namespace: 'ml', after: 'ml/c' })).to.deep.equal({ items: [], more: false });
  });

  it('historyLimit compacts the oldest events once the log outgrows it', () => {
    const store = new KubeStore({ historyLimit: 10 });
    for (let i = 0; i < 1011; i++) store.create('configmaps', { metadata: { namespace: 'ml', name: `c${i}` } });
    expect(store.compactedVersion).to.equal(store.resourceVersion - 10);
    const kept = store.eventsSince(store.compactedVersion);
    expect(kept).to.have.length(10);
    expect(store.eventsSince(store.compactedVersion - 1)).to.equal('expired');
  });
});

describe('simulated Kubernetes API: sorted keys', () => {
  it('stays equal to a sorted set through random inserts and removes read between changes', () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const keys = new SortedKeys();
    const reference = new Set<string>();
    for (let step = 0; step < 5000; step++) {
      const key = `ns${Math.floor(random() * 5)}/p${Math.floor(random() * 300)}`;
      if (reference.has(key)) {
        keys.remove(key);
        reference.delete(key);
      } else {
        keys.insert(key);
        reference.add(key);
      }
      if (step % 97 === 0) expect(keys.view()).to.deep.equal([...reference].sort());
    }
    expect(keys.view()).to.deep.equal([...reference].sort());
    expect(keys.size).to.equal(reference.size);
  });
});
