// The few fields of Kubernetes objects the workload mappers read, as plain structural types.
// Only src/k8s/ imports @kubernetes/client-node; its objects (Dates for times) and plain JSON objects
// (strings for times) both fit these types, so the mappers stay pure and testable with literals.

/** An RFC 3339 string from JSON, or a Date as @kubernetes/client-node deserializes it. */
export type Timestamp = string | Date;

/** A resource quantity. Extended resources (GPUs) are integers: `"2"` or `2`. */
export type Quantity = string | number;

export type ResourceList = Readonly<Record<string, Quantity | undefined>>;
export type StringMap = Readonly<Record<string, string | undefined>>;

export interface OwnerReference {
  apiVersion?: string;
  kind: string;
  name?: string;
  uid: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: Timestamp;
  deletionTimestamp?: Timestamp;
  deletionGracePeriodSeconds?: number;
  labels?: StringMap;
  annotations?: StringMap;
  ownerReferences?: readonly OwnerReference[];
}

export interface Container {
  name?: string;
  /** Only init containers: `Always` makes it a sidecar that runs beside the app containers. */
  restartPolicy?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
}

/** A claim of the pod: a ResourceClaim by name, or one made for it from a template (its name is in the status). */
export interface PodResourceClaim {
  name?: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

export interface PodSpec {
  nodeName?: string;
  initContainers?: readonly Container[];
  containers?: readonly Container[];
  resourceClaims?: readonly PodResourceClaim[];
}

export interface ContainerStateTerminated {
  exitCode?: number;
  /** Why it stopped, as the runtime says: `OOMKilled`, `Error`, `Completed`, … (failure-evidence rules). */
  reason?: string;
  startedAt?: Timestamp;
  finishedAt?: Timestamp;
}

export interface ContainerState {
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name?: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface Condition {
  type: string;
  status: string;
  /** Read of a Pod's DisruptionTarget and a Job's Failed condition only (why it ended). */
  reason?: string;
  lastTransitionTime?: Timestamp;
}

export interface PodStatus {
  phase?: string;
  /** Why the kubelet or a controller ended it: `Evicted`, `DeadlineExceeded`, `Preempting`, `NodeLost`, … */
  reason?: string;
  /** Read by the telemetry flow only (where to scrape an exporter pod). */
  podIP?: string;
  startTime?: Timestamp;
  conditions?: readonly Condition[];
  initContainerStatuses?: readonly ContainerStatus[];
  containerStatuses?: readonly ContainerStatus[];
  /** The ResourceClaim made for each of the pod's claims from a template (Kubernetes 1.28+). */
  resourceClaimStatuses?: readonly { name?: string; resourceClaimName?: string }[];
}

export interface Pod {
  metadata?: ObjectMeta;
  spec?: PodSpec;
  status?: PodStatus;
}

export interface JobSpec {
  parallelism?: number;
  suspend?: boolean;
  template?: { metadata?: ObjectMeta; spec?: PodSpec };
}

export interface JobStatus {
  startTime?: Timestamp;
  completionTime?: Timestamp;
  conditions?: readonly Condition[];
}

export interface Job {
  metadata?: ObjectMeta;
  spec?: JobSpec;
  status?: JobStatus;
}

export interface Namespace {
  metadata?: ObjectMeta;
}

export interface Node {
  metadata?: ObjectMeta;
  /** `unschedulable`: cordoned (kubectl cordon, a drain, an autoscaler scaling it down). */
  spec?: { unschedulable?: boolean };
  /**
   * What the kubelet reports: the device plugins' resources (capacity, and allocatable without the
   * devices they mark unhealthy), and the conditions (Ready).
   */
  status?: { capacity?: ResourceList; allocatable?: ResourceList; conditions?: readonly Condition[] };
}
