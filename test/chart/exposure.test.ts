// What of the service the chart exposes, and to whom, rendered by the real helm: the API Service with the
// API port alone (public or not), the admin port behind a ClusterIP Service of its own, the default
// NetworkPolicy's two ingress rules, and the RBAC behind /metrics with adminAuth=kubernetes (the
// service's system:auth-delegator binding, the metrics-reader ClusterRole and its subjects, the
// monitors' tokens). The NetworkPolicy is checked as rendered only: no test cluster here enforces one.
// Skips when helm cannot be had (see helm.ts).
import { expect } from 'chai';
import type { V1ClusterRole, V1ClusterRoleBinding, V1NetworkPolicy, V1Secret, V1Service } from '@kubernetes/client-node';
import { CHART_DIR, NAMESPACE, RELEASE, envValue, find, helm, helmOrSkip, only, template, type RenderedObject } from './helm.js';

const FULLNAME = `${RELEASE}-gpu-capacity-api`;
const SELECTOR = { 'app.kubernetes.io/name': 'gpu-capacity-api', 'app.kubernetes.io/instance': RELEASE };
const SERVICE_ACCOUNT = { kind: 'ServiceAccount', name: FULLNAME, namespace: NAMESPACE };
const KUBE_PROMETHEUS_STACK = { kind: 'ServiceAccount', name: 'prometheus-kube-prometheus-prometheus', namespace: 'monitoring' };
const SCRAPER = { kind: 'ServiceAccount', name: `${FULLNAME}-metrics-scraper`, namespace: NAMESPACE };
const POD_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

function as<T>(object: RenderedObject): T {
  return object as unknown as T;
}

function maybeNamed(objects: RenderedObject[], kind: string, name: string): RenderedObject | undefined {
  return objects.find((object) => object.kind === kind && object.metadata.name === name);
}

function named(objects: RenderedObject[], kind: string, name: string): RenderedObject {
  const found = maybeNamed(objects, kind, name);
  if (found === undefined) throw new Error(`no ${kind}/${name} rendered; rendered: ${objects.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')}`);
  return found;
}

function service(objects: RenderedObject[], name: string): V1Service {
  return as<V1Service>(named(objects, 'Service', name));
}

