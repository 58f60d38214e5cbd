// DRA's resource.k8s.io/v1 served by a real kube-apiserver 1.20 (envtest) through the CRDs of
// test/fixtures/kubernetes/dra-crds, read as gpucap-reader with exactly the chart's ClusterRole: the
// group is discovered as the service looks for it, its three collections list, a watch of claims
// delivers what the scheduler writes, and the reader can change nothing. The service's DRA tests
// stand on this.
import { expect } from 'chai';
import { KubeConfig, type ResourceV1ResourceClaim, type V1DeviceClass, type V1ResourceSlice } from '@kubernetes/client-node';
import { AdminClient, DRA, DRA_GROUP, DRA_RESOURCES, sendJson, type KubeObject } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { forCreate } from '../support/envtest/objects.js';
import { ReflectorSet } from '../support/envtest/reflectors.js';
import { objectFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { discoverDraVersion } from '../../src/k8s/dra-discovery.js';
import { waitFor } from '../support/wait-for.js';

const CLAIM = objectFixture<ResourceV1ResourceClaim>('gpu-sharing/dra-resourceclaim-allocated.json', 'ResourceClaim');
const SLICE = objectFixture<V1ResourceSlice>('gpu-sharing/dra-resourceslice-gpu.json', 'ResourceSlice');
const GPU_CLASS = objectFixture<{ items: V1DeviceClass[] }>('gpu-sharing/dra-deviceclass-gpu.json', 'List').items[0] as V1DeviceClass;
const NAMESPACE = CLAIM.metadata?.namespace ?? '';
const CLAIM_NAME = CLAIM.metadata?.name ?? '';
const CLAIM_KEY = `${NAMESPACE}/${CLAIM_NAME}`;

describe('DRA resource.k8s.io/v1 as CRDs on a real kube-apiserver (envtest v1.20), read as gpucap-reader', function () {
  this.timeout(30_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let reader: KubeConfig;
  const reflectors = new ReflectorSet();

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    const started = Date.now();
    await admin.installDraCrds();
    console.log(`      installDraCrds took ${Date.now() - started} ms`);
    await admin.bindChartRulesToReader();
    await admin.createNamespace(NAMESPACE);
    reader = new KubeConfig();
    reader.loadFromFile(envtest.readerKubeconfig);
  });
  after(async () => {
    await reflectors.stopAll();
    await envtest?.stop();
  });

  const asReader = (method: string, path: string, body?: unknown) => sendJson(reader, method, path, body);

  it('installs idempotently: a second installDraCrds() keeps the CRDs and returns', async () => {
    await admin.installDraCrds();
  });

  it('offers resource.k8s.io/v1, preferred, with the three resources and the claims\' status subresource, to the reader', async () => {
    const group = await asReader('GET', DRA_GROUP);
    expect(group.status, JSON.stringify(group.body)).to.equal(200);
    expect(group.body).to.deep.include({ preferredVersion: { groupVersion: 'resource.k8s.io/v1', version: 'v1' } });

    const version = await asReader('GET', DRA);
    expect(version.status, JSON.stringify(version.body)).to.equal(200);
    const resources = (version.body as { resources: { name: string; namespaced: boolean; kind: string; verbs: string[] }[] }).resources;
    const scope = Object.fromEntries(resources.map((r) => [r.name, { namespaced: r.namespaced, kind: r.kind }]));
    expect(scope).to.deep.equal({
      resourceclaims: { namespaced: true, kind: 'ResourceClaim' },
      'resourceclaims/status': { namespaced: true, kind: 'ResourceClaim' },
      resourceslices: { namespaced: false, kind: 'ResourceSlice' },
      deviceclasses: { namespaced: false, kind: 'DeviceClass' },
    });
    for (const resource of DRA_RESOURCES) expect(resources.find((r) => r.name === resource)?.verbs, resource).to.include.members(['list', 'watch']);
  });

  it('is found by the service\'s own discovery, as the reader: v1', async () => {
    expect(await discoverDraVersion(reader, new AbortController().signal)).to.equal('v1');
  });

  it('lets the reader LIST the three collections cluster-wide, fixture objects as stored', async () => {
    await admin.createDeviceClass(forCreate(GPU_CLASS));
    await admin.createResourceSlice(forCreate(SLICE));
    for (const [resource, name] of [
      ['deviceclasses', GPU_CLASS.metadata?.name],
      ['resourceslices', SLICE.metadata?.name],
      ['resourceclaims', undefined],
    ] as const) {
      const list = await asReader('GET', `${DRA}/${resource}`);
      expect(list.status, `${resource}: ${JSON.stringify(list.body)}`).to.equal(200);
      const names = (list.body as { items: KubeObject[] }).items.map((item) => item.metadata.name);
      expect(names, resource).to.deep.equal(name === undefined ? [] : [name]);
    }
    const slice = (await asReader('GET', `${DRA}/resourceslices`)).body as { items: V1ResourceSlice[] };
    expect(slice.items[0]?.spec).to.deep.equal(SLICE.spec);
  });

  it('delivers to a reader\'s watch of claims ADDED on create, MODIFIED when the scheduler writes allocation and reservedFor, DELETED at the end', async () => {
    const { reflector, objects } = reflectors.start(envtest?.readerKubeconfig ?? '', `${DRA}/resourceclaims`);
    await waitFor(() => reflector.synced && reflector.status().watchAgeMs !== undefined, { timeoutMs: 10_000, what: 'the claims reflector to sync and open its watch' });

    const created = await admin.createResourceClaim(NAMESPACE, forCreate(CLAIM));
    expect(created.status, 'a create leaves status to the /status subresource').to.equal(undefined);
    expect(created.spec).to.deep.equal(CLAIM.spec);
    await waitFor(() => objects.eventsFor((key) => key === CLAIM_KEY).includes(`ADDED ${CLAIM_KEY}`), { timeoutMs: 5_000, what: `ADDED ${CLAIM_KEY}` });

    const allocated = await admin.patchResourceClaimStatus(NAMESPACE, CLAIM_NAME, { allocation: CLAIM.status?.allocation, reservedFor: CLAIM.status?.reservedFor });
    expect(allocated.status).to.deep.equal(CLAIM.status);
    await waitFor(() => objects.eventsFor((key) => key === CLAIM_KEY).includes(`MODIFIED ${CLAIM_KEY}`), { timeoutMs: 5_000, what: `MODIFIED ${CLAIM_KEY}` });
    expect(objects.objects.get(CLAIM_KEY)?.status, 'the watched claim carries what the scheduler wrote').to.deep.equal(CLAIM.status);

    await admin.deleteResourceClaim(NAMESPACE, CLAIM_NAME);
    await waitFor(() => objects.eventsFor((key) => key === CLAIM_KEY).at(-1) === `DELETED ${CLAIM_KEY}`, { timeoutMs: 5_000, what: `DELETED ${CLAIM_KEY}` });
    expect(objects.eventsFor((key) => key === CLAIM_KEY)[0]).to.equal(`ADDED ${CLAIM_KEY}`);
    expect(objects.doubles).to.deep.equal([]);
  });

  it('forbids the reader to create a claim, write a claim\'s status, get one claim or create a device class', async () => {
    await admin.createResourceClaim(NAMESPACE, { ...forCreate(CLAIM), metadata: { name: 'held', namespace: NAMESPACE } });
    const claims = `${DRA}/namespaces/${NAMESPACE}/resourceclaims`;
    expect((await asReader('POST', claims, { ...forCreate(CLAIM), metadata: { name: 'by-reader' } })).status).to.equal(403);
    expect((await sendJson(reader, 'PATCH', `${claims}/held/status`, { status: CLAIM.status }, 'application/merge-patch+json')).status).to.equal(403);
    expect((await asReader('GET', `${claims}/held`)).status).to.equal(403);
    expect((await asReader('POST', `${DRA}/deviceclasses`, { ...forCreate(GPU_CLASS), metadata: { name: 'by-reader' } })).status).to.equal(403);
  });
});
