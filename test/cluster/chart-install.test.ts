// The chart installed on a real single-node Kubernetes cluster (scripts/cluster/up.sh: etcd,
// kube-apiserver, controller-manager, scheduler, kubelet, kube-proxy, containerd), walked as an
// operator walks it: helm install with the defaults plus an API-token record, the pod Ready through its
// own probes, the API and the admin Service reached with kubectl port-forward, /metrics refused to a
// tenant's ServiceAccount token and served to the one the chart's metrics-reader ClusterRole is bound
// to, workloads that really ran on the node, a capacity ConfigMap, helm upgrade, a deleted pod, helm
// uninstall. The chart's NetworkPolicy is installed but not enforced: this cluster's bridge network
// plugin enforces none, so nothing here tests what it would refuse. Run by `npm run test:cluster` (and
// .ci/run), not by `npm test`: it needs root, the built image and minutes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { helmBinary, CHART_DIR } from '../../scripts/render-manifests.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { IMAGE_HINT, requireContainerTools, runCommand, serviceImage } from '../support/container-tools.js';
import { AdminClient, type KubeObject } from '../support/envtest/admin-client.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';
import { portForward, upCluster, type Cluster, type PortForward } from './kubernetes.js';

const RELEASE = 'gpucap';
const NAMESPACE = 'gpu-capacity';
const FULLNAME = `${RELEASE}-gpu-capacity-api`;
const SELECTOR = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=gpu-capacity-api`;
const TEAM_NAMESPACE = 'team-llm';
/** A tenant's namespace with a ServiceAccount bound to nothing. */
const TENANT_NAMESPACE = 'team-vision';
/** The Prometheus ServiceAccount the chart's metrics-reader ClusterRole is bound to by default (kube-prometheus-stack's). */
const PROMETHEUS = { namespace: 'monitoring', name: 'prometheus-kube-prometheus-prometheus' };
const CLUSTER_HINT = 'sudo npm run test:cluster builds what it needs (the Kubernetes binaries take 15-20 minutes the first time)';

interface Workload {
  workload_id: string;
  name: string;
  status: string;
  initiative_id: string;
  gpu_count: number;
  instance_type: string;
}

describe('the Helm chart on a real single-node cluster', function () {
  this.timeout(45 * 60_000);
  const temp = makeTempDir('gpucap-cluster-');
  const token = generateApiToken();
  let cluster: Cluster | undefined;
  let admin: AdminClient;
  let helm: string;
  let image: string;
  let forward: PortForward | undefined;
  let adminForward: PortForward | undefined;
  let failed = false;

  before(async function () {
    requireContainerTools(this, 'the cluster tests', `${CLUSTER_HINT}; ${IMAGE_HINT}`);
    image = await serviceImage();
    helm = helmBinary();
    cluster = await upCluster(join(temp.path, 'cluster'), [image]);
    admin = new AdminClient(cluster.kubeconfig);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      failed = true;
      console.log(`      cluster logs (kept in ${cluster?.dir}):\n${cluster?.logTails() ?? ''}`);
    }
  });

  after(async () => {
    forward?.stop();
    adminForward?.stop();
    await cluster?.down({ keepLogs: failed });
    if (!failed) temp.remove();
  });

  const kubectl = (args: string[]) => (cluster as Cluster).kubectl(args);
  const helmRun = async (args: string[]) => {
    const result = await runCommand(helm, ['--kubeconfig', (cluster as Cluster).kubeconfig, ...args], { timeoutMs: 10 * 60_000 });
    if (result.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  const servicePods = async () => admin.list(`/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent(SELECTOR)}`);
  /** The release's one pod, once it is the only one and Ready; undefined before. */
  const readyPod = async (): Promise<KubeObject | undefined> => {
    const pods = (await servicePods()).filter((pod) => pod.metadata.deletionTimestamp === undefined);
    const ready = pods.filter((pod) => (pod.status as { conditions?: Array<{ type: string; status: string }> }).conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return pods.length === 1 ? ready[0] : undefined;
  };
  const currentPodName = async (): Promise<string> => (await waitFor(readyPod, { timeoutMs: 60_000, what: 'one Ready pod of the release' })).metadata.name;
  /** The API Service and the admin Service, each forwarded as `helm install`'s notes say. */
  const openForward = async () => {
    forward?.stop();
    adminForward?.stop();
    forward = await portForward(cluster as Cluster, NAMESPACE, `svc/${FULLNAME}`, [8080]);
    adminForward = await portForward(cluster as Cluster, NAMESPACE, `svc/${FULLNAME}-admin`, [9090]);
  };
  /** A token of the ServiceAccount, created if need be, from the TokenRequest API (what `kubectl create token` calls from 1.24). */
  const serviceAccountToken = async (namespace: string, name: string): Promise<string> => {
    const existing = await admin.send('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`);
    if (existing.status === 404) await admin.call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    const request = await admin.call<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 },
    });
    return request.status.token;
  };
  const api = (path: string) => fetch(`http://127.0.0.1:${forward?.ports[0]}${path}`, { headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' } });
  const workloads = async (): Promise<Workload[]> => {
    const response = await api('/v1/workloads?limit=100');
    expect(response.status, 'GET /v1/workloads').to.equal(200);
    return ((await response.json()) as { data: { workloads: Workload[] } }).data.workloads;
  };
  const byName = (list: Workload[]) => Object.fromEntries(list.map((workload) => [workload.name, workload]));

  it('installs with helm: the default values plus an API-token record, the pod Ready through its own probes', async () => {
    const values = join(temp.path, 'values.yaml');
    writeFileSync(values, [
      'image:',
      '  repository: localhost/gpu-capacity-api',
      `  tag: "${image.split(':').pop() ?? ''}"`,
      'apiTokens:',
      '  records:',
      '    - id: cluster-test',
      `      sha256: ${hashApiToken(token)}`,
      '      organization_id: acme',
      '      role: ORG_ADMIN',
      '',
    ].join('\n'));
    await helmRun(['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--create-namespace', '--values', values, '--wait', '--timeout', '5m']);
    const pod = await waitFor(readyPod, { timeoutMs: 60_000, what: 'one Ready pod of the release' });
    const status = pod.status as { containerStatuses: Array<{ ready: boolean; restartCount: number; image: string }> };
    expect(status.containerStatuses[0]).to.include({ ready: true, restartCount: 0 });
    const container = (pod.spec as { containers: Array<{ readinessProbe: { httpGet: { path: string } }; livenessProbe: { httpGet: { path: string } } }> }).containers[0];
    expect(container?.readinessProbe.httpGet.path).to.equal('/readyz');
    expect(container?.livenessProbe.httpGet.path).to.equal('/livez');
    const pvc = await admin.call<KubeObject & { status: { phase: string } }>('GET', `/api/v1/namespaces/${NAMESPACE}/persistentvolumeclaims/${FULLNAME}-index`);
    expect(pvc.status.phase).to.equal('Bound');
  });

  it('answers through kubectl port-forward: /readyz (watching with the in-cluster service account) and an authorized GET /v1/workloads', async () => {
    await openForward();
    const readyz = (await (await fetch(`http://127.0.0.1:${adminForward?.ports[0]}/readyz`)).json()) as { ready: boolean; components: { clusters: Array<{ clusterId: string; origin: string }> } };
    expect(readyz.ready).to.be.true;
    expect(readyz.components.clusters.map((c) => [c.clusterId, c.origin])).to.deep.equal([['local', 'in-cluster service account']]);
    const response = await api('/v1/workloads');
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { data: { workloads: unknown[] } }).data.workloads).to.be.an('array');
    const unauthorized = await fetch(`http://127.0.0.1:${forward?.ports[0]}/v1/workloads`, { headers: { 'X-Organization-Id': 'acme' } });
    expect(unauthorized.status).to.equal(401);
  });

  it('serves /metrics, through the admin Service and at the pod IP, only to a ServiceAccount the chart\'s metrics-reader ClusterRole is bound to', async () => {
    const service = await admin.call<{ spec: { type: string; clusterIP: string; ports: Array<{ name: string; port: number }> } }>('GET', `/api/v1/namespaces/${NAMESPACE}/services/${FULLNAME}-admin`);
    expect(service.spec.type).to.equal('ClusterIP');
    expect(service.spec.ports.map((port) => port.name)).to.deep.equal(['metrics']);
    const apiService = await admin.call<{ spec: { ports: Array<{ port: number }> } }>('GET', `/api/v1/namespaces/${NAMESPACE}/services/${FULLNAME}`);
    expect(apiService.spec.ports.map((port) => port.port), 'the API Service\'s ports').to.deep.equal([8080]);
    const pod = await waitFor(readyPod, { timeoutMs: 60_000, what: 'one Ready pod of the release' });
    // This test runs on the node: the bridge reaches pod IPs, and kube-proxy's rules ClusterIPs.
    const urls = {
      'the admin Service': `http://${service.spec.clusterIP}:${service.spec.ports[0]?.port ?? 0}/metrics`,
      'the pod IP': `http://${(pod.status as { podIP: string }).podIP}:9090/metrics`,
    };
    await admin.createNamespace(TENANT_NAMESPACE);
    const tenantToken = await serviceAccountToken(TENANT_NAMESPACE, 'notebook-runner');
    await admin.createNamespace(PROMETHEUS.namespace);
    const prometheusToken = await serviceAccountToken(PROMETHEUS.namespace, PROMETHEUS.name);
    const get = (url: string, token?: string) => fetch(url, { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } });
    for (const [where, url] of Object.entries(urls)) {
      const anonymous = await get(url);
      expect(anonymous.status, `${where}, no token`).to.equal(401);
      expect(await anonymous.text(), `${where}, no token`).not.to.include('gpucap_');
      const tenant = await get(url, tenantToken);
      expect(tenant.status, `${where}, the token of ${TENANT_NAMESPACE}'s ServiceAccount (authenticated, not allowed)`).to.equal(403);
      expect(await tenant.text(), `${where}, the token of ${TENANT_NAMESPACE}'s ServiceAccount`).not.to.include('gpucap_');
      const prometheus = await get(url, prometheusToken);
      expect(prometheus.status, `${where}, the token of ${PROMETHEUS.namespace}/${PROMETHEUS.name}`).to.equal(200);
      expect(await prometheus.text()).to.match(/^gpucap_ready(\{[^}]*\})? 1$/m);
    }
    const binding = await admin.call<{ roleRef: { name: string }; subjects: Array<{ kind: string; name: string; namespace: string }> }>('GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${FULLNAME}-metrics-reader`);
    expect(binding.roleRef.name).to.equal(`${FULLNAME}-metrics-reader`);
    expect(binding.subjects).to.deep.equal([{ kind: 'ServiceAccount', ...PROMETHEUS }]);
    // The probes' endpoints stay open, tokens or not.
    expect((await fetch(`http://127.0.0.1:${adminForward?.ports[0]}/livez`)).status).to.equal(200);
  });

  it('indexes a Job and a Pod that ran on the node, as its ServiceAccount with the chart\'s RBAC and nothing more', async () => {
    const node = (cluster as Cluster).node;
    // The node has no GPUs: advertise some, as a device plugin would, so GPU pods schedule.
    await admin.call('PATCH', `/api/v1/nodes/${node}/status`, { status: { capacity: { 'nvidia.com/gpu': '4' } } }, 'application/merge-patch+json');
    await admin.labelNode(node, { 'node.kubernetes.io/instance-type': 'p5.48xlarge' });
    await admin.createNamespace(TEAM_NAMESPACE, { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'llm' });
    const container = (name: string, script: string) => ({
      name, image, imagePullPolicy: 'IfNotPresent', command: ['node', '-e', script],
      resources: { limits: { 'nvidia.com/gpu': '1' } },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
    });
    await waitFor(async () => (await admin.call<{ status: { allocatable: Record<string, string> } }>('GET', `/api/v1/nodes/${node}`)).status.allocatable['nvidia.com/gpu'] === '4', { timeoutMs: 30_000, what: 'the node to offer 4 GPUs' });
    await admin.createJob(TEAM_NAMESPACE, {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'train-short' },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [container('train', 'setTimeout(() => {}, 2000)')] } } },
    });
    await admin.createPod(TEAM_NAMESPACE, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'notebook' },
      spec: { terminationGracePeriodSeconds: 1, containers: [container('notebook', 'setInterval(() => {}, 1000)')] },
    });
    const seen = await waitFor(async () => {
      const found = byName(await workloads());
      return found['train-short']?.status === 'completed' && found.notebook?.status === 'running' && found;
    }, { timeoutMs: 120_000, what: 'the Job completed and the Pod running in GET /v1/workloads' });
    expect(seen['train-short']).to.include({ initiative_id: 'llm', gpu_count: 1, instance_type: 'p5.48xlarge' });
    expect(seen.notebook).to.include({ initiative_id: 'llm', gpu_count: 1, instance_type: 'p5.48xlarge' });

    const serviceAccount = `system:serviceaccount:${NAMESPACE}:${FULLNAME}`;
    const can = async (verb: string, resource: string, namespace?: string) =>
      (await (cluster as Cluster).kubectlResult(['auth', 'can-i', verb, resource, '--as', serviceAccount, ...(namespace ? ['-n', namespace] : ['--all-namespaces'])])).stdout.trim();
    for (const [verb, resource] of [['list', 'pods'], ['watch', 'pods'], ['list', 'jobs.batch'], ['watch', 'nodes'], ['list', 'namespaces'], ['create', 'tokenreviews.authentication.k8s.io'], ['create', 'subjectaccessreviews.authorization.k8s.io']] as const) {
      expect(await can(verb, resource), `${verb} ${resource}`).to.equal('yes');
    }
    expect(await can('watch', 'configmaps', NAMESPACE), 'watch configmaps in its namespace').to.equal('yes');
    for (const [verb, resource] of [['get', 'secrets'], ['list', 'secrets'], ['create', 'pods'], ['delete', 'jobs.batch'], ['get', 'pods/log'], ['create', 'pods/exec'], ['list', 'configmaps'], ['patch', 'nodes']] as const) {
      expect(await can(verb, resource), `${verb} ${resource}`).to.equal('no');
    }
  });

  it('shows a capacity ConfigMap applied in its namespace in GET /v1/capacity', async () => {
    const file = join(temp.path, 'acme-capacity.json');
    writeFileSync(file, JSON.stringify({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'acme-capacity', labels: { 'gpucap.io/capacity': 'true' } },
      data: { 'capacity.yaml': capacityYaml({ allocated: 1000, llm: 300 }) },
    }));
    await kubectl(['apply', '-n', NAMESPACE, '-f', file]);
    const capacity = await waitFor(async () => {
      const body = (await (await api('/v1/capacity')).json()) as { data: { summary: { total_allocated_gpu_hours: number }; initiatives: Array<{ initiative_id: string; allocated_gpu_hours: number }> } };
      return body.data.summary.total_allocated_gpu_hours === 1000 && body.data;
    }, { timeoutMs: 30_000, what: 'the budget in GET /v1/capacity' });
    expect(capacity.initiatives.find((i) => i.initiative_id === 'llm')?.allocated_gpu_hours).to.equal(300);
  });

  it('answers kubectl gpucap, built into one file, through its own port-forward to the pod via a real kubelet', async () => {
    await runCommand(process.execPath, ['scripts/build-kubectl-plugin.mjs'], { timeoutMs: 120_000 });
    const env = { PATH: process.env.PATH ?? '', HOME: temp.path, KUBECONFIG: (cluster as Cluster).kubeconfig, GPUCAP_TOKEN: token, GPUCAP_ORG: 'acme' };
    const plugin = (args: string[]) => runCommand('dist/kubectl-gpucap.cjs', args, { env, timeoutMs: 60_000 });
    const capacity = await plugin(['capacity', '-o', 'json']);
    expect(capacity.code, capacity.stderr).to.equal(0);
    expect((JSON.parse(capacity.stdout) as { summary: { total_allocated_gpu_hours: number } }).summary.total_allocated_gpu_hours).to.equal(1000);
    const workloads = await plugin(['workloads', '--namespace', NAMESPACE]);
    expect(workloads.code, workloads.stderr).to.equal(0);
    expect(workloads.stdout.split('\n')[0]).to.match(/^NAME\s+STATUS\s+TEAM\s+USER\s+GPUS\s+SUBMITTED\s+STARTED$/);
    const refused = await plugin(['workloads', '--token', 'gca_not-a-token']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/\(UNAUTHENTICATED, request /);
  });

  it('keeps the history in the PVC through helm upgrade with a changed value', async () => {
    const before = byName(await workloads());
    // The finished Job leaves the cluster: from now on only the index remembers it.
    await kubectl(['delete', 'job', 'train-short', '-n', TEAM_NAMESPACE, '--cascade=foreground', '--wait=true']);
    const oldPod = await currentPodName();
    await helmRun(['upgrade', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--reuse-values', '--set', 'config.retention_days=365', '--wait', '--timeout', '5m']);
    const newPod = await waitFor(async () => {
      const pod = await readyPod();
      return pod !== undefined && pod.metadata.name !== oldPod && pod;
    }, { timeoutMs: 120_000, what: 'a new Ready pod after the upgrade' });
    const env = (newPod.spec as { containers: Array<{ env: Array<{ name: string; value?: string }> }> }).containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'GPUCAP_RETENTION_DAYS')?.value).to.equal('365');
    await openForward();
    const after = byName(await workloads());
    expect(after['train-short'], 'the deleted Job, from the index').to.deep.equal(before['train-short']);
    expect(after.notebook?.workload_id).to.equal(before.notebook?.workload_id);
  });

  it('comes back with the same index when its pod is deleted', async () => {
    const before = await workloads();
    const oldPod = await currentPodName();
    await kubectl(['delete', 'pod', oldPod, '-n', NAMESPACE, '--wait=true']);
    await waitFor(async () => {
      const pod = await readyPod();
      return pod !== undefined && pod.metadata.name !== oldPod;
    }, { timeoutMs: 120_000, what: 'the replacement pod to be Ready' });
    await openForward();
    expect(await workloads()).to.deep.equal(before);
  });

  it('logged no error from its start to here', async () => {
    const pod = await currentPodName();
    const lines = (await kubectl(['logs', pod, '-n', NAMESPACE])).split('\n').filter((line) => line.startsWith('{'));
    expect(lines.length, 'log lines').to.be.greaterThan(0);
    const errors = lines.filter((line) => ['error', 'fatal'].includes((JSON.parse(line) as { level: string }).level));
    expect(errors).to.deep.equal([]);
  });

  it('helm uninstall removes everything but the PVC; installing the release again takes the PVC, and its history, back', async () => {
    forward?.stop();
    forward = undefined;
    adminForward?.stop();
    adminForward = undefined;
    const manifest = await helmRun(['get', 'manifest', RELEASE, '--namespace', NAMESPACE]);
    const objects = [...manifest.matchAll(/^kind: (\S+)\n(?:.*\n)*?metadata:\n\s+name: (\S+)/gm)].map((m) => `${m[1]}/${m[2]}`);
    expect(objects).to.include.members([
      `Deployment/${FULLNAME}`, `Service/${FULLNAME}`, `Service/${FULLNAME}-admin`, `ServiceAccount/${FULLNAME}`, `PersistentVolumeClaim/${FULLNAME}-index`,
      `NetworkPolicy/${FULLNAME}`, `ClusterRoleBinding/${FULLNAME}-auth-delegator`, `ClusterRole/${FULLNAME}-metrics-reader`, `ClusterRoleBinding/${FULLNAME}-metrics-reader`,
    ]);
    await helmRun(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '3m']);
    const left = async (kind: string, name: string) => {
      const namespaced = !['ClusterRole', 'ClusterRoleBinding'].includes(kind);
      return (await (cluster as Cluster).kubectlResult(['get', kind, name, ...(namespaced ? ['-n', NAMESPACE] : []), '-o', 'name'])).code === 0;
    };
    for (const object of objects) {
      const [kind = '', name = ''] = object.split('/');
      expect(await left(kind, name), `${object} after helm uninstall`).to.equal(kind === 'PersistentVolumeClaim');
    }
    // The Deployment is gone; its pod drains (SIGTERM, then up to its 30 s grace period) and goes too.
    await waitFor(async () => {
      const pods = await servicePods();
      expect(pods.map((pod) => `${pod.metadata.name} (${(pod.status as { phase: string }).phase}${pod.metadata.deletionTimestamp ? ', terminating' : ''})`)).to.deep.equal([]);
      return true;
    }, { timeoutMs: 120_000, what: 'the release\'s pod to be gone after helm uninstall' });

    await helmRun(['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--values', join(temp.path, 'values.yaml'), '--wait', '--timeout', '5m']);
    await openForward();
    expect(byName(await workloads())['train-short']?.status, 'the Job deleted before the uninstall').to.equal('completed');
  });
});
