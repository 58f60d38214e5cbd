// The Helm chart, rendered by the real helm: lint, the objects of the default values and of each
// ci/*-values.yaml, the RBAC rules taken from files/*.yaml, and the values the schema or the templates
// refuse. Skips when helm cannot be had (see helm.ts).
import { expect } from 'chai';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { V1ClusterRoleBinding, V1Deployment, V1NetworkPolicy, V1PersistentVolumeClaim, V1PodDisruptionBudget, V1Role, V1Secret, V1Service } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { ConfigSchema } from '../../src/config/schema.js';
import { CHART_DIR, CI_VALUES_DIR, NAMESPACE, RELEASE, ciValuesFiles, container, env, envValue, find, helm, helmOrSkip, only, readChartFile, template, type RenderedObject } from './helm.js';

const FULLNAME = `${RELEASE}-gpu-capacity-api`;
const SELECTOR = { 'app.kubernetes.io/name': 'gpu-capacity-api', 'app.kubernetes.io/instance': RELEASE };
/** Settings the chart sets itself, so `config` may not. */
const CHART_SET_KEYS = ['listen', 'admin_listen', 'admin_auth', 'db_path', 'db_url', 'db_read_url', 'db_pool_size', 'instance_id', 'namespace', 'api_tokens_file', 'remote_kubeconfig_dir', 'remote_clusters', 'jwks_url', 'jwt_issuer', 'jwt_audience'];

function as<T>(object: RenderedObject): T {
  return object as unknown as T;
}

