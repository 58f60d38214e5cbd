// cluster-admin calls for test setup: create the objects a kubelet, scheduler and Job controller
// would, move them through their lifecycle by patching status, delete them, write the capacity
// ConfigMaps an operator would, serve DRA's resource.k8s.io/v1 as CRDs and create its objects, grant
// the reader the chart's ClusterRole and namespaced Role, and create ServiceAccounts, their tokens and
// ClusterRoleBindings. Plain JSON over node:https with the kubeconfig's TLS and token.
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { fileURLToPath } from 'node:url';
import {
  KubeConfig,
  type V1ConfigMap,
  type V1CustomResourceDefinition,
  type V1DeviceClass,
  type V1Job,
  type V1JobStatus,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1PodStatus,
  type V1PolicyRule,
  type ResourceV1ResourceClaim,
  type V1ResourceClaimStatus,
  type V1ResourceSlice,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { waitFor } from '../wait-for.js';

const CHART_RULES = fileURLToPath(new URL('../../../charts/gpu-capacity-api/files/clusterrole-rules.yaml', import.meta.url));
const CHART_ROLE_RULES = fileURLToPath(new URL('../../../charts/gpu-capacity-api/files/role-rules.yaml', import.meta.url));
export const READER_USER = 'gpucap-reader';
const READER_ROLE = 'gpucap-reader-chart-rules';
const READER_NAMESPACED_ROLE = 'gpucap-reader-chart-role-rules';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const DRA_CRDS_DIR = fileURLToPath(new URL('../../fixtures/kubernetes/dra-crds/', import.meta.url));
/** The DRA resources the CRDs serve (dra-crds/<resource>.resource.k8s.io.json). */
export const DRA_RESOURCES = ['resourceclaims', 'resourceslices', 'deviceclasses'] as const;
export const DRA_GROUP = '/apis/resource.k8s.io';
export const DRA = `${DRA_GROUP}/v1`;
/** Creating, establishing and publishing three CRDs takes about a second; this allows for a slow machine. */
const DRA_SERVED_TIMEOUT_MS = 30_000;
const READER_SUBJECT = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: READER_USER };
/** Who a ClusterRoleBinding names: a user (the reader) or a ServiceAccount of a namespace. */
export type RbacSubject = { kind: 'User'; name: string; namespace?: undefined } | { kind: 'ServiceAccount'; name: string; namespace: string };
/** The reader as an RBAC subject: the identity the service runs as in these tests. */
export const READER: RbacSubject = { kind: 'User', name: READER_USER };

/** Anything with metadata, as the API server returns it. */
export interface KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface KubeResponse {
  status: number;
  body: unknown;
}

export class KubeApiError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

type ContentType = 'application/json' | 'application/merge-patch+json';

export class AdminClient {
  private readonly kubeConfig = new KubeConfig();

  constructor(kubeconfigPath: string) {
    this.kubeConfig.loadFromFile(kubeconfigPath);
  }

  /** One request; resolves with any status (for tests that assert on refusals). */
  async send(method: string, path: string, body?: unknown, contentType: ContentType = 'application/json'): Promise<KubeResponse> {
    return sendJson(this.kubeConfig, method, path, body, contentType);
  }

  /** One request that must succeed (2xx); the server's message otherwise. */
  async call<T = KubeObject>(method: string, path: string, body?: unknown, contentType: ContentType = 'application/json'): Promise<T> {
    const response = await this.send(method, path, body, contentType);
    if (response.status < 200 || response.status > 299) {
      const message = (response.body as { message?: unknown } | undefined)?.message;
      throw new KubeApiError(`${method} ${path} answered ${response.status}: ${typeof message === 'string' ? message : JSON.stringify(response.body)}`, response.status);
    }
    return response.body as T;
  }

  async list(path: string): Promise<KubeObject[]> {
    return (await this.call<{ items: KubeObject[] }>('GET', path)).items;
  }