describe('Helm chart: what is exposed, and who may read /metrics', function () {
  this.timeout(60_000);
  let helmBin: string;
  let defaults: RenderedObject[];

  before(async function () {
    helmBin = await helmOrSkip(this);
    defaults = await template(helmBin);
  });

  async function refused(args: string[]): Promise<string> {
    const result = await helm(helmBin, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...args]);
    expect(result.code, `helm template ${args.join(' ')} should fail`).not.to.equal(0);
    return result.stderr;
  }

  describe('Services', () => {
    it('the API Service carries the API port only, whatever its type', async () => {
      const apiPort = [{ name: 'api', port: 8080, targetPort: 'api', protocol: 'TCP' }];
      expect(service(defaults, FULLNAME).spec?.ports).to.deep.equal(apiPort);
      for (const type of ['LoadBalancer', 'NodePort']) {
        const objects = await template(helmBin, ['--set', `service.type=${type}`]);
        expect(service(objects, FULLNAME).spec?.type, type).to.equal(type);
        expect(service(objects, FULLNAME).spec?.ports, type).to.deep.equal(apiPort);
        expect(service(objects, `${FULLNAME}-admin`).spec?.type, `admin Service beside a ${type}`).to.equal('ClusterIP');
      }
    });

    it('the admin port has a ClusterIP Service of its own, `<fullname>-admin`, one port named metrics', () => {
      const admin = service(defaults, `${FULLNAME}-admin`);
      expect(admin.metadata?.labels).to.include({ ...SELECTOR, 'app.kubernetes.io/component': 'admin' });
      expect(admin.spec?.type).to.equal('ClusterIP');
      expect(admin.spec?.selector).to.deep.equal(SELECTOR);
      expect(admin.spec?.ports).to.deep.equal([{ name: 'metrics', port: 9090, targetPort: 'admin', protocol: 'TCP' }]);
    });

    it('adminService.enabled=false: no Service reaches the admin port; adminService.port moves it', async () => {
      const off = await template(helmBin, ['--set', 'adminService.enabled=false']);
      expect(find(off, 'Service').map((object) => object.metadata.name)).to.deep.equal([FULLNAME]);
      const moved = await template(helmBin, ['--set', 'adminService.port=19090']);
      expect(service(moved, `${FULLNAME}-admin`).spec?.ports?.[0]).to.include({ name: 'metrics', port: 19090, targetPort: 'admin' });
    });

    it('refuses service.adminPort, which moved to adminService.port (values.schema.json)', async () => {
      expect(await refused(['--set', 'service.adminPort=9090'])).to.include("additional properties 'adminPort' not allowed");
    });
  });

  describe('NetworkPolicy', () => {
    it('is rendered by default with two ingress rules: the API from every namespace, the admin port from the release namespace and monitoring', () => {
      const policy = as<V1NetworkPolicy>(only(defaults, 'NetworkPolicy'));
      expect(policy.spec?.podSelector).to.deep.equal({ matchLabels: SELECTOR });
      expect(policy.spec?.policyTypes, 'egress is left open').to.deep.equal(['Ingress']);
      expect(policy.spec?.egress).to.equal(undefined);
      expect(policy.spec?.ingress).to.deep.equal([
        { ports: [{ port: 'api', protocol: 'TCP' }], from: [{ namespaceSelector: {} }] },
        {
          ports: [{ port: 'admin', protocol: 'TCP' }],
          from: [{ podSelector: {} }, { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['monitoring'] }] } }],
        },
      ]);
    });

    it('apiFrom=[]: the API from any source; metricsNamespaces=[]: the admin port from the release namespace alone; enabled=false: none', async () => {
      const open = as<V1NetworkPolicy>(only(await template(helmBin, ['--set-json', 'networkPolicy.apiFrom=[]', '--set-json', 'networkPolicy.apiExtraFrom=[{"ipBlock":{"cidr":"203.0.113.0/24"}}]', '--set-json', 'networkPolicy.metricsNamespaces=[]']), 'NetworkPolicy'));
      expect(open.spec?.ingress).to.deep.equal([
        { ports: [{ port: 'api', protocol: 'TCP' }] },
        { ports: [{ port: 'admin', protocol: 'TCP' }], from: [{ podSelector: {} }] },
      ]);
      expect(find(await template(helmBin, ['--set', 'networkPolicy.enabled=false']), 'NetworkPolicy')).to.deep.equal([]);
    });

    it('restrictEgress=true adds the egress rules', async () => {
      const policy = as<V1NetworkPolicy>(only(await template(helmBin, ['--set', 'networkPolicy.restrictEgress=true']), 'NetworkPolicy'));
      expect(policy.spec?.policyTypes).to.deep.equal(['Ingress', 'Egress']);
      expect(policy.spec?.egress?.map((rule) => rule.ports?.map((port) => port.port))).to.deep.equal([[443, 6443], [53, 53], [9400]]);
    });
  });

  describe('/metrics behind TokenReview and SubjectAccessReview (adminAuth)', () => {
    it('sets GPUCAP_ADMIN_AUTH=kubernetes and binds the service\'s ServiceAccount to system:auth-delegator', () => {
      expect(envValue(defaults, 'GPUCAP_ADMIN_AUTH')).to.equal('kubernetes');
      const binding = as<V1ClusterRoleBinding>(named(defaults, 'ClusterRoleBinding', `${FULLNAME}-auth-delegator`));
      expect(binding.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' });
      expect(binding.subjects).to.deep.equal([SERVICE_ACCOUNT]);
    });

    it('adminAuth=none: GPUCAP_ADMIN_AUTH=none and no auth-delegator binding; rbac.create=false: no binding either', async () => {
      const none = await template(helmBin, ['--set', 'adminAuth=none']);
      expect(envValue(none, 'GPUCAP_ADMIN_AUTH')).to.equal('none');
      expect(maybeNamed(none, 'ClusterRoleBinding', `${FULLNAME}-auth-delegator`)).to.equal(undefined);
      const noRbac = await template(helmBin, ['--set', 'rbac.create=false']);
      expect(maybeNamed(noRbac, 'ClusterRoleBinding', `${FULLNAME}-auth-delegator`)).to.equal(undefined);
      expect(await refused(['--set', 'adminAuth=open'])).to.include('/adminAuth');
    });

    it('the metrics-reader ClusterRole holds exactly `get` on the non-resource URL /metrics, bound to kube-prometheus-stack\'s Prometheus by default', () => {
      const role = as<V1ClusterRole>(named(defaults, 'ClusterRole', `${FULLNAME}-metrics-reader`));
      expect(role.rules).to.deep.equal([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
      const binding = as<V1ClusterRoleBinding>(named(defaults, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`));
      expect(binding.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${FULLNAME}-metrics-reader` });
      expect(binding.subjects).to.deep.equal([KUBE_PROMETHEUS_STACK]);
    });

    it('metricsReader.subjects names whom to bind; [] binds no one; create=false renders neither object', async () => {
      const group = { kind: 'Group', name: 'sre-oncall', apiGroup: 'rbac.authorization.k8s.io' };
      const custom = await template(helmBin, ['--set-json', `metricsReader.subjects=${JSON.stringify([group])}`]);
      expect(as<V1ClusterRoleBinding>(named(custom, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`)).subjects).to.deep.equal([group]);
      const nobody = await template(helmBin, ['--set-json', 'metricsReader.subjects=[]']);
      expect(maybeNamed(nobody, 'ClusterRole', `${FULLNAME}-metrics-reader`)).not.to.equal(undefined);
      expect(maybeNamed(nobody, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`)).to.equal(undefined);
      const off = await template(helmBin, ['--set', 'metricsReader.create=false']);
      expect([...find(off, 'ClusterRole'), ...find(off, 'ClusterRoleBinding')].map((object) => object.metadata.name)).not.to.include(`${FULLNAME}-metrics-reader`);
      expect(await refused(['--set-json', 'metricsReader.subjects=[{"kind":"ServiceAccount","name":"prometheus"}]'])).to.include('namespace');
    });
  });

  describe('Prometheus Operator monitors', () => {
    it('the ServiceMonitor sends the Prometheus pod\'s ServiceAccount token file and selects the admin Service, not the API Service', async () => {
      const objects = await template(helmBin, ['--set', 'serviceMonitor.enabled=true']);
      const monitor = only(objects, 'ServiceMonitor').spec as { selector: { matchLabels: Record<string, string> }; endpoints: Array<Record<string, unknown>> };
      expect(monitor.endpoints).to.have.length(1);
      expect(monitor.endpoints[0]).to.include({ port: 'metrics', path: '/metrics', bearerTokenFile: POD_TOKEN_FILE });
      expect(monitor.endpoints[0]).not.to.have.property('authorization');
      const selects = (object: V1Service) => Object.entries(monitor.selector.matchLabels).every(([key, value]) => object.metadata?.labels?.[key] === value);
      expect(find(objects, 'Service').filter((object) => selects(as<V1Service>(object))).map((object) => object.metadata.name)).to.deep.equal([`${FULLNAME}-admin`]);
      expect(find(objects, 'ServiceAccount').map((object) => object.metadata.name), 'no scraper ServiceAccount with a token file').to.deep.equal([FULLNAME]);
    });

    it('a PodMonitor, or a ServiceMonitor without a token file, sends the token Secret of a metrics-scraper ServiceAccount the chart binds to metrics-reader', async () => {
      const objects = await template(helmBin, ['--set', 'podMonitor.enabled=true', '--set', 'serviceMonitor.enabled=true', '--set', 'serviceMonitor.bearerTokenFile=']);
      const credentials = { type: 'Bearer', credentials: { name: `${FULLNAME}-metrics-scraper-token`, key: 'token' } };
      expect((only(objects, 'ServiceMonitor').spec as { endpoints: Array<Record<string, unknown>> }).endpoints[0]?.authorization).to.deep.equal(credentials);
      expect((only(objects, 'PodMonitor').spec as { podMetricsEndpoints: Array<Record<string, unknown>> }).podMetricsEndpoints[0]?.authorization).to.deep.equal(credentials);
      const scraper = named(objects, 'ServiceAccount', SCRAPER.name);
      expect(scraper.automountServiceAccountToken).to.equal(false);
      const secret = as<V1Secret>(named(objects, 'Secret', `${FULLNAME}-metrics-scraper-token`));
      expect(secret.type).to.equal('kubernetes.io/service-account-token');
      expect(secret.metadata?.annotations).to.deep.equal({ 'kubernetes.io/service-account.name': SCRAPER.name });
      expect(as<V1ClusterRoleBinding>(named(objects, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`)).subjects).to.deep.equal([KUBE_PROMETHEUS_STACK, SCRAPER]);
      const bindings = [...find(objects, 'ClusterRoleBinding'), ...find(objects, 'RoleBinding')].filter((binding) => JSON.stringify(binding.subjects).includes(SCRAPER.name));
      expect(bindings.map((binding) => binding.metadata.name), 'the scraper may read /metrics and nothing else').to.deep.equal([`${FULLNAME}-metrics-reader`]);
    });

    it('metricsScraper.existingSecret: the monitors send that Secret\'s token and the chart creates no scraper', async () => {
      const objects = await template(helmBin, ['--set', 'podMonitor.enabled=true', '--set', 'metricsScraper.existingSecret=prometheus-scrape-token', '--set', 'metricsScraper.existingSecretKey=bearer']);
      expect((only(objects, 'PodMonitor').spec as { podMetricsEndpoints: Array<Record<string, unknown>> }).podMetricsEndpoints[0]?.authorization).to.deep.equal({ type: 'Bearer', credentials: { name: 'prometheus-scrape-token', key: 'bearer' } });
      expect(maybeNamed(objects, 'ServiceAccount', SCRAPER.name)).to.equal(undefined);
      expect(maybeNamed(objects, 'Secret', `${FULLNAME}-metrics-scraper-token`)).to.equal(undefined);
      expect(as<V1ClusterRoleBinding>(named(objects, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`)).subjects).to.deep.equal([KUBE_PROMETHEUS_STACK]);
    });

    it('refuses a ServiceMonitor without the admin Service, and a scraper token nothing would allow', async () => {
      expect(await refused(['--set', 'serviceMonitor.enabled=true', '--set', 'adminService.enabled=false'])).to.include('podMonitor.enabled=true instead');
      expect(await refused(['--set', 'podMonitor.enabled=true', '--set', 'metricsReader.create=false'])).to.include('metricsScraper.existingSecret');
      await template(helmBin, ['--set', 'podMonitor.enabled=true', '--set', 'metricsReader.create=false', '--set', 'metricsScraper.existingSecret=prometheus-scrape-token']);
    });
  });
});
