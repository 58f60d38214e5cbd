// The resources the simulated API serves, and the Status bodies it answers errors with.
// Kept apart from the store so the server and the store agree on one table.

export type ResourceName = 'pods' | 'jobs' | 'nodes' | 'namespaces' | 'configmaps' | 'resourceclaims' | 'resourceslices' | 'deviceclasses';

/** An API group the sim serves only when asked to, as a real cluster serves it only from some version or with a feature gate on. */
export type OptionalApi = 'dra';

export interface ResourceInfo {
  kind: string;
  apiVersion: string;
  namespaced: boolean;
  /** Served only with this option on (KubeApiOptions); stored either way, so a world can be seeded before it is served. */
  requires?: OptionalApi;
}

/** Dynamic Resource Allocation's group and the one version the sim serves of it (GA since Kubernetes 1.34). */
export const DRA_GROUP = 'resource.k8s.io';
export const DRA_VERSION = 'v1';
const DRA_API_VERSION = `${DRA_GROUP}/${DRA_VERSION}`;

export const RESOURCES: Readonly<Record<ResourceName, ResourceInfo>> = {
  pods: { kind: 'Pod', apiVersion: 'v1', namespaced: true },
  jobs: { kind: 'Job', apiVersion: 'batch/v1', namespaced: true },
  nodes: { kind: 'Node', apiVersion: 'v1', namespaced: false },
  namespaces: { kind: 'Namespace', apiVersion: 'v1', namespaced: false },
  configmaps: { kind: 'ConfigMap', apiVersion: 'v1', namespaced: true },
  resourceclaims: { kind: 'ResourceClaim', apiVersion: DRA_API_VERSION, namespaced: true, requires: 'dra' },
  resourceslices: { kind: 'ResourceSlice', apiVersion: DRA_API_VERSION, namespaced: false, requires: 'dra' },
  deviceclasses: { kind: 'DeviceClass', apiVersion: DRA_API_VERSION, namespaced: false, requires: 'dra' },
};

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** Any Kubernetes object: only metadata is interpreted, the rest is stored as given. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'AlreadyExists',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** A Status shaped like the real API server's (clients branch on `code` and `reason`). */
export function kubeStatus(code: number, message: string): KubeStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: REASONS[code] ?? 'Unknown', code };
}
