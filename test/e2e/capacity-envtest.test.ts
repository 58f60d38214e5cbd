// Capacity budgets from ConfigMaps against a real kube-apiserver (envtest, v1.20), read as the
// restricted user gpucap-reader: the chart's namespaced Role grants the ConfigMap reflector exactly
// LIST and WATCH in the service's own namespace, and the whole service follows a labelled ConfigMap
// that an operator creates, replaces, breaks, fixes and deletes, ignoring unlabelled ones.
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { parseMetrics, sumOf } from '../../bench/lib/service/metrics-text.js';
import { AdminClient, sendJson } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { CAPACITY_KEY, capacityConfigMap } from '../support/envtest/objects.js';
import { ReflectorSet } from '../support/envtest/reflectors.js';
import { waitFor } from '../support/wait-for.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { capacityYaml } from '../support/capacity-yaml.js';

/** The service's own namespace (GPUCAP_NAMESPACE), where the chart's Role applies. */
const NAMESPACE = 'gpucap-system';
const OTHER = 'team-other';
const SELECTOR = 'gpucap.io/capacity=true';
const CONFIGMAPS = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const CAPACITY = 'capacity-acme';
/** `gpucap_capacity_configmap_rejected` labels a ConfigMap `namespace/name`. */
const CAPACITY_KEYED = `${NAMESPACE}/${CAPACITY}`;
/**
 * As the envtest reflector tests: quick retries, and a stall timeout well past the file's lifetime (a
 * quiet v1.20 watch gets no bookmark, and re-watching every few seconds would only add noise).
 */
const INFORMERS = { tuning: { backoff: { baseMs: 100, maxMs: 1000 }, stallTimeoutMs: 120_000 }, dependencyWaitMs: 2_000 };

