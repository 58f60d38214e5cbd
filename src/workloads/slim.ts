// What the indexer keeps of each cached object: exactly the fields the mappers read (k8s-types.ts),
// and of labels and annotations only the configured keys. A Pod as the API server sends it is 4-20 KB
// (env, volumes, probes, last-applied annotations); the indexer holds every GPU pod and Job of a
// cluster for as long as it lives, so keeping the full objects would cost gigabytes at 150k pods.
// Mapping a slim object gives the same row as mapping the full one (tested on every mapper fixture).
import type { Condition, Container, ContainerState, ContainerStatus, Job, ObjectMeta, OwnerReference, Pod, StringMap } from './k8s-types.js';
import type { LabelKeys } from './mapping-context.js';
import { timestampMs } from './timestamps.js';

/** Label and annotation keys an object's own metadata is read for. */
export function objectLabelKeys(keys: Readonly<LabelKeys>): readonly string[] {
  return [keys.initiative, keys.submittedBy, keys.managed, keys.kueueQueueName];
}

/** Label keys a Namespace or Node is read for. */
export function contextLabelKeys(keys: Readonly<LabelKeys>): readonly string[] {
  return [keys.initiative, keys.organization, keys.instanceType, keys.gpuProduct];
}

function pick(map: StringMap | undefined, keys: readonly string[]): StringMap | undefined {
  if (map === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = map[key];
    if (value !== undefined) (kept ??= {})[key] = value;
  }
  return kept;
}

/**
 * A copy of `object` without its undefined properties. A copy and not `delete`: V8 turns an object
 * that loses a property into a hash-table ("dictionary") object, about 5 times larger (938 B against
 * 179 B for a slim ObjectMeta), and the cache holds several of them per pod for the pod's life.
 */
function defined<T extends object>(object: T): T {
  const kept: Partial<T> = {};
  for (const key in object) {
    const value = object[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept as T;
}

function slimOwner(ref: OwnerReference): OwnerReference {
  return defined({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: ref.controller });
}

export function slimMeta(meta: ObjectMeta | undefined, labelKeys: readonly string[]): ObjectMeta | undefined {
  if (meta === undefined) return undefined;
  return defined({
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
    creationTimestamp: meta.creationTimestamp,
    deletionTimestamp: meta.deletionTimestamp,
    deletionGracePeriodSeconds: meta.deletionGracePeriodSeconds,
    labels: pick(meta.labels, labelKeys),
    annotations: pick(meta.annotations, labelKeys),
    ownerReferences: meta.ownerReferences?.map(slimOwner),
  });
}

function slimContainer(container: Container): Container {
  const resources = container.resources;
  return defined({
    name: container.name,
    restartPolicy: container.restartPolicy,
    resources: resources === undefined ? undefined : defined({ requests: resources.requests, limits: resources.limits }),
  });
}

function slimState(state: ContainerState | undefined): ContainerState | undefined {
  const terminated = state?.terminated;
  if (terminated === undefined) return state === undefined ? undefined : {};
  return { terminated: defined({ exitCode: terminated.exitCode, startedAt: terminated.startedAt, finishedAt: terminated.finishedAt }) };
}

function slimStatus(status: ContainerStatus): ContainerStatus {
  return defined({ name: status.name, state: slimState(status.state), lastState: slimState(status.lastState) });
}

function slimCondition(condition: Condition): Condition {
  return defined({ type: condition.type, status: condition.status, lastTransitionTime: condition.lastTransitionTime });
}

/**
 * Of a pod's conditions the mappers read only the latest transition time (a finished pod's fallback
 * for its end, pod-status.ts), so only the condition that carries it is kept, not the usual five: about
 * 350 B less per cached pod. (A Job's conditions are read by type and are all kept.)
 */
function latestCondition(conditions: readonly Condition[] | undefined): Condition[] | undefined {
  if (conditions === undefined) return undefined;
  let latest: Condition | undefined;
  let latestAt: number | null = null;
  for (const condition of conditions) {
    const at = timestampMs(condition.lastTransitionTime);
    if (at !== null && (latestAt === null || at > latestAt)) {
      latest = condition;
      latestAt = at;
    }
  }
  return latest === undefined ? [] : [slimCondition(latest)];
}

export function slimPod(pod: Pod, keys: Readonly<LabelKeys>): Pod {
  const { spec, status } = pod;
  return defined({
    metadata: slimMeta(pod.metadata, objectLabelKeys(keys)),
    spec:
      spec === undefined
        ? undefined
        : defined({ nodeName: spec.nodeName, initContainers: spec.initContainers?.map(slimContainer), containers: spec.containers?.map(slimContainer) }),
    status:
      status === undefined
        ? undefined
        : defined({
            phase: status.phase,
            startTime: status.startTime,
            conditions: latestCondition(status.conditions),
            initContainerStatuses: status.initContainerStatuses?.map(slimStatus),
            containerStatuses: status.containerStatuses?.map(slimStatus),
          }),
  });
}

export function slimJob(job: Job, keys: Readonly<LabelKeys>): Job {
  const { spec, status } = job;
  const template = spec?.template;
  return defined({
    metadata: slimMeta(job.metadata, objectLabelKeys(keys)),
    spec:
      spec === undefined
        ? undefined
        : defined({
            parallelism: spec.parallelism,
            suspend: spec.suspend,
            template:
              template === undefined
                ? undefined
                : defined({
                    metadata: slimMeta(template.metadata, objectLabelKeys(keys)),
                    spec: template.spec === undefined ? undefined : defined({ initContainers: template.spec.initContainers?.map(slimContainer), containers: template.spec.containers?.map(slimContainer) }),
                  }),
          }),
    status:
      status === undefined
        ? undefined
        : defined({ startTime: status.startTime, completionTime: status.completionTime, conditions: status.conditions?.map(slimCondition) }),
  });
}
