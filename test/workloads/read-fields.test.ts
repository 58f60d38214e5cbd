// The watch decoder keeps of each object only the fields read-fields.ts names. What the indexer and
// the telemetry flow take from a selected object must equal what they take from the whole one, for
// objects that set every field they read.
import { expect } from 'chai';
import { selectFields } from '../../src/domain/field-selection.js';
import type { FieldSelection } from '../../src/domain/field-selection.js';
import { FactsProjection } from '../../src/workloads/facts/facts-projection.js';
import type { Job, Node, Pod } from '../../src/k8s/objects/k8s-types.js';
import { nodeFacts } from '../../src/fleet/node-facts.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../../src/workloads/attribution/label-keys.js';
import { DEFAULT_GPU_RESOURCES } from '../../src/k8s/objects/gpu-request.js';
import { podFailureEvidence } from '../../src/workloads/failure/pod-failure-evidence.js';
import { readFields } from '../../src/workloads/read-fields.js';
import { contextSlimmer } from '../../src/workloads/caches/slim.js';
import { PodDirectory } from '../../src/telemetry/scrape/pod-directory.js';
import { aGpuJob, aGpuPod, anExporterPod, finished, running } from '../../sim/kube-api/objects.js';

const KEYS: LabelKeys = { ...DEFAULT_LABEL_KEYS, submittedBy: 'example.com/owner' };
const BULK = { image: 'nvcr.io/nvidia/pytorch:24.10-py3', env: [{ name: 'A', value: 'x'.repeat(200) }], ports: [{ containerPort: 8080 }] };
const TERMINATED = { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: '2026-11-20T10:02:00Z', finishedAt: '2026-11-20T10:30:00Z' } };

