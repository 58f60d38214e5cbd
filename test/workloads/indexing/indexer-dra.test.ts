// GPUs that pods hold through Dynamic Resource Allocation, through the indexer into a real SQLite
// index: the devices of each pod's claims as NVIDIA's DRA driver publishes them (whole GPUs, MIG
// devices, a claim shared by two pods, adminAccess and IMEX channels that are no GPUs), in either
// order of claim and pod, and the GPU-hours a claim gave once it is gone.
import { expect } from 'chai';
import sinon from 'sinon';
import type { WorkloadView } from '../../../src/domain/workload.js';
import type { DeviceClass, ResourceClaim, ResourceSlice } from '../../../src/k8s/objects/dra-types.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { WorkloadIndexer } from '../../../src/workloads/indexing/indexer.js';
import { objectFixture, podFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';
import { FixedClock } from '../../support/fixed-clock.js';
import { openTestIndex, type TestIndex } from '../../support/test-index.js';
import { aJob, aNamespace, ms, T0, terminated } from '../fixtures.js';

const HOUR = 3_600_000;
const START = '2026-11-20T10:00:00Z';
const NAMESPACE = 'ml';
const GPU_SLICE = objectFixture<ResourceSlice>('gpu-sharing/dra-resourceslice-gpu.json', 'ResourceSlice');
const MIG_SLICE = objectFixture<ResourceSlice>('gpu-sharing/dra-resourceslice-mig.json', 'ResourceSlice');
const CLASSES = objectFixture<{ items: DeviceClass[] }>('gpu-sharing/dra-deviceclass-gpu.json', 'List').items;
const claimFixture = (file: string): ResourceClaim => objectFixture<ResourceClaim>(`gpu-sharing/${file}`, 'ResourceClaim');

/** A running pod of namespace `ml` with one claim made from a template, named `claim` in its status. */
function draPod(name: string, uid: string, claim: string, options: { node?: string; jobUid?: string; status?: Pod['status'] } = {}): Pod {
  const template = podFixture('gpu-sharing/pod-dra-claim.json');
  return {
    metadata: {
      name,
      namespace: NAMESPACE,
      uid,
      resourceVersion: '1',
      creationTimestamp: T0,
      ...(options.jobUid === undefined ? {} : { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'job', uid: options.jobUid }] }),
    },
    spec: { ...template.spec, nodeName: options.node ?? 'gpu-h100-dra-1' },
    status: options.status ?? { phase: 'Running', startTime: START, resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: claim }] },
  };
}

/** A claim of namespace `ml` allocated `devices` of `pool`, reserved for the pods. */
function claimOf(name: string, devices: readonly string[], pods: readonly { name: string; uid: string }[], pool = 'gpu-h100-dra-1'): ResourceClaim {
  const fixture = claimFixture('dra-resourceclaim-allocated.json');
  return {
    metadata: { name, namespace: NAMESPACE, uid: `claim-${name}`, resourceVersion: '1' },
    spec: fixture.spec,
    status: {
      allocation: { devices: { results: devices.map((device) => ({ request: 'gpu', driver: 'gpu.nvidia.com', pool, device })) } },
      reservedFor: pods.map((pod) => ({ resource: 'pods', name: pod.name, uid: pod.uid })),
    },
  };
}