  createNamespace(name: string, labels: Record<string, string> = {}): Promise<KubeObject> {
    const namespace: V1Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
    return this.call('POST', '/api/v1/namespaces', namespace);
  }

  /**
   * Deletes the namespace as the namespace controller (absent here) would finish it: DELETE marks it
   * Terminating, and emptying spec.finalizers through the finalize subresource removes it.
   */
  async deleteNamespace(name: string): Promise<void> {
    const terminating = await this.call<V1Namespace>('DELETE', `/api/v1/namespaces/${name}`);
    await this.call('PUT', `/api/v1/namespaces/${name}/finalize`, { ...terminating, spec: { finalizers: [] } });
  }

  createNode(name: string, labels: Record<string, string> = {}): Promise<KubeObject> {
    const node: V1Node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } };
    return this.call('POST', '/api/v1/nodes', node);
  }

  deleteNode(name: string): Promise<KubeObject> {
    return this.call('DELETE', `/api/v1/nodes/${name}`);
  }

  labelNode(name: string, labels: Record<string, string>): Promise<KubeObject> {
    return this.call('PATCH', `/api/v1/nodes/${name}`, { metadata: { labels } }, 'application/merge-patch+json');
  }

  createPod(namespace: string, pod: V1Pod): Promise<KubeObject> {
    return this.call('POST', `/api/v1/namespaces/${namespace}/pods`, pod);
  }

  patchPodStatus(namespace: string, name: string, status: V1PodStatus): Promise<KubeObject> {
    return this.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { status }, 'application/merge-patch+json');
  }

  /**
   * DELETE with a grace period. A scheduled, unfinished pod then only gets a deletionTimestamp: with
   * no kubelet here, `gracePeriodSeconds: 0` (the kubelet's final delete) removes it.
   */
  deletePod(namespace: string, name: string, options: { gracePeriodSeconds?: number } = {}): Promise<KubeObject> {
    return this.call('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: options.gracePeriodSeconds });
  }

  createJob(namespace: string, job: V1Job): Promise<KubeObject> {
    return this.call('POST', `/apis/batch/v1/namespaces/${namespace}/jobs`, job);
  }

  patchJobStatus(namespace: string, name: string, status: V1JobStatus): Promise<KubeObject> {
    return this.call('PATCH', `/apis/batch/v1/namespaces/${namespace}/jobs/${name}/status`, { status }, 'application/merge-patch+json');
  }

  /**
   * Background propagation: the Job goes at once. (batch/v1 defaults to Orphan, which adds a finalizer
   * only the garbage collector removes, and none runs here; its pods stay either way.)
   */
  deleteJob(namespace: string, name: string): Promise<KubeObject> {
    return this.call('DELETE', `/apis/batch/v1/namespaces/${namespace}/jobs/${name}`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
  }

  createConfigMap(namespace: string, configMap: V1ConfigMap): Promise<KubeObject> {
    return this.call('POST', `/api/v1/namespaces/${namespace}/configmaps`, configMap);
  }

  /** PUT: replaces the whole ConfigMap, as `kubectl replace` (or `apply` of a full manifest) would. */
  replaceConfigMap(namespace: string, configMap: V1ConfigMap): Promise<KubeObject> {
    return this.call('PUT', `/api/v1/namespaces/${namespace}/configmaps/${configMap.metadata?.name ?? ''}`, configMap);
  }

  /** Merge PATCH of `data`, as `kubectl edit` or `kubectl patch --type=merge` would. */
  patchConfigMapData(namespace: string, name: string, data: Record<string, string>): Promise<KubeObject> {
    return this.call('PATCH', `/api/v1/namespaces/${namespace}/configmaps/${name}`, { data }, 'application/merge-patch+json');
  }

  deleteConfigMap(namespace: string, name: string): Promise<KubeObject> {
    return this.call('DELETE', `/api/v1/namespaces/${namespace}/configmaps/${name}`);
  }

  /**
   * Makes this 1.20 server serve DRA's resource.k8s.io/v1 (built in from 1.34) through the CRDs in
   * test/fixtures/kubernetes/dra-crds, and returns once the service could find and read it: each CRD
   * Established, and the group's discovery offering v1 with the three resources. Idempotent.
   */
  async installDraCrds(): Promise<void> {
    for (const resource of DRA_RESOURCES) {
      await this.createUnlessExists(CRDS, JSON.parse(readFileSync(`${DRA_CRDS_DIR}${resource}.resource.k8s.io.json`, 'utf8')));
    }
    const settled = async () => {
      const states = await Promise.all(DRA_RESOURCES.map((resource) => this.crdState(`${resource}.resource.k8s.io`)));
      return states.find((state) => state !== 'Established' && state !== 'pending') ?? (states.every((state) => state === 'Established') && 'Established');
    };
    const state = await waitFor(settled, { timeoutMs: DRA_SERVED_TIMEOUT_MS, what: 'the DRA CRDs to be Established' });
    if (state !== 'Established') throw new Error(`Cannot serve DRA's API through CRDs: ${state}`);
    await waitFor(() => this.draDiscoveryComplete(), { timeoutMs: DRA_SERVED_TIMEOUT_MS, what: `discovery of ${DRA} to list ${DRA_RESOURCES.join(', ')}` });
  }

  /** 'Established', 'pending', or why the server will never serve it (waiting would not help). */
  private async crdState(name: string): Promise<string> {
    const crd = await this.call<V1CustomResourceDefinition>('GET', `${CRDS}/${name}`);
    const conditions = crd.status?.conditions ?? [];
    const refused = conditions.find((c) => (c.type === 'NamesAccepted' || c.type === 'KubernetesAPIApprovalPolicyConformant') && c.status === 'False');
    if (refused !== undefined) return `CRD ${name}: ${refused.type} is False (${refused.reason ?? ''}: ${refused.message ?? ''})`;
    // The approval condition comes from a controller of its own, a moment after creation: wait for it too.
    const approved = conditions.some((c) => c.type === 'KubernetesAPIApprovalPolicyConformant' && c.status === 'True');
    const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
    return approved && established ? 'Established' : 'pending';
  }

  /** Discovery lags Established by a moment: until it lists v1, the service would not find the group. */
  private async draDiscoveryComplete(): Promise<boolean> {
    const group = await this.send('GET', DRA_GROUP);
    const versions = (group.body as { versions?: { version: string }[] } | undefined)?.versions ?? [];
    if (group.status !== 200 || !versions.some((v) => v.version === 'v1')) return false;
    const served = (await this.call<{ resources: { name: string }[] }>('GET', DRA)).resources.map((r) => r.name);
    return DRA_RESOURCES.every((resource) => served.includes(resource));
  }

  createDeviceClass(deviceClass: V1DeviceClass): Promise<KubeObject> {
    return this.call('POST', `${DRA}/deviceclasses`, deviceClass);
  }

  createResourceSlice(slice: V1ResourceSlice): Promise<KubeObject> {
    return this.call('POST', `${DRA}/resourceslices`, slice);
  }

  /** The server drops any `status` sent here (the /status subresource owns it), as the real API does. */
  createResourceClaim(namespace: string, claim: ResourceV1ResourceClaim): Promise<KubeObject> {
    return this.call('POST', `${DRA}/namespaces/${namespace}/resourceclaims`, claim);
  }

  /** What the scheduler writes: `allocation` once it picks devices, `reservedFor` the pods that use them. */
  patchResourceClaimStatus(namespace: string, name: string, status: V1ResourceClaimStatus): Promise<KubeObject> {
    return this.call('PATCH', `${DRA}/namespaces/${namespace}/resourceclaims/${name}/status`, { status }, 'application/merge-patch+json');
  }

  /**
   * Deletes the claim as the resource claim controller (absent here) would finish it: a claim with the
   * delete-protection finalizer is only marked by DELETE, and dropping its finalizers removes it.
   */
  async deleteResourceClaim(namespace: string, name: string): Promise<void> {
    const path = `${DRA}/namespaces/${namespace}/resourceclaims/${name}`;
    const marked = await this.call<Partial<KubeObject>>('DELETE', path);
    if (marked.metadata?.deletionTimestamp !== undefined) await this.call('PATCH', path, { metadata: { finalizers: null } }, 'application/merge-patch+json');
  }

  /**
   * Creates a ClusterRole from exactly the rules the Helm chart ships and binds it to the reader.
   * Idempotent: a role or binding that already exists is kept.
   */
  async bindChartRulesToReader(): Promise<void> {
    const rules = parse(readFileSync(CHART_RULES, 'utf8')) as V1PolicyRule[];
    await this.createUnlessExists(`${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: READER_ROLE }, rules });
    await this.createUnlessExists(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: READER_ROLE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_ROLE },
      subjects: [READER_SUBJECT],
    });
  }

  /**
   * Creates, in `namespace` (the service's own), a Role from exactly the rules the Helm chart ships
   * for it and binds it to the reader. Idempotent: a role or binding that already exists is kept.
   */
  async bindChartRoleToReader(namespace: string): Promise<void> {
    const rules = parse(readFileSync(CHART_ROLE_RULES, 'utf8')) as V1PolicyRule[];
    const metadata = { name: READER_NAMESPACED_ROLE, namespace };
    await this.createUnlessExists(`${RBAC}/namespaces/${namespace}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata, rules });
    await this.createUnlessExists(`${RBAC}/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: READER_NAMESPACED_ROLE },
      subjects: [READER_SUBJECT],
    });
  }

  createServiceAccount(namespace: string, name: string): Promise<KubeObject> {
    return this.call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  }

  /** A token of the ServiceAccount from the TokenRequest API, as the kubelet projects one into a pod (Prometheus' own). */
  async serviceAccountToken(namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
    const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } };
    const answer = await this.call<{ status?: { token?: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, request);
    const token = answer.status?.token;
    if (token === undefined || token === '') throw new Error(`The TokenRequest for ${namespace}/${name} returned no token`);
    return token;
  }

  /** A ClusterRole of `rules` (omit them to bind a role that exists, e.g. system:auth-delegator) bound to `subject`. Idempotent. */
  async bindClusterRole(role: string, subject: RbacSubject, rules?: V1PolicyRule[]): Promise<void> {
    if (rules !== undefined) {
      await this.createUnlessExists(`${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules });
    }
    const name = `${role}--${subject.namespace ?? ''}-${subject.name}`.replace(/[^a-z0-9.-]/g, '-');
    await this.createUnlessExists(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [subject.kind === 'ServiceAccount' ? subject : { apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    });
  }

  private async createUnlessExists(path: string, body: unknown): Promise<void> {
    const response = await this.send('POST', path, body);
    if (response.status === 201 || response.status === 409) return;
    throw new KubeApiError(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`, response.status);
  }
}

/** A request as any kubeconfig's user (admin or reader), resolving with the status and JSON body. */
export async function sendJson(kubeConfig: KubeConfig, method: string, path: string, body?: unknown, contentType: ContentType = 'application/json'): Promise<KubeResponse> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('Cannot send a request: the kubeconfig has no current cluster');
  const options: RequestOptions = { method, headers: { Accept: 'application/json' } };
  await kubeConfig.applyToHTTPSOptions(options);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) options.headers = { ...options.headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) };
  try {
    return await new Promise<KubeResponse>((resolve, reject) => {
      const req = request(new URL(server + path), options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            // Not JSON (rare error pages): the text itself is the body.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.on('error', reject);
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} got no answer in 30 s`)));
      req.end(payload);
    });
  } finally {
    if (typeof options.agent === 'object') options.agent.destroy();
  }
}