describe('Capacity ConfigMaps against a real kube-apiserver (envtest v1.20), read as gpucap-reader', function () {
  this.timeout(60_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  let reader: KubeConfig;
  const reflectors = new ReflectorSet();

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
    reader = new KubeConfig();
    reader.loadFromFile(envtest.readerKubeconfig);
    await admin.createNamespace(NAMESPACE);
    await admin.createNamespace(OTHER);
    // A labelled ConfigMap in another namespace: the Role must not reach it, nor may the service read it.
    await admin.createConfigMap(OTHER, capacityConfigMap('capacity-elsewhere', capacityYaml({ allocated: 5 })));
    await admin.createConfigMap(NAMESPACE, capacityConfigMap('rbac-probe', capacityYaml(), { labels: { 'gpucap.io/capacity': 'false' } }));
  });
  after(async () => {
    await reflectors.stopAll();
    await envtest?.stop();
  });

  function readerKubeconfig(): string {
    if (envtest === undefined) throw new Error('envtest is not running');
    return envtest.readerKubeconfig;
  }

  describe('the chart Role (role-rules.yaml)', () => {
    afterEach(async () => {
      await reflectors.stopAll();
    });

    it('is what the ConfigMap reflector needs: LIST and WATCH are refused with 403 before it is bound, and sync once it is', async () => {
      expect((await sendJson(reader, 'GET', `${CONFIGMAPS}?labelSelector=${encodeURIComponent(SELECTOR)}`)).status, 'LIST before the Role').to.equal(403);
      expect((await sendJson(reader, 'GET', `${CONFIGMAPS}?watch=true&timeoutSeconds=1`)).status, 'WATCH before the Role').to.equal(403);
      const { reflector, objects } = reflectors.start(readerKubeconfig(), CONFIGMAPS, { labelSelector: SELECTOR });
      const error = await waitFor(() => reflector.status().lastError, { timeoutMs: 10_000, what: `a failed LIST of ${CONFIGMAPS} as gpucap-reader` });
      expect(error).to.include({ code: 'KUBE_HTTP_STATUS', statusCode: 403 });
      expect(error.message).to.include('User "gpucap-reader" cannot list resource "configmaps"');
      expect(reflector.synced).to.equal(false);

      await admin.bindChartRoleToReader(NAMESPACE);

      await waitFor(() => reflector.synced && reflector.status().watchAgeMs !== undefined, { timeoutMs: 20_000, what: 'the ConfigMap reflector to sync and open its watch' });
      expect(objects.events[0]?.type).to.equal('SYNC');
      expect(Object.keys(objects.snapshot()), 'only the labelled ConfigMaps of the namespace (none yet)').to.deep.equal([]);
      const listed = await sendJson(reader, 'GET', CONFIGMAPS);
      expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
      const rv = (listed.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      expect((await sendJson(reader, 'GET', `${CONFIGMAPS}?watch=true&timeoutSeconds=1&resourceVersion=${rv}`)).status, 'WATCH').to.equal(200);
    });

    it('grants nothing else: one ConfigMap by name, ConfigMaps of another namespace or cluster-wide, Secrets, and any write are refused with 403', async () => {
      // Idempotent: binding again keeps the Role and RoleBinding the first test made.
      await admin.bindChartRoleToReader(NAMESPACE);
      await waitFor(async () => (await sendJson(reader, 'GET', CONFIGMAPS)).status === 200, { timeoutMs: 10_000, what: 'the reader to list ConfigMaps of its namespace' });

      const refused: [string, string, unknown?][] = [
        ['GET', `${CONFIGMAPS}/rbac-probe`],
        ['GET', `/api/v1/namespaces/${OTHER}/configmaps`],
        ['GET', `/api/v1/namespaces/${OTHER}/configmaps?watch=true&timeoutSeconds=1`],
        ['GET', '/api/v1/configmaps'],
        ['GET', `/api/v1/namespaces/${NAMESPACE}/secrets`],
        ['POST', CONFIGMAPS, capacityConfigMap('by-reader', capacityYaml())],
        ['PUT', `${CONFIGMAPS}/rbac-probe`, capacityConfigMap('rbac-probe', capacityYaml({ allocated: 1 }))],
        ['DELETE', `${CONFIGMAPS}/rbac-probe`],
      ];
      for (const [method, path, body] of refused) {
        expect((await sendJson(reader, method, path, body)).status, `${method} ${path}`).to.equal(403);
      }
      expect((await admin.list(CONFIGMAPS)).map((c) => c.metadata.name), 'nothing the reader tried changed a ConfigMap').to.deep.equal(['rbac-probe']);
    });
  });

  describe('the service, watching as gpucap-reader with the chart ClusterRole and Role', () => {
    let t: TestService | undefined;

    before(async function () {
      this.timeout(60_000);
      await admin.bindChartRulesToReader();
      await admin.bindChartRoleToReader(NAMESPACE);
      // Unlabelled, and named to sort before the labelled one: were they read, the broken one would be
      // rejected and the valid one would hold acme's budget, leaving the labelled one as the conflict.
      await admin.createConfigMap(NAMESPACE, capacityConfigMap('a-notes', 'not: yaml: of: ours', { labels: {} }));
      await admin.createConfigMap(NAMESPACE, capacityConfigMap('a-draft', capacityYaml({ allocated: 7 }), { labels: { team: 'finance' } }));
      t = await startTestService({
        clock: 'system',
        informers: INFORMERS,
        env: {
          GPUCAP_HOME_CLUSTER_ENABLED: 'true',
          GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
          GPUCAP_KUBECONFIG: readerKubeconfig(),
          GPUCAP_NAMESPACE: NAMESPACE,
          GPUCAP_CLUSTER_ID: 'envtest',
        },
      });
      await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 30_000, what: 'the service\'s /readyz to answer 200 once its informers and ConfigMaps synced' });
    });
    after(async () => {
      await t?.stop();
    });

    function service(): TestService {
      if (t === undefined) throw new Error('The service is not running');
      return t;
    }

    const readyz = () => service().readyz();

    /** GET /v1/capacity as acme's ORG_ADMIN: the `data`. */
    async function capacity(): Promise<JsonBody> {
      const response = await service().get('/v1/capacity');
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      return response.body.data;
    }

    /** Polls GET /v1/capacity until acme's total allocation is `allocated`; returns the data. */
    async function allocationIs(allocated: number, what: string): Promise<JsonBody> {
      return waitFor(async () => {
        const data = await capacity();
        return data.summary.total_allocated_gpu_hours === allocated ? data : undefined;
      }, { timeoutMs: 15_000, what: `GET /v1/capacity to show ${allocated} GPU-hours allocated (${what})` });
    }

    /** `gpucap_capacity_configmap_rejected` summed, for one ConfigMap or (default) all. */
    async function rejected(configmap?: string): Promise<number> {
      const text = await (await fetch(`${service().adminUrl}/metrics`)).text();
      return sumOf(parseMetrics(text), 'gpucap_capacity_configmap_rejected', configmap === undefined ? {} : { configmap });
    }

    /** The budgets' entry of /v1/health's checks (the overall status stays healthy: the index answers). */
    async function health(): Promise<string> {
      const data = (await service().get('/v1/health', { as: null })).body.data;
      expect(data.status).to.equal('healthy');
      return data.checks.find((c: { name: string }) => c.name === 'budgets').status;
    }

    it('answers allocated 0 while only unlabelled ConfigMaps exist, then the budget of a labelled one created while it runs', async () => {
      expect((await capacity()).summary.total_allocated_gpu_hours, 'before any labelled ConfigMap').to.equal(0);
      await admin.createConfigMap(NAMESPACE, capacityConfigMap(CAPACITY, capacityYaml()));

      const data = await allocationIs(1000, 'the created ConfigMap');
      expect(data.pools).to.have.length(1);
      expect(data.pools[0]).to.include({ pool_id: 'h100', name: 'H100 on-demand', allocated_gpu_hours: 600 });
      expect(data.initiatives[0]).to.include({ initiative_id: 'llm', name: 'LLM Research', allocated_gpu_hours: 300 });
      expect(await rejected(), 'the unlabelled ConfigMaps are neither rejected nor in conflict').to.equal(0);
      const ready = await readyz();
      // Counted, not named: /readyz is open (the names are on /metrics, behind admin_auth).
      expect(ready.body.components.capacity).to.deep.include({ enabled: true, synced: true, organizations: 1, problems: 0 });
      expect(ready.body.conditions.capacity).to.deep.include({ ready: true, failure: null });
    });

    it('follows a replace (PUT) of the ConfigMap', async () => {
      await admin.replaceConfigMap(NAMESPACE, capacityConfigMap(CAPACITY, capacityYaml({ allocated: 2000, llm: 500 })));
      const data = await allocationIs(2000, 'the replaced ConfigMap');
      expect(data.initiatives[0]).to.include({ initiative_id: 'llm', allocated_gpu_hours: 500 });
    });

    it('keeps the last valid budget when a PATCH breaks it, reports it in the metric, /readyz and /v1/health, and applies the fix', async () => {
      await admin.patchConfigMapData(NAMESPACE, CAPACITY, { [CAPACITY_KEY]: 'organization_id: acme\nperiod: fortnight\nallocated_gpu_hours: 5\n' });
      await waitFor(async () => (await rejected(CAPACITY_KEYED)) === 1, { timeoutMs: 15_000, what: `gpucap_capacity_configmap_rejected{configmap="${CAPACITY_KEYED}"} to be 1` });
      const kept = await capacity();
      expect(kept.summary.total_allocated_gpu_hours, 'the last valid version stays in force').to.equal(2000);
      expect(kept.initiatives[0]).to.include({ allocated_gpu_hours: 500 });
      // Readiness follows within its refresh period.
      const degraded = await waitFor(async () => {
        const found = await readyz();
        return found.body.degraded === true ? found : undefined;
      }, { timeoutMs: 5_000, what: '/readyz to report degraded' });
      expect(degraded.status, 'still ready: a budget is in force').to.equal(200);
      expect(degraded.body.conditions.capacity).to.deep.include({ failure: '1 capacity ConfigMap(s) rejected' });
      expect(degraded.body.components.capacity).to.deep.include({ organizations: 1, problems: 1 });
      expect(JSON.stringify(degraded.body), '/readyz names no ConfigMap of an organization').to.not.include(CAPACITY);
      expect(await health()).to.equal('degraded');

      await admin.patchConfigMapData(NAMESPACE, CAPACITY, { [CAPACITY_KEY]: capacityYaml({ allocated: 3000 }) });
      await allocationIs(3000, 'the fixed ConfigMap');
      expect(await rejected()).to.equal(0);
      await waitFor(async () => (await readyz()).body.degraded === false, { timeoutMs: 5_000, what: '/readyz to stop reporting degraded' });
      expect(await health()).to.equal('ok');
    });

    it('drops the budget when the ConfigMap is deleted: allocated 0, no pools, no rejection', async () => {
      await admin.deleteConfigMap(NAMESPACE, CAPACITY);
      const data = await allocationIs(0, 'the deleted ConfigMap');
      expect(data.pools).to.deep.equal([]);
      expect(await rejected()).to.equal(0);
      expect((await readyz()).body.components.capacity).to.deep.include({ organizations: 0, problems: 0 });
    });
  });
});
