// kubectl gpucap without --url, against a real kube-apiserver (envtest v1.20): it finds the chart's
// Service by its labels in the kubeconfig's cluster, picks a ready pod behind it, and port-forwards
// to the pod's API port through the API server, which proxies the stream to the pod's node (here a
// stand-in kubelet, envtest having none; test/cluster/ runs the same against a real kubelet). The
// forwarded port reaches the real service. Discovery's refusals name what to pass instead.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { run } from '../../src/cli/kubectl/run.js';
import { openServicePortForward } from '../../src/k8s/service-port-forward.js';
import { AdminClient } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { startStandInKubelet, type StandInKubelet } from '../support/stand-in-kubelet.js';
import { makeTempDir } from '../support/temp-dir.js';
import { aWorkload } from '../support/workload-builder.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const LABELS = { 'app.kubernetes.io/name': 'gpu-capacity-api', 'app.kubernetes.io/instance': 'gpucap' };
const API_PORT = 8080;

describe('kubectl gpucap port-forward through a real kube-apiserver (envtest v1.20)', function () {
  this.timeout(120_000);
  const temp = makeTempDir('gpucap-forward-');
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let kubelet: StandInKubelet | undefined;
  let t: TestService | undefined;

  const service = (namespace: string) => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'gpucap-gpu-capacity-api', namespace, labels: LABELS },
    spec: { selector: LABELS, ports: [{ name: 'api', port: 8080, targetPort: 'api' }] },
  });
  // The chart's second Service, with the same name label: the plugin must not count it as a release.
  const adminService = (namespace: string) => ({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'gpucap-gpu-capacity-api-admin', namespace, labels: { ...LABELS, 'app.kubernetes.io/component': 'admin' } },
    spec: { selector: LABELS, ports: [{ name: 'admin', port: 9090, targetPort: 'admin' }] },
  });
  const pod = (namespace: string, name: string) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: LABELS },
    spec: { nodeName: 'stand-in-node', containers: [{ name: 'api', image: 'gpu-capacity-api:test', ports: [{ name: 'api', containerPort: API_PORT }, { name: 'admin', containerPort: 9090 }] }] },
  });
  const markReady = (namespace: string, name: string, ready: boolean) =>
    admin.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } }, 'application/merge-patch+json');

  before(async function () {
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    kubelet = await startStandInKubelet(temp.path);
    t = await startTestService();
    await t.service.store.upsertWorkloads([aWorkload({ workloadId: 'f0000000-0000-4000-8000-000000000001', name: 'forwarded-job', initiativeId: 'llm' })]);
    // The pod's node, whose kubelet the API server dials: its InternalIP and kubelet port (no Hostname address, which it would prefer).
    await admin.call('POST', '/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node', metadata: { name: 'stand-in-node' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } },
    });
    await admin.createNamespace('gpu-capacity');
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity/services', service('gpu-capacity'));
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity/services', adminService('gpu-capacity'));
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity/pods', pod('gpu-capacity', 'gpucap-0'));
    await markReady('gpu-capacity', 'gpucap-0', true);
    const [host, port] = t.service.apiAddress.split(':');
    kubelet.route('gpu-capacity/gpucap-0', API_PORT, { host: host ?? '127.0.0.1', port: Number(port) });
  });
  after(async () => {
    await t?.stop();
    await kubelet?.close();
    await envtest?.stop();
    temp.remove();
  });

  const kubeConfig = () => {
    const config = new KubeConfig();
    config.loadFromFile(envtest?.adminKubeconfig ?? '');
    return config;
  };
  const cli = async (args: string[]) => {
    let out = '';
    let err = '';
    // The credentials come from the environment: a --token on the command line is warned about on stderr.
    const code = await run(args, {
      env: { GPUCAP_TOKEN: t?.callers.admin.token ?? '', GPUCAP_ORG: 'acme' },
      out: (text) => (out += text),
      err: (text) => (err += text),
      now: () => Date.now(),
      connect: (options) => openServicePortForward({ ...options, kubeConfig: kubeConfig() }),
    });
    return { code, out, err };
  };

  it('finds the service by the chart\'s labels and forwards to its ready pod through the API server', async () => {
    const result = await cli(['workloads', '-o', 'json']);
    expect(result.code, result.err).to.equal(0);
    expect((JSON.parse(result.out) as { workloads: { name: string }[] }).workloads.map((w) => w.name)).to.deep.equal(['forwarded-job']);
    expect(kubelet?.requests).to.include(`/portForward/gpu-capacity/gpucap-0?port=${API_PORT}`);
  });

  it('carries concurrent connections, each in its own stream, and closes them all', async () => {
    const forward = await openServicePortForward({ context: undefined, namespace: 'gpu-capacity', kubeConfig: kubeConfig() });
    try {
      expect(forward.target).to.equal(`gpu-capacity/gpucap-0:${API_PORT}`);
      const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${forward.url}/v1/health`).then((r) => r.json() as Promise<{ data: { status: string } }>)));
      expect(answers.map((a) => a.data.status)).to.deep.equal(Array(5).fill('healthy'));
    } finally {
      await forward.close();
    }
    const after = await fetch(`${forward.url}/v1/health`).then(() => 'answered', () => 'closed');
    expect(after).to.equal('closed');
  });

  it('says which namespace has no service, which services are ambiguous, and which context is unknown (exit 2)', async () => {
    const absent = await cli(['health', '--namespace', 'elsewhere']);
    expect(absent).to.deep.include({ code: 2, err: 'Error: No gpu-capacity-api service (label app.kubernetes.io/name=gpu-capacity-api,app.kubernetes.io/component!=admin) in namespace "elsewhere"; pass --namespace, or --url to skip the discovery\n' });
    const unknown = await cli(['health', '--context', 'nowhere']);
    expect(unknown.code).to.equal(2);
    expect(unknown.err).to.match(/^Error: The kubeconfig has no context "nowhere" \(contexts: .+\)\n$/);

    await admin.createNamespace('gpu-capacity-2');
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity-2/services', service('gpu-capacity-2'));
    try {
      const ambiguous = await cli(['health']);
      expect(ambiguous).to.deep.include({ code: 2, err: 'Error: More than one gpu-capacity-api service (gpu-capacity-2/gpucap-gpu-capacity-api, gpu-capacity/gpucap-gpu-capacity-api): pass --namespace (and --context) to choose\n' });
      const chosen = await cli(['health', '--namespace', 'gpu-capacity', '-o', 'json']);
      expect(chosen.code, chosen.err).to.equal(0);
      const noPod = await cli(['health', '--namespace', 'gpu-capacity-2']);
      expect(noPod.code).to.equal(2);
      expect(noPod.err).to.equal('Error: No ready pod behind service gpu-capacity-2/gpucap-gpu-capacity-api (0 pod(s): kubectl get pods -n gpu-capacity-2 -l app.kubernetes.io/instance=gpucap,app.kubernetes.io/name=gpu-capacity-api)\n');
    } finally {
      await admin.deleteNamespace('gpu-capacity-2');
    }
  });

  it('reports what the kubelet said when the forward itself fails (exit 2)', async () => {
    await admin.createNamespace('gpu-capacity-3');
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity-3/services', service('gpu-capacity-3'));
    await admin.call('POST', '/api/v1/namespaces/gpu-capacity-3/pods', pod('gpu-capacity-3', 'gpucap-0'));
    await markReady('gpu-capacity-3', 'gpucap-0', true);
    try {
      // No route: the stand-in kubelet answers as a kubelet whose pod does not listen on the port.
      const failed = await cli(['workloads', '--namespace', 'gpu-capacity-3']);
      expect(failed.code).to.equal(2);
      expect(failed.err).to.match(/^Cannot reach the service at http:\/\/127\.0\.0\.1:\d+: .+\n {2}port-forward: error forwarding port 8080 to pod gpucap-0: no such port\n$/);
    } finally {
      await admin.deleteNamespace('gpu-capacity-3');
    }
  });

  it('runs as the one-file build, copied away from the repository, with the kubeconfig of $KUBECONFIG', async () => {
    // npm run build:kubectl-plugin, then the file alone: nothing but Node beside it.
    await promisify(execFile)(process.execPath, ['scripts/build-kubectl-plugin.mjs'], { cwd: REPO });
    const plugin = join(temp.path, 'bin', 'kubectl-gpucap');
    mkdirSync(dirname(plugin), { recursive: true });
    copyFileSync(join(REPO, 'dist', 'kubectl-gpucap.cjs'), plugin);
    chmodSync(plugin, 0o755);
    // Also in place, as npm's bin link (package.json "bin") runs it.
    for (const executable of [plugin, join(REPO, 'dist', 'kubectl-gpucap.cjs')]) {
      const { stdout } = await promisify(execFile)(executable, ['workloads', '--namespace', 'gpu-capacity'], {
        cwd: temp.path,
        env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: temp.path, KUBECONFIG: envtest?.adminKubeconfig, GPUCAP_TOKEN: t?.callers.admin.token, GPUCAP_ORG: 'acme' },
      });
      expect(stdout.split('\n')[1], executable).to.match(/^forwarded-job\s+completed\s+llm\s/);
    }
  });
});