/** A pod setting every field anything reads, with bulk beside them. */
function aRichPod(): Pod {
  return {
    metadata: {
      name: 'train-0', namespace: 'llm', uid: 'pod-u1', resourceVersion: '42', creationTimestamp: '2026-11-20T10:00:00Z',
      deletionTimestamp: '2026-11-20T11:00:30Z', deletionGracePeriodSeconds: 30,
      labels: { 'gpucap.io/initiative': 'llm', 'gpucap.io/managed': 'TRUE', 'kueue.x-k8s.io/queue-name': 'q', app: 'nvidia-dcgm-exporter' },
      annotations: { 'example.com/owner': 'alice', 'kubectl.kubernetes.io/last-applied-configuration': 'y'.repeat(4000) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: 'job-1', controller: true }],
      managedFields: [{ manager: 'kubelet' }],
    } as Pod['metadata'],
    spec: {
      nodeName: 'gpu-1',
      initContainers: [
        { name: 'sidecar', restartPolicy: 'Always', resources: { limits: { 'nvidia.com/mig-1g.10gb': '1' } }, ...BULK },
        { name: 'warmup', resources: { requests: { 'nvidia.com/gpu': 4 }, limits: { 'nvidia.com/gpu': 4 } }, ...BULK },
      ],
      containers: [{ name: 'main', resources: { limits: { 'nvidia.com/gpu': '2', memory: '64Gi' } }, ...BULK }],
      volumes: [{ name: 'data' }],
    } as Pod['spec'],
    status: {
      // Each reason proves a different failure, so a selection that drops any one of them shows.
      phase: 'Failed', reason: 'DeadlineExceeded', podIP: '198.18.0.7', startTime: '2026-11-20T10:01:00Z',
      conditions: [
        { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-20T10:31:00Z', reason: 'PodFailed' } as never,
        { type: 'DisruptionTarget', status: 'True', lastTransitionTime: '2026-11-20T10:30:00Z', reason: 'TerminationByKubelet', message: 'The node was low on resource: memory.' } as never,
      ],
      initContainerStatuses: [{ name: 'warmup', state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2026-11-20T10:02:00Z' } }, imageID: 'sha' } as never],
      containerStatuses: [{ name: 'main', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: TERMINATED, restartCount: 3 } as never],
    },
  };
}

function aRichJob(): Job {
  const pod = aRichPod();
  return {
    metadata: { ...pod.metadata, uid: 'job-1', ownerReferences: [{ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', uid: 'pt-1' }] },
    spec: { parallelism: 4, suspend: false, template: { metadata: { labels: { 'gpucap.io/initiative': 'from-template' } }, spec: pod.spec }, backoffLimit: 2 } as Job['spec'],
    status: {
      startTime: '2026-11-20T10:01:00Z', completionTime: '2026-11-20T10:40:00Z',
      conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: '2026-11-20T10:39:00Z', reason: 'BackoffLimitExceeded' } as never],
    },
  };
}

/** A simulated pending GPU pod with `status`. */
function aGpuPodWith(status: Record<string, unknown>): Pod {
  return { ...(aGpuPod('ml', 'p') as Pod), status: status as Pod['status'] };
}

/** `selection` without the field at `path` (each step a property of an object selection). */
function withoutField(selection: FieldSelection, path: readonly string[]): FieldSelection {
  const [head, ...rest] = path;
  if (selection === true || head === undefined || !(head in selection)) throw new Error(`no field ${path.join('.')} in the selection`);
  const { [head]: child, ...others } = selection;
  return rest.length === 0 ? others : { ...others, [head]: withoutField(child as FieldSelection, rest) };
}

const fields = readFields(KEYS);
const projection = (): FactsProjection => new FactsProjection({ keys: KEYS, gpuResources: DEFAULT_GPU_RESOURCES });

describe('workloads: the fields read of each kind', () => {
  const pods: [string, Pod][] = [
    ['a pod setting every field read', aRichPod()],
    ['a simulated pending pod', aGpuPod('ml', 'p', { gpus: 2, node: 'n1', labels: { 'gpucap.io/initiative': 'x' } }) as Pod],
    ['a simulated running pod', { ...aGpuPod('ml', 'p'), status: running(Date.parse('2026-11-20T10:00:00Z')) } as Pod],
    ['a simulated failed pod', { ...aGpuPod('ml', 'p'), status: finished(Date.parse('2026-11-20T10:00:00Z'), Date.parse('2026-11-20T11:00:00Z'), 2) } as Pod],
  ];
  for (const [name, pod] of pods) {
    it(`projects ${name} the same whole or selected`, () => {
      const selected = selectFields(pod, fields.pods) as Pod;
      expect(projection().pod(selected, 5)).to.deep.equal(projection().pod(pod, 5));
    });
  }

  it("keeps every reason that says why a pod or a Job failed", () => {
    const pod = projection().pod(selectFields(aRichPod(), fields.pods) as Pod);
    expect(podFailureEvidence(pod.failureHints)).to.deep.equal(['evicted', 'oom_killed', 'deadline_exceeded']);
    expect(projection().job(selectFields(aRichJob(), fields.jobs) as Job).failedBy).to.equal('backoff_limit_exceeded');
  });

  // The selection must keep each field a reason is read from: without it, the projection of an
  // object proving a failure through that field alone differs from the whole object's.
  const reasonFields: { field: string; kind: 'pods' | 'jobs'; path: string[]; object: Pod | Job }[] = [
    { field: 'status.reason', kind: 'pods', path: ['status', 'reason'], object: aGpuPodWith({ phase: 'Failed', reason: 'Evicted' }) },
    {
      field: 'status.conditions[].reason',
      kind: 'pods',
      path: ['status', 'conditions', 'reason'],
      object: aGpuPodWith({ phase: 'Failed', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] }),
    },
    {
      field: 'status.containerStatuses[].state.terminated.reason',
      kind: 'pods',
      path: ['status', 'containerStatuses', 'state', 'terminated', 'reason'],
      object: aGpuPodWith({ phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }),
    },
    {
      field: 'status.containerStatuses[].lastState.terminated.reason',
      kind: 'pods',
      path: ['status', 'containerStatuses', 'lastState', 'terminated', 'reason'],
      object: aGpuPodWith({ phase: 'Running', containerStatuses: [{ name: 'main', state: {}, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }),
    },
    {
      field: 'status.initContainerStatuses[].state.terminated.reason',
      kind: 'pods',
      path: ['status', 'initContainerStatuses', 'state', 'terminated', 'reason'],
      object: aGpuPodWith({ phase: 'Failed', initContainerStatuses: [{ name: 'init', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }),
    },
    {
      field: "a Job's status.conditions[].reason",
      kind: 'jobs',
      path: ['status', 'conditions', 'reason'],
      object: { ...(aGpuJob('ml', 'j', 1) as Job), status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] } },
    },
  ];
  for (const row of reasonFields) {
    it(`keeps ${row.field}, which a failure reason is read from`, () => {
      const project = (object: unknown): object => (row.kind === 'pods' ? projection().pod(object as Pod) : projection().job(object as Job));
      const whole = project(row.object);
      expect(project(selectFields(row.object, fields[row.kind]))).to.deep.equal(whole);
      expect(project(selectFields(row.object, withoutField(fields[row.kind], row.path)))).not.to.deep.equal(whole);
    });
  }

  it('selects under a quarter of a rich pod, without managedFields, env, messages or other annotations', () => {
    // A quarter of this small pod (6.6 KB) since the failure reasons are kept too: 1.5 KB selected,
    // about one more condition's worth. Real pods carry far more bulk (4-20 KB).
    const pod = aRichPod();
    const selected = selectFields(pod, fields.pods) as Pod;
    expect(JSON.stringify(selected).length).to.be.below(JSON.stringify(pod).length / 4);
    expect(selected.metadata?.annotations).to.deep.equal({ 'example.com/owner': 'alice' });
    expect(JSON.stringify(selected)).not.to.include('managedFields').and.not.to.include('"env"').and.not.to.include('"message"');
  });

  it('projects a Job setting every field read the same whole or selected', () => {
    const job = aRichJob();
    expect(projection().job(selectFields(job, fields.jobs) as Job, 5)).to.deep.equal(projection().job(job, 5));
    const simulated = aGpuJob('ml', 'j', 4) as Job;
    expect(projection().job(selectFields(simulated, fields.jobs) as Job)).to.deep.equal(projection().job(simulated));
  });

  it('gives the telemetry flow the same exporters and GPU pods whole or selected', () => {
    const directories = [false, true].map((select) => {
      const directory = new PodDirectory('c1', { discovery: { selectors: [], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' }, selectors: [['app', 'nvidia-dcgm-exporter']], gpuResources: DEFAULT_GPU_RESOURCES });
      const gpuPod = aGpuPod('ml', 'p', { gpus: 1 });
      const objects = [anExporterPod('gpu-1', '198.18.0.9') as Pod, { ...gpuPod, metadata: { ...gpuPod.metadata, uid: 'p-uid' } } as Pod, { ...aRichPod(), status: { ...aRichPod().status, phase: 'Running' } }];
      for (const object of objects) directory.onPodEvent({ type: 'ADDED', object: select ? (selectFields(object, fields.pods) as Pod) : object, resourceVersion: '1' }, undefined);
      return directory;
    });
    const [whole, selected] = directories;
    expect([...(selected?.exporters() ?? [])]).to.deep.equal([...(whole?.exporters() ?? [])]).and.to.have.length(1);
    expect(selected?.workloadOf('ml', 'p')).to.equal(whole?.workloadOf('ml', 'p')).and.to.be.a('string');
    expect(selected?.gpuPods).to.equal(whole?.gpuPods);
  });

  it('keeps of a Namespace and a Node what the context and the writer election read', () => {
    const allowed = { 'gpucap.io/allowed-initiatives': 'llm, vision' };
    const namespace = { metadata: { name: 'kube-system', uid: 'ks-1', resourceVersion: '3', labels: { 'gpucap.io/organization': 'org-a' }, annotations: { big: 'z'.repeat(100), ...allowed } } };
    const node = { metadata: { name: 'gpu-1', uid: 'n-1', labels: { 'node.kubernetes.io/instance-type': 'p5.48xlarge' }, annotations: allowed }, status: { images: [{ names: ['a'], sizeBytes: 1 }] } };
    const slim = contextSlimmer(KEYS);
    expect(slim(selectFields(namespace, fields.namespaces) as never)).to.deep.equal(slim(namespace));
    expect(slim(selectFields(namespace, fields.namespaces) as never).metadata?.annotations).to.deep.equal(allowed);
    expect(selectFields(namespace, fields.namespaces)).to.deep.equal({
      metadata: { name: 'kube-system', uid: 'ks-1', resourceVersion: '3', labels: { 'gpucap.io/organization': 'org-a' }, annotations: allowed },
    });
    // Of a Node's annotations only HAMi's register of its GPUs; of its status what the fleet reads.
    expect(selectFields(node, fields.nodes)).to.deep.equal({ metadata: { name: 'gpu-1', uid: 'n-1', labels: node.metadata.labels, annotations: {} }, status: {} });
  });

  it('keeps of a Node what the fleet reads of its state and GPUs, and drops the kubelet\'s heartbeats', () => {
    const register = '[{"id":"GPU-1","count":10,"health":true}]';
    const node = {
      metadata: { name: 'gpu-1', uid: 'n-1', labels: { 'nvidia.com/gpu.count': '8' }, annotations: { 'hami.io/node-nvidia-register': register, 'hami.io/node-handshake': 'Reported now' } },
      spec: { unschedulable: true, podCIDR: '198.18.0.0/24' },
      status: {
        capacity: { 'nvidia.com/gpu': '8', cpu: '224' },
        allocatable: { 'nvidia.com/gpu': '7', cpu: '223' },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-12-05T10:00:00Z', reason: 'KubeletReady', message: 'posting' }],
        images: [{ names: ['a'], sizeBytes: 1 }],
      },
    };
    const selected = selectFields(node, fields.nodes) as Node;
    expect(selected).to.deep.equal({
      metadata: { name: 'gpu-1', uid: 'n-1', labels: node.metadata.labels, annotations: { 'hami.io/node-nvidia-register': register } },
      spec: { unschedulable: true },
      status: { capacity: node.status.capacity, allocatable: node.status.allocatable, conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const reading = { keys: KEYS, gpuResources: DEFAULT_GPU_RESOURCES };
    expect(nodeFacts(selected, reading)).to.deep.equal(nodeFacts(node as Node, reading));
  });

  it('keeps the allowed-initiatives annotation of the configured key', () => {
    const keys: LabelKeys = { ...KEYS, allowedInitiatives: 'example.com/teams' };
    const namespace = { metadata: { name: 'ml', annotations: { 'example.com/teams': 'llm', 'gpucap.io/allowed-initiatives': 'vision' } } };
    expect(contextSlimmer(keys)(selectFields(namespace, readFields(keys).namespaces) as never)).to.deep.equal({
      metadata: { name: 'ml', labels: undefined, annotations: { 'example.com/teams': 'llm' } },
    });
  });

  it('keeps of a Node the capacity type\'s labels: the well-known ones, or only the configured one', () => {
    const labels = {
      'karpenter.sh/capacity-type': 'spot', 'eks.amazonaws.com/capacityType': 'SPOT', 'cloud.google.com/gke-spot': 'true',
      'cloud.google.com/gke-preemptible': 'true', 'kubernetes.azure.com/scalesetpriority': 'spot', 'example.com/sold-as': 'reserved',
      'topology.kubernetes.io/zone': 'us-east-1a',
    };
    const node = { metadata: { name: 'gpu-1', labels } };
    const { 'example.com/sold-as': configured, 'topology.kubernetes.io/zone': _zone, ...wellKnown } = labels;
    expect(contextSlimmer(KEYS)(node).metadata?.labels).to.deep.equal(wellKnown);
    expect(contextSlimmer({ ...KEYS, capacityType: 'example.com/sold-as' })(node).metadata?.labels).to.deep.equal({ 'example.com/sold-as': configured });
  });
});