function named(objects: RenderedObject[], kind: string, name: string): RenderedObject {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind}/${name} rendered`);
  return found;
}

describe('Helm chart charts/gpu-capacity-api', function () {
  this.timeout(60_000);
  let helmBin: string;
  let defaults: RenderedObject[];

  before(async function () {
    helmBin = await helmOrSkip(this);
    defaults = await template(helmBin);
  });

  describe('helm lint', () => {
    it('passes with the default values', async () => {
      const result = await helm(helmBin, ['lint', CHART_DIR, '--strict']);
      expect(result.code, result.stdout + result.stderr).to.equal(0);
    });

    it('passes with each ci/*-values.yaml', async () => {
      const files = ciValuesFiles();
      expect(files).to.include.members(['servicemonitor-values.yaml', 'podmonitor-values.yaml', 'networkpolicy-values.yaml', 'pdb-values.yaml', 'emptydir-values.yaml', 'remote-clusters-values.yaml', 'jwt-values.yaml', 'postgres-values.yaml']);
      for (const file of files) {
        const result = await helm(helmBin, ['lint', CHART_DIR, '--strict', '-f', join(CI_VALUES_DIR, file)]);
        expect(result.code, `${file}: ${result.stdout}${result.stderr}`).to.equal(0);
      }
    });
  });

  describe('default values', () => {
    it('renders exactly the objects of a default install, all in the release namespace but the cluster-scoped ones', () => {
      expect(defaults.map((object) => `${object.kind}/${object.metadata.name}`).sort()).to.deep.equal(
        [
          `ClusterRole/${FULLNAME}`,
          `ClusterRole/${FULLNAME}-metrics-reader`,
          `ClusterRoleBinding/${FULLNAME}`,
          `ClusterRoleBinding/${FULLNAME}-auth-delegator`,
          `ClusterRoleBinding/${FULLNAME}-metrics-reader`,
          `Deployment/${FULLNAME}`,
          `NetworkPolicy/${FULLNAME}`,
          `PersistentVolumeClaim/${FULLNAME}-index`,
          `Role/${FULLNAME}`,
          `RoleBinding/${FULLNAME}`,
          `Secret/${FULLNAME}-api-tokens`,
          `Service/${FULLNAME}`,
          `Service/${FULLNAME}-admin`,
          `ServiceAccount/${FULLNAME}`,
        ].sort(),
      );
      for (const object of defaults) {
        if (object.kind.startsWith('Cluster')) expect(object.metadata.namespace, object.kind).to.equal(undefined);
        else expect(object.metadata.namespace, object.kind).to.equal(NAMESPACE);
      }
    });

    it('labels every object with the app.kubernetes.io labels, and selects by name and instance only', () => {
      for (const object of defaults) {
        expect(object.metadata.labels, object.kind).to.include({ ...SELECTOR, 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/version': '0.1.0', 'helm.sh/chart': 'gpu-capacity-api-0.1.0' });
      }
      const deployment = as<V1Deployment>(only(defaults, 'Deployment'));
      expect(deployment.spec?.selector.matchLabels).to.deep.equal(SELECTOR);
      expect(deployment.spec?.template.metadata?.labels).to.include(SELECTOR);
      for (const service of find(defaults, 'Service')) expect(as<V1Service>(service).spec?.selector, service.metadata.name).to.deep.equal(SELECTOR);
    });

    it('never puts helm.sh/chart or the version in a selector, whatever the values', async () => {
      for (const file of [undefined, ...ciValuesFiles()]) {
        const objects = file === undefined ? defaults : await template(helmBin, ['-f', join(CI_VALUES_DIR, file)]);
        const text = JSON.stringify(objects.map((object) => [(object.spec as { selector?: unknown } | undefined)?.selector, (object.spec as { podSelector?: unknown } | undefined)?.podSelector]));
        expect(text, file).not.to.include('helm.sh/chart');
        expect(text, file).not.to.include('app.kubernetes.io/version');
      }
    });

    it('ships the ClusterRole and Role rules of files/*.yaml, bound to the ServiceAccount', () => {
      expect(named(defaults, 'ClusterRole', FULLNAME).rules).to.deep.equal(readChartFile('files/clusterrole-rules.yaml'));
      expect(as<V1Role>(only(defaults, 'Role')).rules).to.deep.equal(readChartFile('files/role-rules.yaml'));
      const subject = { kind: 'ServiceAccount', name: FULLNAME, namespace: NAMESPACE };
      const clusterBinding = as<V1ClusterRoleBinding>(named(defaults, 'ClusterRoleBinding', FULLNAME));
      expect(clusterBinding.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: FULLNAME });
      expect(clusterBinding.subjects).to.deep.equal([subject]);
      const binding = as<V1ClusterRoleBinding>(only(defaults, 'RoleBinding'));
      expect(binding.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: FULLNAME });
      expect(binding.subjects).to.deep.equal([subject]);
      expect(as<V1Deployment>(only(defaults, 'Deployment')).spec?.template.spec?.serviceAccountName).to.equal(FULLNAME);
    });

    it('runs one replica with the Recreate strategy (one writer of the SQLite index)', () => {
      const spec = as<V1Deployment>(only(defaults, 'Deployment')).spec;
      expect(spec?.replicas).to.equal(1);
      expect(spec?.strategy).to.deep.equal({ type: 'Recreate' });
    });

    it('runs as 65532, non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp', () => {
      const podSpec = as<V1Deployment>(only(defaults, 'Deployment')).spec?.template.spec;
      expect(podSpec?.securityContext).to.include({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
      expect(podSpec?.securityContext?.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
      const securityContext = container(defaults).securityContext;
      expect(securityContext).to.include({ runAsNonRoot: true, runAsUser: 65532, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(securityContext?.capabilities).to.deep.equal({ drop: ['ALL'] });
      expect(securityContext?.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
    });

    it('probes /livez and /readyz on the admin port, with a generous startup probe', () => {
      const main = container(defaults);
      expect(main.ports).to.deep.equal([
        { name: 'api', containerPort: 8080, protocol: 'TCP' },
        { name: 'admin', containerPort: 9090, protocol: 'TCP' },
      ]);
      expect(main.livenessProbe?.httpGet).to.deep.equal({ path: '/livez', port: 'admin' });
      expect(main.readinessProbe?.httpGet).to.deep.equal({ path: '/readyz', port: 'admin' });
      expect(main.startupProbe?.httpGet).to.deep.equal({ path: '/livez', port: 'admin' });
      const startup = main.startupProbe;
      expect((startup?.periodSeconds ?? 10) * (startup?.failureThreshold ?? 3), 'seconds the startup probe allows').to.be.at.least(120);
      expect(main.resources?.requests).to.include.keys('cpu', 'memory');
      expect(main.resources?.limits).to.include.keys('memory');
    });

    it('sets the namespace from the downward API, the index path, the listen addresses and the token file', () => {
      const variables = env(defaults);
      expect(variables.get('GPUCAP_NAMESPACE')).to.deep.equal({ name: 'GPUCAP_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
      expect(envValue(defaults, 'GPUCAP_DB_PATH')).to.equal('/var/lib/gpu-capacity-api/index.db');
      expect(envValue(defaults, 'GPUCAP_LISTEN')).to.equal('0.0.0.0:8080');
      expect(envValue(defaults, 'GPUCAP_ADMIN_LISTEN')).to.equal('0.0.0.0:9090');
      expect(envValue(defaults, 'GPUCAP_ADMIN_AUTH')).to.equal('kubernetes');
      expect(envValue(defaults, 'GPUCAP_API_TOKENS_FILE')).to.equal('/etc/gpu-capacity-api/tokens/tokens.yaml');
      expect([...variables.keys()].filter((name) => name.startsWith('GPUCAP_JWKS') || name.startsWith('GPUCAP_REMOTE'))).to.deep.equal([]);
    });

    it('keeps the index on a 5Gi PVC and mounts the API token Secret (no subPath), holding no records', () => {
      const pvc = as<V1PersistentVolumeClaim>(only(defaults, 'PersistentVolumeClaim'));
      expect(pvc.spec?.resources?.requests).to.deep.equal({ storage: '5Gi' });
      expect(pvc.spec?.accessModes).to.deep.equal(['ReadWriteOnce']);
      expect(pvc.spec?.storageClassName).to.equal(undefined);
      const podSpec = as<V1Deployment>(only(defaults, 'Deployment')).spec?.template.spec;
      expect(podSpec?.volumes).to.deep.equal([
        { name: 'index', persistentVolumeClaim: { claimName: `${FULLNAME}-index` } },
        { name: 'api-tokens', secret: { secretName: `${FULLNAME}-api-tokens` } },
      ]);
      expect(container(defaults).volumeMounts).to.deep.equal([
        { name: 'index', mountPath: '/var/lib/gpu-capacity-api' },
        { name: 'api-tokens', mountPath: '/etc/gpu-capacity-api/tokens', readOnly: true },
      ]);
      const secret = as<V1Secret>(only(defaults, 'Secret'));
      expect(parse(secret.stringData?.['tokens.yaml'] ?? '')).to.deep.equal({ tokens: [] });
    });

    it('allows delay + grace + margin to drain', () => {
      expect(as<V1Deployment>(only(defaults, 'Deployment')).spec?.template.spec?.terminationGracePeriodSeconds).to.be.at.least(5 + 10 + 5);
    });

    it('creates none of the optional objects', () => {
      for (const kind of ['ServiceMonitor', 'PodMonitor', 'PodDisruptionBudget']) expect(find(defaults, kind), kind).to.deep.equal([]);
      expect(find(defaults, 'ServiceAccount').map((account) => account.metadata.name), 'no metrics-scraper ServiceAccount without a monitor').to.deep.equal([FULLNAME]);
    });
  });

  describe('ci/*-values.yaml', () => {
    async function ci(file: string): Promise<RenderedObject[]> {
      return template(helmBin, ['-f', join(CI_VALUES_DIR, file)]);
    }

    it('servicemonitor: a ServiceMonitor on the admin Service\'s /metrics with the Prometheus pod\'s token, its ServiceAccount bound to read it', async () => {
      const objects = await ci('servicemonitor-values.yaml');
      const monitor = only(objects, 'ServiceMonitor');
      expect(monitor.apiVersion).to.equal('monitoring.coreos.com/v1');
      expect(monitor.metadata.labels).to.include({ release: 'kube-prometheus-stack' });
      expect(monitor.spec).to.deep.equal({
        selector: { matchLabels: { ...SELECTOR, 'app.kubernetes.io/component': 'admin' } },
        namespaceSelector: { matchNames: [NAMESPACE] },
        endpoints: [{
          port: 'metrics', path: '/metrics', scheme: 'http', interval: '15s', scrapeTimeout: '10s',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          relabelings: [{ action: 'replace', targetLabel: 'job', replacement: FULLNAME }],
        }],
      });
      expect(as<V1ClusterRoleBinding>(named(objects, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`)).subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'kube-prometheus-stack-prometheus', namespace: 'monitoring' }]);
    });

    it('podmonitor: a PodMonitor on the pods\' admin port with the metrics-scraper\'s token Secret, and no admin Service', async () => {
      const objects = await ci('podmonitor-values.yaml');
      const monitor = only(objects, 'PodMonitor');
      expect(monitor.apiVersion).to.equal('monitoring.coreos.com/v1');
      expect(monitor.spec).to.deep.equal({
        selector: { matchLabels: SELECTOR },
        namespaceSelector: { matchNames: [NAMESPACE] },
        podMetricsEndpoints: [{
          port: 'admin', path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s',
          authorization: { type: 'Bearer', credentials: { name: `${FULLNAME}-metrics-scraper-token`, key: 'token' } },
          relabelings: [{ action: 'replace', targetLabel: 'job', replacement: FULLNAME }],
        }],
      });
      expect(find(objects, 'Service').map((service) => service.metadata.name)).to.deep.equal([FULLNAME]);
    });

    it('networkpolicy: API from the given peers and CIDR, admin from the release namespace, two more and a Prometheus elsewhere, egress to API server, DNS and exporters on 9400', async () => {
      const policy = as<V1NetworkPolicy>(only(await ci('networkpolicy-values.yaml'), 'NetworkPolicy'));
      expect(policy.spec?.podSelector?.matchLabels).to.deep.equal(SELECTOR);
      expect(policy.spec?.policyTypes).to.deep.equal(['Ingress', 'Egress']);
      expect(policy.spec?.ingress).to.deep.equal([
        { ports: [{ port: 'api', protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'grafana' } } }, { ipBlock: { cidr: '203.0.113.0/24' } }] },
        {
          ports: [{ port: 'admin', protocol: 'TCP' }],
          from: [
            { podSelector: {} },
            { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['monitoring', 'observability'] }] } },
            { namespaceSelector: { matchLabels: { team: 'sre' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } },
          ],
        },
      ]);
      expect(policy.spec?.egress).to.deep.equal([
        { ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '10.0.0.1/32' } }] },
        { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }], to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }] },
        { ports: [{ port: 9400, protocol: 'TCP' }], to: [{ namespaceSelector: {} }] },
      ]);
    });

    it('pdb: a PodDisruptionBudget with maxUnavailable 1 that never blocks a drain', async () => {
      const budget = as<V1PodDisruptionBudget>(only(await ci('pdb-values.yaml'), 'PodDisruptionBudget'));
      expect(budget.apiVersion).to.equal('policy/v1');
      expect(budget.spec).to.deep.equal({ maxUnavailable: 1, selector: { matchLabels: SELECTOR } });
    });


    it('emptydir: no PVC, the index in an emptyDir', async () => {
      const objects = await ci('emptydir-values.yaml');
      expect(find(objects, 'PersistentVolumeClaim')).to.deep.equal([]);
      const volumes = as<V1Deployment>(only(objects, 'Deployment')).spec?.template.spec?.volumes ?? [];
      expect(volumes.find((volume) => volume.name === 'index')).to.deep.equal({ name: 'index', emptyDir: { sizeLimit: '2Gi' } });
    });

    it('remote-clusters: the Secret mounted as GPUCAP_REMOTE_KUBECONFIG_DIR, the cluster settings as JSON', async () => {
      const objects = await ci('remote-clusters-values.yaml');
      expect(envValue(objects, 'GPUCAP_REMOTE_KUBECONFIG_DIR')).to.equal('/etc/gpu-capacity-api/remote-clusters');
      expect(JSON.parse(envValue(objects, 'GPUCAP_REMOTE_CLUSTERS') ?? 'null')).to.deep.equal([{ file: 'gpu-west.yaml', cluster_id: 'gpu-west', organization_id: 'acme' }]);
      const volumes = as<V1Deployment>(only(objects, 'Deployment')).spec?.template.spec?.volumes ?? [];
      expect(volumes.find((volume) => volume.name === 'remote-clusters')).to.deep.equal({ name: 'remote-clusters', secret: { secretName: 'gpu-capacity-remote-kubeconfigs' } });
      expect(container(objects).volumeMounts).to.deep.include({ name: 'remote-clusters', mountPath: '/etc/gpu-capacity-api/remote-clusters', readOnly: true });
    });

    it('jwt: the JWKS URL, issuer and audience, and no API token Secret', async () => {
      const objects = await ci('jwt-values.yaml');
      expect(envValue(objects, 'GPUCAP_JWKS_URL')).to.equal('https://idp.example.com/.well-known/jwks.json');
      expect(envValue(objects, 'GPUCAP_JWT_ISSUER')).to.equal('https://idp.example.com/');
      expect(envValue(objects, 'GPUCAP_JWT_AUDIENCE')).to.equal('gpu-capacity-api');
      expect(envValue(objects, 'GPUCAP_API_TOKENS_FILE')).to.equal(undefined);
      expect(find(objects, 'Secret')).to.deep.equal([]);
    });

    it('config: `config` as GPUCAP_* variables (lists comma-separated, numbers as written), extraEnv, inline token records', async () => {
      const objects = await ci('config-values.yaml');
      expect(envValue(objects, 'GPUCAP_CLUSTER_ID')).to.equal('gpu-east');
      expect(envValue(objects, 'GPUCAP_LOG_LEVEL')).to.equal('debug');
      expect(envValue(objects, 'GPUCAP_SCRAPE_MAX_BYTES')).to.equal('16777216');
      expect(envValue(objects, 'GPUCAP_RATE_LIMIT_PER_SECOND')).to.equal('2.5');
      expect(envValue(objects, 'GPUCAP_TELEMETRY_ENABLED')).to.equal('false');
      expect(envValue(objects, 'GPUCAP_WATCH_NAMESPACES')).to.equal('team-a,team-b');
      expect(envValue(objects, 'GPUCAP_INITIATIVE_SOURCE')).to.equal('namespace');
      expect(envValue(objects, 'GPUCAP_EXPORTER_NAMESPACES')).to.equal('gpu-operator,dcgm-exporter');
      expect(envValue(objects, 'GPUCAP_AUTH_FAILURE_RATE_PER_SECOND')).to.equal('0.5');
      expect(envValue(objects, 'NODE_OPTIONS')).to.equal('--max-old-space-size=768');
      const records = parse(as<V1Secret>(only(objects, 'Secret')).stringData?.['tokens.yaml'] ?? '') as { tokens: { id: string }[] };
      expect(records.tokens.map((record) => record.id)).to.deep.equal(['grafana-prod']);
    });
  });

  describe('values refused', () => {
    async function refused(args: string[]): Promise<string> {
      const result = await helm(helmBin, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...args]);
      expect(result.code, `helm template ${args.join(' ')} should fail`).not.to.equal(0);
      return result.stderr;
    }

    it('an unknown top-level key (values.schema.json)', async () => {
      expect(await refused(['--set', 'replicas=2'])).to.include("additional properties 'replicas' not allowed");
    });

    it('a `config` key the chart sets itself, or one the service does not know', async () => {
      expect(await refused(['--set', 'config.namespace=other'])).to.include('namespace');
      expect(await refused(['--set', 'config.log_levle=debug'])).to.include('log_levle');
    });

    it('no credential source: the service would refuse to start', async () => {
      expect(await refused(['--set', 'apiTokens.enabled=false'])).to.include('needs a credential source');
    });

    it('a plain http:// JWKS URL to a host that is not loopback, unless config.jwks_allow_http', async () => {
      const jwt = ['--set', 'jwt.issuer=https://idp.example.com/', '--set', 'jwt.audience=gpu-capacity-api'];
      expect(await refused([...jwt, '--set', 'jwt.jwksUrl=http://idp.corp.example/jwks'])).to.include('config.jwks_allow_http=true');
      await template(helmBin, [...jwt, '--set', 'jwt.jwksUrl=http://idp.corp.example/jwks', '--set', 'config.jwks_allow_http=true']);
      await template(helmBin, [...jwt, '--set', 'jwt.jwksUrl=http://127.0.0.1:8081/jwks']);
    });

    it('a JWKS URL without issuer and audience', async () => {
      expect(await refused(['--set', 'jwt.jwksUrl=https://idp.example.com/jwks'])).to.include('jwt.issuer and jwt.audience are required');
    });

    it('two replicas writing one SQLite file, naming the database values that allow more', async () => {
      const message = await refused(['--set', 'replicaCount=2']);
      expect(message).to.include('two writers on one SQLite file');
      expect(message).to.include('database.url or database.existingSecret');
      await template(helmBin, ['--set', 'replicaCount=2', '--set', 'persistence.enabled=false']);
    });

    it('a termination grace period shorter than the shutdown delay + grace + 5', async () => {
      expect(await refused(['--set', 'config.shutdown_grace_seconds=30'])).to.include('terminationGracePeriodSeconds (30) must be at least');
      await template(helmBin, ['--set', 'config.shutdown_grace_seconds=30', '--set', 'terminationGracePeriodSeconds=40']);
    });
  });

  it('values.schema.json allows in `config` every service setting but those the chart sets itself', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: { config: { propertyNames: { enum: string[] } } } };
    const settings = Object.keys(ConfigSchema.properties);
    expect(CHART_SET_KEYS.filter((key) => !settings.includes(key)), 'keys the chart sets that the service does not know').to.deep.equal([]);
    expect([...schema.properties.config.propertyNames.enum].sort()).to.deep.equal(settings.filter((key) => !CHART_SET_KEYS.includes(key)).sort());
  });
});

