// The fields of each watched kind that anything downstream reads: the facts projection and the
// mappers, the telemetry flow's pod directory (podIP, exporter labels), the Namespace and Node
// context (caches/slim.ts) and the writer election (the kube-system Namespace's uid). The watch decoder keeps
// these and drops the rest (src/k8s/objects/k8s-types.ts names the same fields as types). Labels
// are kept whole: they are small, and the exporter selectors and the attribution keys both read them.
// Of the annotations, which can be large (kubectl's last-applied-configuration), only the submitted-by
// key and KAI Scheduler's fraction keys (src/k8s/gpus/gpu-ask.ts) are kept, of a Namespace the
// one listing the initiatives its objects may name (attribution/labels.ts), and of a Node HAMi's
// register of its GPUs (src/k8s/gpus/physical-gpus.ts).
// test/workloads/read-fields.test.ts checks that the projection of a selected object equals that of
// the whole one.
import type { WatchedResource } from '../domain/cluster-status.js';
import type { FieldSelection } from '../domain/field-selection.js';
import type { LabelKeys } from './attribution/label-keys.js';
import { KAI_ANNOTATIONS } from '../k8s/gpus/gpu-ask.js';
import { HAMI_NODE_REGISTER } from '../k8s/gpus/physical-gpus.js';

function objectMeta(keys: Readonly<LabelKeys>): FieldSelection {
  return {
    name: true,
    namespace: true,
    uid: true,
    resourceVersion: true,
    creationTimestamp: true,
    deletionTimestamp: true,
    deletionGracePeriodSeconds: true,
    labels: true,
    annotations: { [keys.submittedBy]: true, ...Object.fromEntries(Object.values(KAI_ANNOTATIONS).map((key) => [key, true])) },
    ownerReferences: true,
  };
}

const CONTAINER: FieldSelection = { name: true, restartPolicy: true, resources: { requests: true, limits: true } };
// A pod's claims name the DRA ResourceClaims its GPUs may come from (src/k8s/gpus/dra-share.ts).
const POD_SPEC: FieldSelection = { nodeName: true, initContainers: CONTAINER, containers: CONTAINER, resourceClaims: true };
// The reasons (a container's, the pod's, a condition's) say why a workload failed
// (failure/pod-failure-evidence.ts, failure/job-failure-evidence.ts).
const TERMINATED: FieldSelection = { terminated: { exitCode: true, reason: true, startedAt: true, finishedAt: true } };
const CONTAINER_STATUS: FieldSelection = { name: true, state: TERMINATED, lastState: TERMINATED };
const CONDITION: FieldSelection = { type: true, status: true, reason: true, lastTransitionTime: true };

/** What is read of each kind, for the label keys the service is configured with. */
export function readFields(keys: Readonly<LabelKeys>): Record<WatchedResource, FieldSelection> {
  const metadata = objectMeta(keys);
  const context = { name: true, uid: true, resourceVersion: true, labels: true } as const;
  return {
    namespaces: { metadata: { ...context, annotations: { [keys.allowedInitiatives]: true } } },
    // The fleet reads a node's state and GPUs (src/fleet/node-facts.ts); heartbeat times are left out,
    // so that the kubelet's status updates change nothing the caches compare.
    nodes: {
      metadata: { ...context, annotations: { [HAMI_NODE_REGISTER]: true } },
      spec: { unschedulable: true },
      status: { capacity: true, allocatable: true, conditions: { type: true, status: true } },
    },
    pods: {
      metadata,
      spec: POD_SPEC,
      status: {
        phase: true,
        reason: true,
        podIP: true,
        startTime: true,
        conditions: CONDITION,
        initContainerStatuses: CONTAINER_STATUS,
        containerStatuses: CONTAINER_STATUS,
        resourceClaimStatuses: true,
      },
    },
    jobs: {
      metadata,
      spec: { parallelism: true, suspend: true, template: { metadata, spec: POD_SPEC } },
      status: { startTime: true, completionTime: true, conditions: CONDITION },
    },
    // What src/k8s/objects/dra-types.ts names: a claim's allocation and consumers, a slice's devices.
    resourceclaims: {
      metadata: { name: true, namespace: true, uid: true, resourceVersion: true, deletionTimestamp: true },
      spec: { devices: { requests: true, config: true } },
      status: { allocation: { devices: { results: true } }, reservedFor: true },
    },
    resourceslices: {
      metadata: { name: true, uid: true, resourceVersion: true },
      spec: { driver: true, nodeName: true, pool: true, devices: { name: true, attributes: true, basic: { attributes: true } } },
    },
    deviceclasses: {
      metadata: { name: true, uid: true, resourceVersion: true },
      spec: { selectors: true },
    },
  };
}