describe('workloads/indexer with DRA claims', () => {
  let t: TestIndex;
  let clock: FixedClock;
  let indexer: WorkloadIndexer;
  const view = async (id: string, at = clock.now()): Promise<WorkloadView | undefined> => t.index.get(id, at);

  beforeEach(async () => {
    clock = new FixedClock(ms(START) + 2 * HOUR);
    t = await openTestIndex({ clock });
    const logger = { debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy() };
    indexer = new WorkloadIndexer(await t.writer('local'), {
      clusterId: 'local',
      defaultOrganizationId: 'default-org',
      counting: { basis: 'equivalents', settings: {} },
      clock,
      logger,
    });
    indexer.onNamespaceEvent({ type: 'SYNC', items: [aNamespace({}, NAMESPACE)] });
    indexer.onSliceEvent({ type: 'SYNC', items: [GPU_SLICE, MIG_SLICE] });
    indexer.onDeviceClassEvent({ type: 'SYNC', items: CLASSES });
  });
  afterEach(() => t.close());

  const claim = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: ResourceClaim) => indexer.onClaimEvent({ type, object });
  const pod = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Pod) => indexer.onPodEvent({ type, object });

  it("counts a pod's whole GPUs from its claim, the claim arriving after the pod, with the slice's product", async () => {
    pod('ADDED', draPod('train', 'pod-train', 'train-gpu'));
    await indexer.flush();
    expect(await view('pod-train'), 'no GPU is known before the claim').to.equal(undefined);
    claim('ADDED', claimOf('train-gpu', ['gpu-0', 'gpu-1'], [{ name: 'train', uid: 'pod-train' }]));
    await indexer.flush();
    expect(await view('pod-train')).to.deep.include({
      status: 'running', gpuCount: 2, allocatedGpus: 2, gpuSharing: 'exclusive', gpuModel: 'NVIDIA-H100-80GB-HBM3', gpuHoursUsed: 4,
    });
  });

  it('counts a MIG device by its profile, the claim arriving before the pod', async () => {
    const mig = claimOf('eval-mig', ['gpu-0-mig-1g10gb-19-0'], [{ name: 'eval', uid: 'pod-eval' }], 'gpu-h100-dra-mig-1');
    claim('ADDED', mig);
    pod('ADDED', draPod('eval', 'pod-eval', 'eval-mig', { node: 'gpu-h100-dra-mig-1' }));
    await indexer.flush();
    const row = await view('pod-eval');
    expect(row).to.deep.include({ gpuCount: 1, gpuSharing: 'mig', gpuModel: 'NVIDIA-H100-80GB-HBM3' });
    expect(row?.allocatedGpus).to.be.closeTo(1 / 7, 1e-9);
    expect(row?.gpuHoursUsed).to.be.closeTo(2 / 7, 1e-6);
  });

  it('splits a claim reserved for two pods evenly, time-sliced as its GpuConfig says', async () => {
    const shared = claimFixture('dra-resourceclaim-shared.json');
    const [a, b] = shared.status?.reservedFor ?? [];
    claim('ADDED', shared);
    for (const consumer of [a, b]) {
      pod('ADDED', draPod(consumer?.name ?? '', consumer?.uid ?? '', shared.metadata?.name ?? ''));
    }
    await indexer.flush();
    for (const consumer of [a, b]) {
      expect(await view(consumer?.uid ?? '')).to.deep.include({ gpuCount: 1, allocatedGpus: 0.5, gpuSharing: 'time_slicing', gpuHoursUsed: 1 });
    }
  });

  it('counts no GPU for adminAccess results or IMEX channels: such pods are no workloads', async () => {
    for (const [file, uid] of [['dra-resourceclaim-admin.json', 'pod-probe'], ['dra-resourceclaim-imex.json', 'pod-imex']] as const) {
      const object = claimFixture(file);
      claim('ADDED', { ...object, metadata: { ...object.metadata, namespace: NAMESPACE }, status: { ...object.status, reservedFor: [{ resource: 'pods', name: uid, uid }] } });
      pod('ADDED', draPod(uid, uid, object.metadata?.name ?? ''));
    }
    await indexer.flush();
    expect(await view('pod-probe')).to.equal(undefined);
    expect(await view('pod-imex')).to.equal(undefined);
  });

  it('keeps the GPU-hours of a claim deleted after its pod finished: the Job completes later with them', async () => {
    const job = aJob({
      metadata: { uid: 'job-train', namespace: NAMESPACE, name: 'job' },
      podSpec: podFixture('gpu-sharing/pod-dra-claim.json').spec,
      status: { startTime: START },
    });
    indexer.onJobEvent({ type: 'ADDED', object: job });
    const train = { name: 'train', uid: 'pod-train' };
    const allocated = claimOf('train-gpu', ['gpu-0'], [train]);
    claim('ADDED', allocated);
    pod('ADDED', draPod('train', 'pod-train', 'train-gpu', { jobUid: 'job-train' }));
    await indexer.flush();
    expect(await view('job-train')).to.deep.include({ status: 'running', gpuCount: 1, allocatedGpus: 1 });

    const finishedAt = '2026-11-20T11:30:00Z';
    const finished = draPod('train', 'pod-train', 'train-gpu', {
      jobUid: 'job-train',
      status: {
        phase: 'Succeeded', startTime: START, containerStatuses: [terminated(0, finishedAt)],
        resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'train-gpu' }],
      },
    });
    pod('MODIFIED', { ...finished, metadata: { ...finished.metadata, resourceVersion: '2' } });
    await indexer.flush();
    // The claim controller takes the finished pod out of reservedFor, deallocates the claim and deletes it.
    claim('MODIFIED', { ...allocated, metadata: { ...allocated.metadata, resourceVersion: '2' }, status: {} });
    claim('DELETED', { ...allocated, status: {} });
    indexer.onClaimEvent({ type: 'SYNC', items: [] });
    indexer.onPodEvent({ type: 'SYNC', items: [{ ...finished, metadata: { ...finished.metadata, resourceVersion: '2' } }] });
    await indexer.flush();
    const complete = { type: 'Complete', status: 'True', lastTransitionTime: '2026-11-20T11:31:00Z' };
    indexer.onJobEvent({ type: 'MODIFIED', object: { ...job, metadata: { ...job.metadata, resourceVersion: '9' }, status: { startTime: START, conditions: [complete] } } });
    indexer.resync();
    await indexer.flush();
    expect(await view('job-train', clock.now() + 5 * HOUR)).to.deep.include({
      status: 'completed', gpuCount: 1, allocatedGpus: 1, gpuModel: 'NVIDIA-H100-80GB-HBM3', gpuHoursUsed: 1.5,
    });
  });

  it("counts a Job whose template claims GPUs by its pods' claims, a device not published by its class", async () => {
    const job = aJob({
      metadata: { uid: 'job-dra', namespace: NAMESPACE, name: 'job' },
      spec: { parallelism: 2 },
      podSpec: podFixture('gpu-sharing/pod-dra-claim.json').spec,
      status: { startTime: START },
    });
    indexer.onJobEvent({ type: 'ADDED', object: job });
    await indexer.flush();
    expect(await view('job-dra'), 'no GPU is known before a claim').to.equal(undefined);
    const pods = [{ name: 'job-0', uid: 'pod-j0' }, { name: 'job-1', uid: 'pod-j1' }];
    for (const [k, p] of pods.entries()) {
      pod('ADDED', draPod(p.name, p.uid, `${p.name}-gpu`, { jobUid: 'job-dra' }));
      // The second pod's MIG device is not published (its slice is gone): mig.nvidia.com says it is MIG.
      const device = k === 0 ? ['gpu-0'] : ['gpu-9-mig-unknown'];
      const object = claimOf(`${p.name}-gpu`, device, [p]);
      const spec = k === 0 ? object.spec : { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'mig.nvidia.com' } }] } };
      claim('ADDED', { ...object, spec });
    }
    await indexer.flush();
    const row = await view('job-dra');
    expect(row).to.deep.include({ kind: 'Job', gpuCount: 2, gpuSharing: 'mig', gpuModel: 'NVIDIA-H100-80GB-HBM3' });
    expect(row?.allocatedGpus).to.be.closeTo(1 + 1 / 7, 1e-9);
    expect(row?.gpuHoursUsed).to.be.closeTo(2 * (1 + 1 / 7), 1e-6);
  });

  it("counts pods and a Job through reservedFor alone, on an API server that drops the pods' claim fields", async () => {
    indexer.onClaimEvent({ type: 'SYNC', items: [] });
    const job = aJob({ metadata: { uid: 'job-old', namespace: NAMESPACE, name: 'job' }, podSpec: { containers: [{ name: 'main' }] }, status: { startTime: START } });
    indexer.onJobEvent({ type: 'ADDED', object: job });
    const withoutClaims = (object: Pod): Pod => {
      const { resourceClaims: _claims, ...spec } = object.spec ?? {};
      const { resourceClaimStatuses: _statuses, ...status } = object.status ?? {};
      return { ...object, spec, status };
    };
    const solo = withoutClaims(draPod('solo', 'pod-solo', 'solo-gpu'));
    const worker = withoutClaims(draPod('job-0', 'pod-w0', 'job-0-gpu', { jobUid: 'job-old' }));
    // Created before the scheduler reserves the claims: no GPU shows yet.
    pod('ADDED', solo);
    pod('ADDED', worker);
    claim('ADDED', claimOf('solo-gpu', ['gpu-0'], [{ name: 'solo', uid: 'pod-solo' }]));
    claim('ADDED', claimOf('job-0-gpu', ['gpu-1'], [{ name: 'job-0', uid: 'pod-w0' }]));
    // The kubelet's next status update brings the pods back.
    pod('MODIFIED', { ...solo, metadata: { ...solo.metadata, resourceVersion: '2' } });
    pod('MODIFIED', { ...worker, metadata: { ...worker.metadata, resourceVersion: '2' } });
    await indexer.flush();
    expect(await view('pod-solo')).to.deep.include({ kind: 'Pod', gpuCount: 1, allocatedGpus: 1, gpuHoursUsed: 2 });
    expect(await view('job-old')).to.deep.include({ kind: 'Job', gpuCount: 1, allocatedGpus: 1, gpuHoursUsed: 2 });
  });

  it('finds a pod whose last event came before the claim reserved for it, where the pod names no claims', async () => {
    indexer.onClaimEvent({ type: 'SYNC', items: [] });
    const bare = draPod('late', 'pod-late', 'late-gpu');
    const { resourceClaims: _claims, ...spec } = bare.spec ?? {};
    pod('ADDED', { ...bare, spec });
    clock.advance(10_000);
    claim('ADDED', claimOf('late-gpu', ['gpu-0'], [{ name: 'late', uid: 'pod-late' }]));
    await indexer.flush();
    expect(await view('pod-late')).to.deep.include({ kind: 'Pod', status: 'running', gpuCount: 1, allocatedGpus: 1 });
  });
});