describe('charts/gpu-capacity-api values.yaml and README.md', () => {
  /** Dotted paths of the keys of values.yaml, each with whether a `# --` comment documents it. */
  function valueKeys(): { path: string; documented: boolean; parent: boolean }[] {
    const lines = readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8').split('\n');
    const keys: { path: string; documented: boolean; parent: boolean; indent: number }[] = [];
    const stack: string[] = [];
    let comment = false;
    lines.forEach((line, index) => {
      if (/^\s*# -- /.test(line)) comment = true;
      else if (/^\s*#/.test(line) || line.trim() === '') {
        if (line.trim() === '') comment = false;
      } else {
        const key = /^(\s*)([A-Za-z][A-Za-z0-9_]*):(.*)$/.exec(line);
        if (key === null) return;
        const indent = (key[1] ?? '').length / 2;
        stack.length = indent;
        stack.push(key[2] ?? '');
        const next = lines.slice(index + 1).find((candidate) => candidate.trim() !== '' && !/^\s*#/.test(candidate)) ?? '';
        const parent = (key[3] ?? '').trim() === '' && next.length - next.trimStart().length > (key[1] ?? '').length && !/^\s*- /.test(next);
        keys.push({ path: stack.join('.'), documented: comment, parent, indent });
        comment = false;
      }
    });
    // Keys inside a documented value (podSecurityContext.runAsUser, ...) are part of that value.
    return keys.filter((key) => !keys.some((other) => other.documented && key.path.startsWith(`${other.path}.`)));
  }

  it('documents every value with a `# --` comment (helm-docs)', () => {
    const undocumented = valueKeys().filter((key) => !key.documented && !key.parent);
    expect(undocumented.map((key) => key.path)).to.deep.equal([]);
    expect(valueKeys().filter((key) => key.documented).length).to.be.greaterThan(50);
  });

  it('lists every documented value in the README values table', () => {
    const readme = readFileSync(join(CHART_DIR, 'README.md'), 'utf8');
    const missing = valueKeys()
      .filter((key) => key.documented)
      .filter((key) => !readme.includes(`| \`${key.path}\` |`));
    expect(missing.map((key) => key.path)).to.deep.equal([]);
  });
});
