// The chart's objects against a real kube-apiserver (envtest v1.20): every object of the default render,
// and of each ci/*-values.yaml, is created with server-side dry run (`?dryRun=All`), so the API
// server's validation and admission run but nothing is stored. A kind the server does not serve (the
// Prometheus Operator's ServiceMonitor, PodMonitor and PrometheusRule CRDs) is skipped and named; the PodDisruptionBudget, policy/v1 from 1.21, is sent as
// policy/v1beta1 (what the chart renders for a 1.20 cluster, through .Capabilities).
import { expect } from 'chai';
import { join } from 'node:path';
import { AdminClient } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { CI_VALUES_DIR, NAMESPACE, ciValuesFiles, helmOrSkip, template, type RenderedObject } from './helm.js';

/** Resource (plural) of each kind the chart renders. */
const RESOURCES: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  Secret: 'secrets',
  Service: 'services',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Deployment: 'deployments',
  NetworkPolicy: 'networkpolicies',
  PodDisruptionBudget: 'poddisruptionbudgets',
  ServiceMonitor: 'servicemonitors',
  PodMonitor: 'podmonitors',
  PrometheusRule: 'prometheusrules',
  ConfigMap: 'configmaps',
};
/** The Prometheus Operator's kinds, which envtest does not serve (no CRDs). */
const OPERATOR_KINDS = ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'];
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding']);

function groupVersionPath(apiVersion: string): string {
  return apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`;
}

function collectionPath(object: RenderedObject): string {
  const resource = RESOURCES[object.kind];
  if (resource === undefined) throw new Error(`the test does not know the resource of kind ${object.kind}: add it to RESOURCES`);
  const base = groupVersionPath(object.apiVersion);
  return CLUSTER_SCOPED.has(object.kind) ? `${base}/${resource}` : `${base}/namespaces/${object.metadata.namespace ?? NAMESPACE}/${resource}`;
}

describe('Helm chart objects: server-side dry run against a real kube-apiserver (envtest v1.20)', function () {
  this.timeout(120_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let helmBin: string;
  const served = new Map<string, boolean>();

  before(async function () {
    this.timeout(150_000);
    helmBin = await helmOrSkip(this);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    await admin.createNamespace(NAMESPACE);
    // ci/grafana-dashboard-values.yaml puts the dashboard in the Grafana sidecar's namespace.
    await admin.createNamespace('monitoring');
  });
  after(async () => {
    await envtest?.stop();
  });

  async function isServed(object: RenderedObject): Promise<boolean> {
    const key = `${object.apiVersion}/${object.kind}`;
    let known = served.get(key);
    if (known === undefined) {
      const response = await admin.send('GET', groupVersionPath(object.apiVersion));
      const resources = (response.body as { resources?: { kind: string }[] } | undefined)?.resources ?? [];
      known = response.status === 200 && resources.some((resource) => resource.kind === object.kind);
      served.set(key, known);
    }
    return known;
  }

  /** Dry-run creates every served object; returns the kinds skipped because the server lacks them. */
  async function dryRunAll(objects: RenderedObject[]): Promise<string[]> {
    const skipped: string[] = [];
    for (const rendered of objects) {
      let object = rendered;
      if (object.kind === 'PodDisruptionBudget' && !(await isServed(object))) object = { ...object, apiVersion: 'policy/v1beta1' };
      if (!(await isServed(object))) {
        skipped.push(`${object.apiVersion} ${object.kind}`);
        continue;
      }
      const path = `${collectionPath(object)}?dryRun=All`;
      const response = await admin.send('POST', path, object);
      const message = (response.body as { message?: unknown } | undefined)?.message;
      expect(response.status, `${object.kind}/${object.metadata.name}: POST ${path}: ${String(message ?? JSON.stringify(response.body))}`).to.be.within(200, 299);
    }
    return skipped;
  }

  it('accepts every object of the default render, and stores none', async () => {
    const objects = await template(helmBin);
    expect(await dryRunAll(objects), 'kinds skipped').to.deep.equal([]);
    const deployments = await admin.list(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments`);
    expect(deployments, 'a dry run stores nothing').to.deep.equal([]);
  });

  for (const file of ciValuesFiles()) {
    it(`accepts every object of ci/${file} the server serves`, async () => {
      const skipped = await dryRunAll(await template(helmBin, ['-f', join(CI_VALUES_DIR, file)]));
      if (skipped.length > 0) console.log(`      (not served by this API server, skipped: ${skipped.join(', ')})`);
      expect(skipped.every((kind) => OPERATOR_KINDS.some((operatorKind) => kind.endsWith(` ${operatorKind}`))), skipped.join(', ')).to.equal(true);
    });
  }

  it('really validates: a Deployment with a negative replica count is refused (422)', async () => {
    const deployment = (await template(helmBin)).find((object) => object.kind === 'Deployment');
    if (deployment === undefined) throw new Error('no Deployment rendered');
    const spec = deployment.spec as Record<string, unknown>;
    const response = await admin.send('POST', `${collectionPath(deployment)}?dryRun=All`, { ...deployment, spec: { ...spec, replicas: -1 } });
    expect(response.status).to.equal(422);
  });
});
