// The simulated API's Dynamic Resource Allocation group (resource.k8s.io/v1): discovered and served only
// with the `dra` option, with the same LIST, paging and WATCH semantics as the core resources.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { getJson, openWatch } from './sim-client.js';

const V1 = '/apis/resource.k8s.io/v1';

function aClaim(namespace: string, name: string): KubeObject {
  return { metadata: { namespace, name }, spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', allocationMode: 'ExactCount', count: 1 } }] } } };
}

function aSlice(node: string): KubeObject {
  return {
    metadata: { name: `${node}-gpu.nvidia.com` },
    spec: { driver: 'gpu.nvidia.com', nodeName: node, pool: { name: node, generation: 1, resourceSliceCount: 1 }, devices: [{ name: 'gpu-0', attributes: { type: { string: 'gpu' } } }] },
  };
}

function aDeviceClass(name: string): KubeObject {
  return { metadata: { name }, spec: { selectors: [{ cel: { expression: `device.driver == '${name}'` } }] } };
}

describe('simulated Kubernetes API: resource.k8s.io (DRA)', () => {
  let sim: KubeApi;
  afterEach(() => sim.close());

  describe('with the dra option', () => {
    beforeEach(async () => {
      sim = await startKubeApi({ dra: true });
    });

    it('discovers the group, its one version and the three resources', async () => {
      for (const path of ['/apis/resource.k8s.io', '/apis/resource.k8s.io/']) {
        const group = await getJson(sim.url + path);
        expect(group.status, path).to.equal(200);
        const v1 = { groupVersion: 'resource.k8s.io/v1', version: 'v1' };
        expect(group.body, path).to.deep.equal({ kind: 'APIGroup', apiVersion: 'v1', name: 'resource.k8s.io', versions: [v1], preferredVersion: v1 });
      }
      const list = await getJson(sim.url + V1);
      expect(list.status).to.equal(200);
      expect(list.body).to.include({ kind: 'APIResourceList', groupVersion: 'resource.k8s.io/v1' });
      const resources = list.body.resources as { name: string; kind: string; namespaced: boolean; verbs: string[] }[];
      expect(resources.map((r) => [r.name, r.kind, r.namespaced])).to.deep.equal([
        ['resourceclaims', 'ResourceClaim', true],
        ['resourceslices', 'ResourceSlice', false],
        ['deviceclasses', 'DeviceClass', false],
      ]);
      for (const r of resources) expect(r.verbs, r.name).to.include.members(['get', 'list', 'watch']);
      expect((await getJson(`${sim.url}/version`)).body).to.include({ minor: '34' });
    });

    it('lists claims cluster-wide and per namespace, and slices and device classes, each with its kind', async () => {
      sim.store.create('resourceclaims', aClaim('ml', 'b'));
      sim.store.create('resourceclaims', aClaim('ml', 'a'));
      sim.store.create('resourceclaims', aClaim('web', 'c'));
      sim.store.create('resourceslices', aSlice('gpu-dra-00'));
      sim.store.create('deviceclasses', aDeviceClass('gpu.nvidia.com'));
      const names = (body: Record<string, unknown>) => (body.items as KubeObject[]).map((i) => `${i.metadata.namespace ?? ''}/${i.metadata.name}`);
      const all = await getJson(`${sim.url}${V1}/resourceclaims`);
      expect(all.body).to.include({ kind: 'ResourceClaimList', apiVersion: 'resource.k8s.io/v1' });
      expect(names(all.body)).to.deep.equal(['ml/a', 'ml/b', 'web/c']);
      expect((all.body.metadata as { resourceVersion: string }).resourceVersion).to.equal(String(sim.store.resourceVersion));
      expect(names((await getJson(`${sim.url}${V1}/namespaces/web/resourceclaims`)).body)).to.deep.equal(['web/c']);
      expect((await getJson(`${sim.url}${V1}/namespaces/ml/resourceclaims/a`)).body).to.deep.include({ kind: 'ResourceClaim', metadata: { ...sim.store.get('resourceclaims', { namespace: 'ml', name: 'a' })?.metadata } });
      const slices = await getJson(`${sim.url}${V1}/resourceslices`);
      expect(slices.body).to.include({ kind: 'ResourceSliceList', apiVersion: 'resource.k8s.io/v1' });
      expect(names(slices.body)).to.deep.equal(['/gpu-dra-00-gpu.nvidia.com']);
      const classes = await getJson(`${sim.url}${V1}/deviceclasses`);
      expect(classes.body).to.include({ kind: 'DeviceClassList', apiVersion: 'resource.k8s.io/v1' });
      expect(names(classes.body)).to.deep.equal(['/gpu.nvidia.com']);
      expect((await getJson(`${sim.url}${V1}/deviceclasses/gpu.nvidia.com`)).body).to.include({ kind: 'DeviceClass' });
    });

    it('pages through claims with limit and continue at the first chunk\'s resourceVersion', async () => {
      for (const name of ['c', 'a', 'd', 'b']) sim.store.create('resourceclaims', aClaim('ml', name));
      const listedAt = String(sim.store.resourceVersion);
      const names: string[] = [];
      let token: string | undefined;
      do {
        const { body } = await getJson(`${sim.url}${V1}/resourceclaims?limit=3${token === undefined ? '' : `&continue=${token}`}`);
        expect((body.metadata as { resourceVersion: string }).resourceVersion).to.equal(listedAt);
        names.push(...(body.items as KubeObject[]).map((i) => i.metadata.name));
        token = (body.metadata as { continue?: string }).continue;
        sim.store.create('deviceclasses', aDeviceClass(`between-${names.length}`));
      } while (token !== undefined);
      expect(names).to.deep.equal(['a', 'b', 'c', 'd']);
    });

    it('watches a namespace\'s claims: ADDED for a created one, MODIFIED for its allocation, from the listed version', async () => {
      const listed = await getJson(`${sim.url}${V1}/namespaces/ml/resourceclaims`);
      const from = (listed.body.metadata as { resourceVersion: string }).resourceVersion;
      const watch = await openWatch(`${sim.url}${V1}/namespaces/ml/resourceclaims?watch=true&resourceVersion=${from}`);
      sim.store.create('resourceclaims', aClaim('other', 'ignored'));
      sim.store.create('resourceclaims', aClaim('ml', 'train-gpu'));
      const allocation = { devices: { results: [{ request: 'gpu', driver: 'gpu.nvidia.com', pool: 'gpu-dra-00', device: 'gpu-0' }] } };
      sim.store.patchStatus('resourceclaims', { namespace: 'ml', name: 'train-gpu' }, { allocation });
      const events = await watch.until((e) => e.length >= 2);
      watch.close();
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED train-gpu', 'MODIFIED train-gpu']);
      expect(events[0]?.object).to.include({ kind: 'ResourceClaim', apiVersion: 'resource.k8s.io/v1' });
      expect(events[1]?.object.status).to.deep.equal({ allocation });
    });

    it('watches slices and device classes cluster-wide, starting with the current state when no version is given', async () => {
      sim.store.create('resourceslices', aSlice('gpu-dra-00'));
      const slices = await openWatch(`${sim.url}${V1}/resourceslices?watch=true&allowWatchBookmarks=true`);
      const classes = await openWatch(`${sim.url}${V1}/deviceclasses?watch=true&resourceVersion=${sim.store.resourceVersion}`);
      sim.store.create('deviceclasses', aDeviceClass('gpu.nvidia.com'));
      const current = sim.store.get('resourceslices', { name: 'gpu-dra-00-gpu.nvidia.com' }) as KubeObject;
      sim.store.update('resourceslices', { ...current, spec: { ...(current.spec as object), pool: { name: 'gpu-dra-00', generation: 2, resourceSliceCount: 1 } } });
      const sliceEvents = await slices.until((e) => e.length >= 2);
      const classEvents = await classes.until((e) => e.length >= 1);
      slices.close();
      classes.close();
      expect(sliceEvents.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED']);
      expect(sliceEvents[1]?.object).to.deep.include({ kind: 'ResourceSlice', spec: { ...(current.spec as object), pool: { name: 'gpu-dra-00', generation: 2, resourceSliceCount: 1 } } });
      expect(classEvents.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata.name}`)).to.deep.equal(['ADDED DeviceClass gpu.nvidia.com']);
    });

    it('answers a watch from a compacted version with a 410 ERROR event, as for any resource', async () => {
      const old = sim.store.create('resourceclaims', aClaim('ml', 'a')).metadata.resourceVersion;
      sim.store.create('resourceclaims', aClaim('ml', 'b'));
      sim.store.compact();
      const watch = await openWatch(`${sim.url}${V1}/resourceclaims?watch=true&resourceVersion=${old}`);
      await watch.ended;
      expect(watch.events[0]?.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    });
  });

  describe('without it (the default)', () => {
    beforeEach(async () => {
      sim = await startKubeApi();
    });

    it('answers discovery and every path of the group with a 404 Status, though the store holds DRA objects', async () => {
      sim.store.create('resourceclaims', aClaim('ml', 'a'));
      sim.store.create('deviceclasses', aDeviceClass('gpu.nvidia.com'));
      for (const path of ['/apis/resource.k8s.io', '/apis/resource.k8s.io/', V1, `${V1}/resourceclaims`, `${V1}/namespaces/ml/resourceclaims`, `${V1}/namespaces/ml/resourceclaims/a`, `${V1}/resourceslices`, `${V1}/deviceclasses`, `${V1}/deviceclasses/gpu.nvidia.com`]) {
        const res = await getJson(sim.url + path);
        expect(res.status, path).to.equal(404);
        expect(res.body, path).to.include({ kind: 'Status', code: 404, reason: 'NotFound' });
      }
      const watch = await openWatch(`${sim.url}${V1}/resourceclaims?watch=true`);
      expect(watch.status).to.equal(404);
      watch.close();
      expect((await getJson(`${sim.url}/version`)).body).to.include({ minor: '33' });
    });
  });
});
