// The whole service against a real kube-apiserver (envtest, v1.20), watching it as gpucap-reader with
// only the chart's ClusterRole, with DRA's resource.k8s.io/v1 served as CRDs. The test plays scheduler,
// kubelet, Job and claim controller: it creates bound pods and allocated claims, patches their status
// through the lifecycle, deletes them, restarts the API server, and checks after each step what GET
// /v1/workloads and /v1/workloads/{id} answer.
import { expect } from 'chai';
import { AdminClient, type KubeObject } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { gpuJob, gpuPod, INSTANCE_TYPE_LABEL, jobPod, runningStatus, terminatedStatus, wholeSeconds } from '../support/envtest/objects.js';
import type { V1Pod } from '@kubernetes/client-node';
import { nodeFixture, objectFixture, podFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { capacityConfigMap, forCreate } from '../support/envtest/objects.js';
import { waitFor } from '../support/wait-for.js';
import { startTestService, type Caller, type JsonBody, type TestService } from '../support/service-harness.js';

const HOUR = 3_600_000;
const A100 = { node: 'a100-node-1', instanceType: 'p4d.24xlarge' };
const H100 = { node: 'h100-node-1', instanceType: 'p5.48xlarge' };
const LLM = 'team-llm';
const VISION = 'team-vision';
const GLOBEX = 'globex-research';
/** The service's own namespace: its budget ConfigMap, read through the chart's Role. */
const SERVICE_NAMESPACE = 'gpucap-system';
/** acme's budget; the DRA workloads run under the dra-research initiative. */
const BUDGET_YAML = [
  'organization_id: acme',
  'period: total',
  'allocated_gpu_hours: 1000',
  'initiatives:',
  '  - initiative_id: dra-research',
  '    allocated_gpu_hours: 100',
  '',
].join('\n');
/** Generous: after an API-server restart the service's reflectors back off for up to 30 s. */
const AFTER_RESTART_MS = 60_000;

const iso = (ms: number): string => wholeSeconds(ms).toISOString();

describe('The service against a real kube-apiserver (envtest v1.20), watching as gpucap-reader', function () {
  this.timeout(60_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let t: TestService | undefined;
  let pretrain: KubeObject;

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    await admin.bindChartRulesToReader();
    // DRA's API, served as CRDs on this v1.20 server: the service finds it by discovery at start.
    await admin.installDraCrds();
    await admin.createNamespace(SERVICE_NAMESPACE);
    await admin.bindChartRoleToReader(SERVICE_NAMESPACE);
    await admin.createConfigMap(SERVICE_NAMESPACE, capacityConfigMap('capacity-acme', BUDGET_YAML));
    await admin.createNamespace(LLM, { 'gpucap.io/initiative': 'llm', 'gpucap.io/organization': 'acme' });
    await admin.createNamespace(VISION, { 'gpucap.io/initiative': 'vision', 'gpucap.io/organization': 'acme' });
    await admin.createNamespace(GLOBEX, { 'gpucap.io/initiative': 'research', 'gpucap.io/organization': 'globex' });
    await admin.createNode(A100.node, { [INSTANCE_TYPE_LABEL]: A100.instanceType });
    await admin.createNode(H100.node, { [INSTANCE_TYPE_LABEL]: H100.instanceType });
    // Exists before the service starts: only its first LIST can find it.
    pretrain = await admin.createJob(LLM, gpuJob('pretrain', { gpus: 4, parallelism: 2 }));
    await admin.createPod(LLM, jobPod(pretrain, 0, { node: A100.node, gpus: 4 }));
    await admin.createPod(LLM, jobPod(pretrain, 1, { node: A100.node, gpus: 4 }));

    t = await startTestService({
      clock: 'system',
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_KUBECONFIG: envtest.readerKubeconfig,
        GPUCAP_CLUSTER_ID: 'envtest',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_NAMESPACE: SERVICE_NAMESPACE,
      },
    });
    await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 30_000, what: 'the service\'s /readyz to answer 200 once its informers synced' });
  });
  after(async () => {
    await t?.stop();
    await envtest?.stop();
  });

  function service(): TestService {
    if (t === undefined) throw new Error('The service is not running');
    return t;
  }

  const readyz = () => service().readyz();

  /** GET /v1/workloads/{id} now: the record must include `expected`; returns it. */
  async function workloadIs(id: string, expected: Record<string, unknown>, as?: Caller): Promise<JsonBody> {
    const response = await service().get(`/v1/workloads/${id}`, { as });
    expect(response.status, `GET /v1/workloads/${id}: ${JSON.stringify(response.body)}`).to.equal(200);
    expect(response.body.data).to.include(expected);
    return response.body.data;
  }

  /** Polls GET /v1/workloads/{id} until the record includes `expected`; returns the record. */
  async function workloadShows(id: string, expected: Record<string, unknown>, options: { as?: Caller; timeoutMs?: number } = {}): Promise<JsonBody> {
    return waitFor(() => workloadIs(id, expected, options.as), {
      timeoutMs: options.timeoutMs ?? 15_000,
      what: `GET /v1/workloads/${id} to show ${JSON.stringify(expected)}`,
    });
  }

  /** The list items GET /v1/workloads answers for `query` (one page of up to 100). */
  async function listed(query: string): Promise<JsonBody[]> {
    const response = await service().get(`/v1/workloads?limit=100&${query}`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.data.workloads;
  }

  /** Creates a standalone GPU pod and returns its uid, the id of its workload. */
  async function createGpuPod(namespace: string, name: string, options: { node: string; gpus: number; labels?: Record<string, string> }): Promise<string> {
    return (await admin.createPod(namespace, gpuPod(name, options))).metadata.uid;
  }

  /**
   * Creates a throwaway GPU pod and waits until the service lists it. Pod events are applied in order,
   * so once it shows, every earlier pod event (a deletion, say) has been applied too.
   */
  async function podEventsApplied(): Promise<void> {
    const id = await createGpuPod(VISION, `sentinel-${Date.now()}`, { node: H100.node, gpus: 1 });
    await workloadShows(id, { workload_id: id });
  }

  it('indexes a Job that existed before start-up: pending, per-pod GPUs × parallelism, its node\'s instance type, its namespace\'s initiative', async () => {
    const id = pretrain.metadata.uid;
    await workloadShows(id, {
      workload_id: id,
      name: 'pretrain',
      namespace: LLM,
      cluster_id: 'envtest',
      status: 'pending',
      gpu_count: 8,
      instance_type: A100.instanceType,
      initiative_id: 'llm',
      submitted_by: 'unknown',
      started_at: null,
      completed_at: null,
      exit_code: null,
    });
    const items = await listed('initiative_id=llm&status=pending');
    expect(items.find((w) => w.workload_id === id), JSON.stringify(items)).to.deep.equal({
      workload_id: id,
      name: 'pretrain',
      status: 'pending',
      submitted_by: 'unknown',
      initiative_id: 'llm',
      instance_type: A100.instanceType,
      gpu_count: 8,
      submitted_at: new Date(pretrain.metadata.creationTimestamp).toISOString(),
      started_at: null,
    });
  });

  it('follows a Job and its two pods from pending through running to completed, with its times, exit code 0 and GPU-hours', async () => {
    const job = await admin.createJob(LLM, gpuJob('finetune', { gpus: 2, parallelism: 2 }));
    const id = job.metadata.uid;
    await admin.createPod(LLM, jobPod(job, 0, { node: H100.node, gpus: 2 }));
    await admin.createPod(LLM, jobPod(job, 1, { node: H100.node, gpus: 2 }));
    await workloadShows(id, { status: 'pending', gpu_count: 4, instance_type: H100.instanceType, started_at: null });

    // Times in the past, so the GPU-hours are exact: 2 pods × 2 GPUs × 1 hour.
    const started = Date.now() - 2 * HOUR;
    const finished = started + HOUR;
    for (const pod of ['finetune-0', 'finetune-1']) await admin.patchPodStatus(LLM, pod, runningStatus(started));
    await admin.patchJobStatus(LLM, 'finetune', { startTime: wholeSeconds(started), active: 2 });
    await workloadShows(id, { status: 'running', started_at: iso(started), completed_at: null, exit_code: null });

    for (const pod of ['finetune-0', 'finetune-1']) await admin.patchPodStatus(LLM, pod, terminatedStatus(started, finished, 0));
    await admin.patchJobStatus(LLM, 'finetune', {
      active: 0,
      succeeded: 2,
      completionTime: wholeSeconds(finished),
      conditions: [{ type: 'Complete', status: 'True', lastProbeTime: wholeSeconds(finished), lastTransitionTime: wholeSeconds(finished) }],
    });
    await workloadShows(id, {
      status: 'completed',
      started_at: iso(started),
      completed_at: iso(finished),
      exit_code: 0,
      duration_seconds: 3600,
      gpu_hours_used: 4,
    });
    expect(await listed('status=completed&initiative_id=llm')).to.deep.include({
      workload_id: id,
      name: 'finetune',
      status: 'completed',
      submitted_by: 'unknown',
      initiative_id: 'llm',
      instance_type: H100.instanceType,
      gpu_count: 4,
      submitted_at: new Date(job.metadata.creationTimestamp).toISOString(),
      started_at: iso(started),
    });
  });

  it('marks a standalone GPU pod failed with its container\'s exit code, and keeps it after the pod is deleted', async () => {
    const id = await createGpuPod(VISION, 'notebook', { node: H100.node, gpus: 1, labels: { 'gpucap.io/submitted-by': 'alice' } });
    await workloadShows(id, { status: 'pending', gpu_count: 1, instance_type: H100.instanceType, initiative_id: 'vision', submitted_by: 'alice' });

    const started = Date.now() - HOUR;
    const finished = started + HOUR / 2;
    await admin.patchPodStatus(VISION, 'notebook', runningStatus(started));
    await workloadShows(id, { status: 'running', started_at: iso(started), exit_code: null });
    await admin.patchPodStatus(VISION, 'notebook', terminatedStatus(started, finished, 3));
    const failed = { status: 'failed', started_at: iso(started), completed_at: iso(finished), exit_code: 3, gpu_hours_used: 0.5 };
    await workloadShows(id, failed);

    await admin.deletePod(VISION, 'notebook', { gracePeriodSeconds: 0 });
    await podEventsApplied();
    await workloadIs(id, failed);
  });

  it('cancels a running GPU pod deleted the way a kubelet finishes a deletion, at the time the deletion was requested', async () => {
    const id = await createGpuPod(VISION, 'interactive', { node: A100.node, gpus: 2 });
    const started = Date.now() - HOUR;
    await admin.patchPodStatus(VISION, 'interactive', runningStatus(started));
    await workloadShows(id, { status: 'running', gpu_count: 2, instance_type: A100.instanceType });

    // DELETE with a grace period only marks the pod; the kubelet then stops it and deletes it for good.
    const marked = await admin.deletePod(VISION, 'interactive', { gracePeriodSeconds: 30 });
    const requestedAt = Date.parse(marked.metadata.deletionTimestamp ?? 'not set') - 30_000;
    await workloadShows(id, { status: 'cancelled', completed_at: iso(requestedAt) });
    // The container stops 5 s into its grace period. Kubernetes keeps whole seconds, so a container
    // stopping within the request's own second ties with it, and the service then counts the pod as
    // having failed on its own: this test keeps the two seconds apart.
    await admin.patchPodStatus(VISION, 'interactive', terminatedStatus(started, requestedAt + 5000, 137));
    await admin.deletePod(VISION, 'interactive', { gracePeriodSeconds: 0 });
    await podEventsApplied();
    await workloadIs(id, { status: 'cancelled', started_at: iso(started), completed_at: iso(requestedAt), exit_code: 137 });
    expect((await listed('status=cancelled')).map((w) => w.workload_id)).to.include(id);
  });

  it('leaves out pods that request no GPU, and shows a workload only to the organization its namespace names', async () => {
    const cpuOnly = await createGpuPod(VISION, 'cpu-only', { node: A100.node, gpus: 0 });
    const globexPod = await createGpuPod(GLOBEX, 'globex-train', { node: A100.node, gpus: 1 });
    await workloadShows(globexPod, { status: 'pending', initiative_id: 'research' }, { as: service().callers.otherOrgAdmin });

    expect((await service().get(`/v1/workloads/${globexPod}`)).status, 'acme admin reading a globex workload').to.equal(404);
    expect((await service().get(`/v1/workloads/${cpuOnly}`)).status, 'a pod without GPUs').to.equal(404);
    const ids = (await listed('')).map((w) => w.workload_id);
    expect(ids).to.not.include(globexPod);
    expect(ids).to.not.include(cpuOnly);
  });

  it("counts shared GPUs by their share: MIG and time-sliced nodes as GFD labels them, KAI's fractions and HAMi's vGPUs", async () => {
    const startedAt = Date.now() - HOUR;
    for (const file of ['node-mig-mixed-h100.json', 'node-time-slicing-a10g.json']) {
      const node = nodeFixture(`gpu-sharing/${file}`);
      await admin.createNode(node.metadata?.name ?? '', { ...node.metadata?.labels } as Record<string, string>);
    }
    const pod = (name: string, node: string, resources: Record<string, string>, annotations: Record<string, string> = {}): V1Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, annotations },
      spec: { nodeName: node, restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.example/train:1', resources: { requests: resources, limits: resources } }] },
    });
    const cases = [
      { pod: pod('shared-mig', 'gpu-h100-mig-mixed-1', { 'nvidia.com/mig-1g.10gb': '1' }), expected: { gpu_count: 1, allocated_gpus: 0.1429, gpu_sharing: 'mig', gpu_model: 'NVIDIA-H100-80GB-HBM3' } },
      { pod: pod('shared-sliced', 'ip-10-0-52-201.ec2.internal', { 'nvidia.com/gpu': '2' }), expected: { gpu_count: 2, allocated_gpus: 0.5, gpu_sharing: 'time_slicing', gpu_model: 'NVIDIA-A10G' } },
      { pod: pod('shared-kai', 'gpu-h100-mig-mixed-1', { cpu: '1' }, { 'gpu-fraction': '0.25' }), expected: { gpu_count: 1, allocated_gpus: 0.25, gpu_sharing: 'fractional' } },
      { pod: pod('shared-hami', 'ip-10-0-52-201.ec2.internal', { 'nvidia.com/gpu': '1', 'nvidia.com/gpucores': '40' }), expected: { gpu_count: 1, allocated_gpus: 0.4, gpu_sharing: 'fractional' } },
    ];
    for (const { pod: shared, expected } of cases) {
      const created = await admin.createPod(LLM, shared);
      await admin.patchPodStatus(LLM, shared.metadata?.name ?? '', runningStatus(startedAt));
      const record = await workloadShows(created.metadata.uid, { status: 'running', ...expected });
      // An hour at its share: GPU-hours integrate allocated_gpus.
      expect(record.gpu_hours_used, shared.metadata?.name).to.be.closeTo(expected.allocated_gpus * (Date.now() - wholeSeconds(startedAt).getTime()) / HOUR, 0.01);
    }
    // KAI's reservation pod holds the GPU behind the fractions: no workload of whoever owns its namespace
    // (without its RuntimeClass, which this API server does not have).
    const { status: _status, ...reservation } = podFixture('gpu-sharing/pod-kai-reservation.json');
    const namespace = reservation.metadata?.namespace ?? '';
    await admin.createNamespace(namespace, { 'gpucap.io/organization': 'acme' });
    const reserving = await admin.createPod(namespace, forCreate({ ...reservation, spec: { ...reservation.spec, nodeName: 'gpu-h100-mig-mixed-1', runtimeClassName: undefined } }) as V1Pod);
    await admin.patchPodStatus(namespace, reserving.metadata.name, runningStatus(startedAt));
    await podEventsApplied();
    expect((await service().get(`/v1/workloads/${reserving.metadata.uid}`)).status, 'a KAI reservation pod').to.equal(404);
  });

  it('counts GPUs from DRA claims by their devices, attributed through reservedFor; a claim deleted after its pod finished leaves the hours', async () => {
    const startedAt = Date.now() - HOUR;
    const DRA_NS = 'team-dra';
    await admin.createNamespace(DRA_NS, { 'gpucap.io/initiative': 'dra-research', 'gpucap.io/organization': 'acme' });
    const classes = objectFixture<{ items: Record<string, unknown>[] }>('gpu-sharing/dra-deviceclass-gpu.json', 'List').items;
    for (const deviceClass of classes) await admin.createDeviceClass(forCreate(deviceClass) as never);
    for (const file of ['dra-resourceslice-gpu.json', 'dra-resourceslice-mig.json']) {
      const slice = objectFixture<Record<string, unknown>>(`gpu-sharing/${file}`, 'ResourceSlice');
      const { ownerReferences: _owner, ...metadata } = (forCreate(slice) as { metadata: Record<string, unknown> }).metadata;
      await admin.createResourceSlice({ ...forCreate(slice), metadata } as never);
      await admin.createNode(((slice.spec as { nodeName: string }).nodeName), { [INSTANCE_TYPE_LABEL]: 'p5.48xlarge' });
    }
    const request = objectFixture<{ spec: unknown }>('gpu-sharing/dra-resourceclaim-allocated.json', 'ResourceClaim').spec;
    const sharedSpec = objectFixture<{ spec: unknown }>('gpu-sharing/dra-resourceclaim-shared.json', 'ResourceClaim').spec;
    const pod = (name: string, node: string, owner?: KubeObject): V1Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: owner.metadata.name, uid: owner.metadata.uid, controller: true }] }),
      },
      // v1.20 drops spec.resourceClaims, as every server before 1.26 does: the claims' reservedFor attributes.
      spec: { nodeName: node, restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.example/train:1', resources: { requests: { cpu: '1' } } }] },
    });
    /** A claim allocated `devices` of `pool` and reserved for the pods, as the scheduler leaves it. */
    const claim = async (name: string, pool: string, devices: string[], pods: KubeObject[], spec: unknown = request) => {
      await admin.createResourceClaim(DRA_NS, { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', metadata: { name }, spec } as never);
      await admin.patchResourceClaimStatus(DRA_NS, name, {
        allocation: { devices: { results: devices.map((device) => ({ request: 'gpu', driver: 'gpu.nvidia.com', pool, device })) } },
        reservedFor: pods.map((p) => ({ resource: 'pods', name: p.metadata.name, uid: p.metadata.uid })),
      } as never);
    };
    const gpuNode = 'gpu-h100-dra-1';
    const migNode = 'gpu-h100-dra-mig-1';
    const whole = await admin.createPod(DRA_NS, pod('dra-whole', gpuNode));
    const mig = await admin.createPod(DRA_NS, pod('dra-mig', migNode));
    const sharedA = await admin.createPod(DRA_NS, pod('dra-shared-a', gpuNode));
    const sharedB = await admin.createPod(DRA_NS, pod('dra-shared-b', gpuNode));
    const job = await admin.createJob(DRA_NS, {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'dra-finetune' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.example/train:1' }] } } },
    });
    const jobPod = await admin.createPod(DRA_NS, pod('dra-finetune-0', gpuNode, job));
    await claim('dra-whole-gpu', gpuNode, ['gpu-0'], [whole]);
    await claim('dra-mig-gpu', migNode, ['gpu-0-mig-1g10gb-19-0'], [mig]);
    await claim('dra-shared', gpuNode, ['gpu-1'], [sharedA, sharedB], sharedSpec);
    await claim('dra-finetune-0-gpu', gpuNode, ['gpu-0'], [jobPod]);
    for (const running of [whole, mig, sharedA, sharedB, jobPod]) await admin.patchPodStatus(DRA_NS, running.metadata.name, runningStatus(startedAt));
    await admin.patchJobStatus(DRA_NS, 'dra-finetune', { startTime: wholeSeconds(startedAt), active: 1 });

    const model = 'NVIDIA-H100-80GB-HBM3';
    const cases = [
      { id: whole.metadata.uid, expected: { status: 'running', gpu_count: 1, allocated_gpus: 1, gpu_sharing: 'exclusive', gpu_model: model } },
      { id: mig.metadata.uid, expected: { status: 'running', gpu_count: 1, allocated_gpus: 0.1429, gpu_sharing: 'mig', gpu_model: model } },
      { id: sharedA.metadata.uid, expected: { status: 'running', gpu_count: 1, allocated_gpus: 0.5, gpu_sharing: 'time_slicing', gpu_model: model } },
      { id: sharedB.metadata.uid, expected: { status: 'running', gpu_count: 1, allocated_gpus: 0.5, gpu_sharing: 'time_slicing', gpu_model: model } },
      { id: job.metadata.uid, expected: { status: 'running', gpu_count: 1, allocated_gpus: 1, gpu_sharing: 'exclusive', gpu_model: model } },
    ];
    for (const { id, expected } of cases) {
      const record = await workloadShows(id, expected);
      expect(record.gpu_hours_used, String(record.name)).to.be.closeTo(expected.allocated_gpus * (Date.now() - wholeSeconds(startedAt).getTime()) / HOUR, 0.01);
    }

    // The Job's pod finishes; the claim controller takes it out of reservedFor, deallocates and deletes the claim; the Job completes.
    const finishedAt = startedAt + HOUR / 2;
    await admin.patchPodStatus(DRA_NS, jobPod.metadata.name, terminatedStatus(startedAt, finishedAt, 0));
    await admin.patchResourceClaimStatus(DRA_NS, 'dra-finetune-0-gpu', { allocation: null, reservedFor: null } as never);
    await admin.deleteResourceClaim(DRA_NS, 'dra-finetune-0-gpu');
    await admin.patchJobStatus(DRA_NS, 'dra-finetune', {
      active: 0,
      succeeded: 1,
      completionTime: wholeSeconds(finishedAt),
      conditions: [{ type: 'Complete', status: 'True', lastProbeTime: wholeSeconds(finishedAt), lastTransitionTime: wholeSeconds(finishedAt) }],
    });
    const done = await workloadShows(job.metadata.uid, { status: 'completed', gpu_count: 1, allocated_gpus: 1 });
    expect(done.gpu_hours_used).to.be.closeTo(0.5, 0.001);

    // The team's statistics add them up: each workload's hours, as the records say.
    const stats = (await service().get('/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id')).body.data;
    const team = (stats.grouped as { initiative_id: string; gpu_hours: number; workload_count: number }[]).find((g) => g.initiative_id === 'dra-research');
    let sum = 0;
    for (const { id } of cases) sum += (await service().get(`/v1/workloads/${id}`)).body.data.gpu_hours_used as number;
    expect(team?.workload_count, JSON.stringify(stats.grouped)).to.equal(cases.length);
    expect(team?.gpu_hours).to.be.closeTo(sum, 0.01);
    // And its budget: the ConfigMap's dra-research initiative has used them (a moment more, read later).
    const capacity = (await service().get('/v1/capacity')).body.data;
    const budget = (capacity.initiatives as { initiative_id: string; used_gpu_hours: number }[]).find((i) => i.initiative_id === 'dra-research');
    expect(budget?.used_gpu_hours, JSON.stringify(capacity.initiatives)).to.be.within(sum - 0.01, sum + 0.05);
  });

  it('serves its index while the API server is down, and after it restarts reflects what changed: a failed Job, a vanished pod, a new pod', async () => {
    if (envtest === undefined) throw new Error('envtest is not running');
    const started = Date.now() - HOUR;
    const job = await admin.createJob(LLM, gpuJob('eval', { gpus: 1 }));
    await admin.createPod(LLM, jobPod(job, 0, { node: A100.node, gpus: 1 }));
    await admin.patchPodStatus(LLM, 'eval-0', runningStatus(started));
    await admin.patchJobStatus(LLM, 'eval', { startTime: wholeSeconds(started), active: 1 });
    const server = await createGpuPod(VISION, 'server', { node: H100.node, gpus: 1 });
    await admin.patchPodStatus(VISION, 'server', runningStatus(started));
    await workloadShows(job.metadata.uid, { status: 'running', started_at: iso(started) });
    await workloadShows(server, { status: 'running' });

    await envtest.stopApiServer();
    const whileDown = await service().get(`/v1/workloads/${job.metadata.uid}`);
    expect(whileDown.status, JSON.stringify(whileDown.body)).to.equal(200);
    expect(whileDown.body.data).to.include({ status: 'running' });
    await envtest.startApiServer();

    const finished = started + HOUR / 4;
    await admin.patchPodStatus(LLM, 'eval-0', terminatedStatus(started, finished, 2));
    await admin.patchJobStatus(LLM, 'eval', {
      active: 0,
      failed: 1,
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastProbeTime: wholeSeconds(finished), lastTransitionTime: wholeSeconds(finished) }],
    });
    const deletedAt = Date.now();
    await admin.deletePod(VISION, 'server', { gracePeriodSeconds: 0 });
    const fresh = await createGpuPod(VISION, 'after-restart', { node: H100.node, gpus: 1 });
    await admin.patchPodStatus(VISION, 'after-restart', runningStatus(Date.now()));

    await workloadShows(job.metadata.uid, { status: 'failed', completed_at: iso(finished), exit_code: 2 }, { timeoutMs: AFTER_RESTART_MS });
    await workloadShows(fresh, { status: 'running', instance_type: H100.instanceType }, { timeoutMs: AFTER_RESTART_MS });
    const vanished = await workloadShows(server, { status: 'cancelled' }, { timeoutMs: AFTER_RESTART_MS });
    expect(Date.parse(vanished.completed_at), `completed_at ${vanished.completed_at} of a pod deleted at ${new Date(deletedAt).toISOString()}`)
      .to.be.at.least(wholeSeconds(deletedAt).getTime())
      .and.at.most(Date.now());
    expect((await listed('status=failed')).map((w) => w.workload_id)).to.include(job.metadata.uid);
    const ready = await readyz();
    expect(ready.status, JSON.stringify(ready.body)).to.equal(200);
  });
});
