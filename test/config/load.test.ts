// loadConfig: YAML file (GPUCAP_CONFIG) < GPUCAP_* env vars, schema defaults for the rest, every
// problem reported at once naming its key and where it came from, the result frozen.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { databaseLocation, describeDatabase, instanceIdOf, scrapeTimeoutSeconds, type Config } from '../../src/config/schema.js';
import { makeTempDir } from '../support/temp-dir.js';

const FILE = '/etc/gpucap/config.yaml';
/** The smallest valid environment: one credential source. */
const BASE = { GPUCAP_API_TOKENS_FILE: '/var/run/secrets/tokens.yaml' };

/** A readFile that serves `text` for FILE and fails like fs for anything else. */
function fileWith(text: string) {
  return (path: string) => {
    if (path !== FILE) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  };
}

function problemsOf(env: Record<string, string | undefined>, readFile?: (path: string) => string): string[] {
  let thrown: unknown;
  try {
    loadConfig(env, readFile);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'loadConfig should have thrown a ConfigError').to.be.instanceOf(ConfigError);
  const error = thrown as ConfigError;
  // The message shows every problem, so the process's stderr does too.
  for (const problem of error.problems) expect(error.message).to.contain(problem);
  return error.problems;
}

describe('config/load', () => {
  describe('sources', () => {
    it('fills every unset key with its documented default', () => {
      const config = loadConfig(BASE);
      expect({ ...config }).to.deep.equal({
        api_tokens_file: '/var/run/secrets/tokens.yaml',
        listen: '0.0.0.0:8080',
        admin_listen: '0.0.0.0:9090',
        admin_auth: 'kubernetes',
        admin_auth_cache_seconds: 10,
        db_path: './data/index.db',
        db_pool_size: 4,
        db_prepared_statements: true,
        ha_lease_seconds: 10,
        ha_retry_seconds: 2,
        retention_days: 400,
        cluster_id: 'local',
        home_cluster_enabled: true,
        remote_clusters: [],
        remote_kubeconfig_reload_seconds: 10,
        cluster_unreachable_after_seconds: 30,
        watch_namespaces: [],
        gpu_resources: ['nvidia.com/gpu', 'nvidia.com/gpu.shared', 'nvidia.com/mig-*'],
        gpu_hours_basis: 'equivalents',
        mig_total_slices: {},
        kai_reservation_namespace: 'kai-resource-reservation',
        initiative_source: 'labels',
        label_initiative: 'gpucap.io/initiative',
        label_allowed_initiatives: 'gpucap.io/allowed-initiatives',
        label_organization: 'gpucap.io/organization',
        label_submitted_by: 'gpucap.io/submitted-by',
        label_managed: 'gpucap.io/managed',
        label_kueue_queue_name: 'kueue.x-k8s.io/queue-name',
        label_instance_type: 'node.kubernetes.io/instance-type',
        label_gpu_product: 'nvidia.com/gpu.product',
        label_capacity_type: '',
        index_flush_interval_ms: 100,
        read_workers: 2,
        write_worker: true,
        background_niceness: 0,
        telemetry_enabled: true,
        telemetry_summary_seconds: 60,
        scrape_interval_seconds: 15,
        scrape_concurrency: 32,
        scrape_max_bytes: 16777216,
        exporter_namespaces: ['gpu-operator', 'nvidia-gpu-operator', 'gpu-operator-resources'],
        exporter_selectors: ['app=nvidia-dcgm-exporter', 'app.kubernetes.io/name=dcgm-exporter'],
        fleet_history_resolution_seconds: 60,
        fleet_history_flush_seconds: 15,
        exporter_port: 9400,
        exporter_path: '/metrics',
        lifetime_flush_seconds: 60,
        idle_threshold_percent: 5,
        capacity_configmaps_enabled: true,
        capacity_label_selector: 'gpucap.io/capacity=true',
        capacity_configmap_key: 'capacity.yaml',
        prices_configmaps_enabled: true,
        prices_label_selector: 'gpucap.io/prices=true',
        prices_configmap_key: 'prices.yaml',
        namespace: 'default',
        default_organization_id: 'default',
        jwt_algorithms: ['RS256', 'ES256'],
        jwt_clock_tolerance_seconds: 30,
        jwks_cache_seconds: 600,
        jwks_allow_http: false,
        jwks_cooldown_seconds: 30,
        claim_organization: 'org_id',
        claim_role: 'role',
        claim_initiatives: 'initiatives',
        api_tokens_reload_seconds: 5,
        rate_limit_per_second: 50,
        rate_limit_burst: 100,
        auth_failure_rate_per_second: 1,
        auth_failure_burst: 20,
        console_enabled: true,
        cors_allowed_origins: [],
        shutdown_delay_seconds: 5,
        shutdown_grace_seconds: 10,
        log_level: 'info',
      });
      for (const optional of ['db_url', 'db_read_url', 'instance_id', 'kubeconfig', 'remote_kubeconfig_dir', 'cluster_organization_id', 'jwks_url', 'jwks_file', 'jwt_issuer', 'jwt_audience', 'scrape_timeout_seconds'] as const) {
        expect(config[optional], optional).to.equal(undefined);
      }
    });

    it('reads the YAML file named by GPUCAP_CONFIG from disk', () => {
      const temp = makeTempDir();
      try {
        const path = join(temp.path, 'config.yaml');
        writeFileSync(path, ['listen: 127.0.0.1:18080', 'cluster_id: gpu-east', 'api_tokens_file: /tokens.yaml', 'jwt_algorithms: [ES256, EdDSA]', 'retention_days: 30', ''].join('\n'));
        const config = loadConfig({ GPUCAP_CONFIG: path });
        expect(config).to.include({ listen: '127.0.0.1:18080', cluster_id: 'gpu-east', api_tokens_file: '/tokens.yaml', retention_days: 30 });
        expect(config.jwt_algorithms).to.deep.equal(['ES256', 'EdDSA']);
        expect(config.admin_listen).to.equal('0.0.0.0:9090');
      } finally {
        temp.remove();
      }
    });

    it('lets an env var override the same key of the YAML file, key by key', () => {
      const yaml = 'cluster_id: from-file\nlog_level: debug\napi_tokens_file: /from-file.yaml\n';
      const config = loadConfig({ GPUCAP_CONFIG: FILE, GPUCAP_CLUSTER_ID: 'from-env' }, fileWith(yaml));
      expect(config).to.include({ cluster_id: 'from-env', log_level: 'debug', api_tokens_file: '/from-file.yaml' });
    });

    it('treats an empty env var as unset: the file value or the default stays', () => {
      const fromFile = loadConfig({ GPUCAP_CONFIG: FILE, GPUCAP_LOG_LEVEL: '' }, fileWith('log_level: warn\napi_tokens_file: /t.yaml\n'));
      expect(fromFile.log_level).to.equal('warn');
      const fromDefault = loadConfig({ ...BASE, GPUCAP_LOG_LEVEL: '', GPUCAP_JWT_ALGORITHMS: '' });
      expect(fromDefault.log_level).to.equal('info');
      expect(fromDefault.jwt_algorithms).to.deep.equal(['RS256', 'ES256']);
    });

    it('treats an empty GPUCAP_CONFIG as no file', () => {
      const config = loadConfig({ ...BASE, GPUCAP_CONFIG: '' }, () => {
        throw new Error('no file should be read');
      });
      expect(config.listen).to.equal('0.0.0.0:8080');
    });

    it('accepts an empty YAML file', () => {
      expect(loadConfig({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith('')).listen).to.equal('0.0.0.0:8080');
    });

    it('ignores environment variables without the GPUCAP_ prefix', () => {
      expect(loadConfig({ ...BASE, LISTEN: 'nonsense', PATH: '/usr/bin', gpucap_listen: 'nonsense' }).listen).to.equal('0.0.0.0:8080');
    });
  });

  describe('env var parsing', () => {
    it('splits list env vars on commas, trimming blanks and dropping empty items', () => {
      const config = loadConfig({
        ...BASE,
        GPUCAP_CORS_ALLOWED_ORIGINS: ' https://grafana.example.com , https://ops.example.com:8443,',
        GPUCAP_JWT_ALGORITHMS: 'ES256,EdDSA',
      });
      expect(config.cors_allowed_origins).to.deep.equal(['https://grafana.example.com', 'https://ops.example.com:8443']);
      expect(config.jwt_algorithms).to.deep.equal(['ES256', 'EdDSA']);
    });

    it('turns integer and number env vars into numbers', () => {
      const config = loadConfig({ ...BASE, GPUCAP_RETENTION_DAYS: ' 30 ', GPUCAP_RATE_LIMIT_PER_SECOND: '2.5', GPUCAP_SHUTDOWN_GRACE_SECONDS: '0' });
      expect(config).to.include({ retention_days: 30, rate_limit_per_second: 2.5, shutdown_grace_seconds: 0 });
    });

    it('rejects a number env var that is not a number, naming the variable', () => {
      expect(problemsOf({ ...BASE, GPUCAP_RETENTION_DAYS: 'forever' })).to.deep.equal(['GPUCAP_RETENTION_DAYS: must be integer, got "forever"']);
      expect(problemsOf({ ...BASE, GPUCAP_RATE_LIMIT_BURST: '1.5' })).to.deep.equal(['GPUCAP_RATE_LIMIT_BURST: must be integer, got "1.5"']);
    });

    it('names the item of a list env var that is invalid', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_CORS_ALLOWED_ORIGINS: 'https://ok.example.com,ftp://files.example.com' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_CORS_ALLOWED_ORIGINS \(item 1\): /);
    });
  });

  describe('errors', () => {
    it('reports every problem at once, each naming its key and its source', () => {
      const yaml = 'namespace: Not_A_Namespace\nretention_days: 0\n';
      const problems = problemsOf({ ...BASE, GPUCAP_CONFIG: FILE, GPUCAP_LISTEN: 'nonsense', GPUCAP_SCRAPE_INTERVAL_SECONDS: '0' }, fileWith(yaml));
      expect(problems).to.have.length(4);
      expect(problems.filter((p) => p.startsWith('GPUCAP_LISTEN: '))).to.have.length(1);
      expect(problems.filter((p) => p.startsWith('GPUCAP_SCRAPE_INTERVAL_SECONDS: must be >= 2'))).to.have.length(1);
      expect(problems.filter((p) => p.startsWith(`namespace (in ${FILE}): must match pattern`))).to.have.length(1);
      expect(problems.filter((p) => p.startsWith(`retention_days (in ${FILE}): must be >= 1`))).to.have.length(1);
    });

    it('refuses a scrape timeout that is not shorter than the scrape interval, naming both keys', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_SCRAPE_INTERVAL_SECONDS: '5', GPUCAP_SCRAPE_TIMEOUT_SECONDS: '5' });
      expect(problems).to.deep.equal(['GPUCAP_SCRAPE_TIMEOUT_SECONDS: must be shorter than GPUCAP_SCRAPE_INTERVAL_SECONDS (5), got 5']);
      expect(scrapeTimeoutSeconds(loadConfig({ ...BASE, GPUCAP_SCRAPE_INTERVAL_SECONDS: '5' }))).to.equal(4);
      expect(scrapeTimeoutSeconds(loadConfig(BASE))).to.equal(10);
    });

    it('refuses a telemetry summary width that does not divide an hour, and one beyond its bounds', () => {
      expect(problemsOf({ ...BASE, GPUCAP_TELEMETRY_SUMMARY_SECONDS: '7' })).to.deep.equal(['GPUCAP_TELEMETRY_SUMMARY_SECONDS: must divide 3600 (an hour holds whole buckets), got 7']);
      expect(problemsOf({ ...BASE, GPUCAP_TELEMETRY_SUMMARY_SECONDS: '600' })[0]).to.match(/^GPUCAP_TELEMETRY_SUMMARY_SECONDS: must be <= 300/);
      expect(loadConfig({ ...BASE, GPUCAP_TELEMETRY_SUMMARY_SECONDS: '30' }).telemetry_summary_seconds).to.equal(30);
    });

    it('refuses an exporter selector that is not key=value', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_EXPORTER_SELECTORS: 'app=dcgm,not a selector' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_EXPORTER_SELECTORS/);
    });

    it('names the env var, not the file, when an env var overrides a valid file value with an invalid one', () => {
      const problems = problemsOf({ GPUCAP_CONFIG: FILE, GPUCAP_RETENTION_DAYS: '0' }, fileWith('retention_days: 30\napi_tokens_file: /t.yaml\n'));
      expect(problems).to.deep.equal(['GPUCAP_RETENTION_DAYS: must be >= 1, got "0"']);
    });

    it('ignores the service-link variables Kubernetes injects for a Service named gpucap-…', () => {
      const links = {
        GPUCAP_GPU_CAPACITY_API_SERVICE_HOST: '10.96.0.12',
        GPUCAP_GPU_CAPACITY_API_SERVICE_PORT: '8080',
        GPUCAP_GPU_CAPACITY_API_SERVICE_PORT_HTTP: '8080',
        GPUCAP_GPU_CAPACITY_API_PORT: 'tcp://10.96.0.12:8080',
        GPUCAP_GPU_CAPACITY_API_PORT_8080_TCP: 'tcp://10.96.0.12:8080',
        GPUCAP_GPU_CAPACITY_API_PORT_8080_TCP_PROTO: 'tcp',
        GPUCAP_GPU_CAPACITY_API_PORT_8080_TCP_PORT: '8080',
        GPUCAP_GPU_CAPACITY_API_PORT_8080_TCP_ADDR: '10.96.0.12',
        GPUCAP_SERVICE_HOST: '10.96.0.13',
        GPUCAP_SERVICE_PORT: '80',
        GPUCAP_PORT: 'tcp://10.96.0.13:80',
      };
      expect(() => loadConfig({ ...BASE, ...links })).to.not.throw();
    });

    it('refuses a port above 65535, naming the key', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_LISTEN: '0.0.0.0:99999' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_LISTEN: must match pattern .*, got "0\.0\.0\.0:99999"$/);
      expect(loadConfig({ ...BASE, GPUCAP_LISTEN: '0.0.0.0:65535' }).listen).to.equal('0.0.0.0:65535');
    });

    it('rejects an unknown GPUCAP_ variable and lists the known ones', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_LISTEN_PORT: '8080' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_LISTEN_PORT: unknown setting \(known: GPUCAP_LISTEN, GPUCAP_ADMIN_LISTEN, /);
      expect(problems[0]).to.contain('GPUCAP_LOG_LEVEL');
    });

    it('rejects an unknown key of the YAML file, naming the key and the file', () => {
      expect(problemsOf({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith('listen_port: 8080\n'))).to.deep.equal([`listen_port (in ${FILE}): unknown setting`]);
    });

    it('reports a bad enum value once, listing the allowed values', () => {
      expect(problemsOf({ ...BASE, GPUCAP_LOG_LEVEL: 'loud' })).to.deep.equal([
        'GPUCAP_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      ]);
    });

    it('reports a bad item of an enum list once, listing the allowed values', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_JWT_ALGORITHMS: 'RS256,HS256' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_JWT_ALGORITHMS \(item 1\): must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, got "HS256"$/);
    });

    it('reports a bad enum value of the YAML file once, naming the key and the file', () => {
      expect(problemsOf({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith('log_level: loud\n'))).to.deep.equal([
        `log_level (in ${FILE}): must be one of fatal, error, warn, info, debug, trace, silent, got "loud"`,
      ]);
    });

    it('rejects a duplicate in a list that must hold unique items', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_JWT_ALGORITHMS: 'ES256,ES256' });
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^GPUCAP_JWT_ALGORITHMS: .*duplicate/);
    });

    it('reports an unreadable YAML file with its path, along with the other problems', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_CONFIG: '/missing.yaml', GPUCAP_BOGUS: '1' }, fileWith(''));
      expect(problems).to.have.length(2);
      expect(problems[0]).to.match(/^GPUCAP_CONFIG: cannot read "\/missing\.yaml": ENOENT/);
      expect(problems[1]).to.match(/^GPUCAP_BOGUS: unknown setting/);
    });

    it('rejects a YAML file that is not a mapping', () => {
      for (const text of ['- listen\n- admin_listen\n', 'just a sentence\n', '42\n']) {
        expect(problemsOf({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith(text)), text).to.deep.equal([`GPUCAP_CONFIG: "${FILE}" must hold a mapping of settings`]);
      }
    });

    it('rejects a file that is not valid YAML, saying where', () => {
      const problems = problemsOf({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith('listen: [127.0.0.1:8080\nlog_level: info\n'));
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(new RegExp(`^GPUCAP_CONFIG: "${FILE}" is not valid YAML: .*line \\d+`));
    });
  });

  describe('clusters', () => {
    it('reads remote_clusters from its env var as a JSON array', () => {
      const config = loadConfig({
        ...BASE,
        GPUCAP_REMOTE_KUBECONFIG_DIR: '/etc/gpucap/clusters',
        GPUCAP_REMOTE_CLUSTERS: '[{"file":"west.yaml","cluster_id":"gpu-west","organization_id":"acme"},{"file":"lab.yaml"}]',
      });
      expect(config.remote_clusters).to.deep.equal([{ file: 'west.yaml', cluster_id: 'gpu-west', organization_id: 'acme' }, { file: 'lab.yaml' }]);
    });

    it('rejects remote_clusters that is not JSON, saying what it expects', () => {
      expect(problemsOf({ ...BASE, GPUCAP_REMOTE_KUBECONFIG_DIR: '/d', GPUCAP_REMOTE_CLUSTERS: 'west.yaml=gpu-west' })[0]).to.match(
        /^GPUCAP_REMOTE_CLUSTERS: must be a JSON array \(e\.g\. .*\), got "west\.yaml=gpu-west"$/,
      );
    });

    it('names the item and field of remote_clusters that is wrong', () => {
      expect(problemsOf({ ...BASE, GPUCAP_REMOTE_KUBECONFIG_DIR: '/d', GPUCAP_REMOTE_CLUSTERS: '[{"file":"../etc/passwd"},{"file":"b","region":"x"}]' })).to.deep.equal([
        'GPUCAP_REMOTE_CLUSTERS (item 0, file): must match pattern "^[^/.][^/]*$", got "../etc/passwd"',
        'GPUCAP_REMOTE_CLUSTERS (item 1, region): unknown setting',
      ]);
    });

    it('rejects remote_clusters without the folder, a file listed twice and a cluster id taken by the home cluster', () => {
      expect(problemsOf({ ...BASE, GPUCAP_CLUSTER_ID: 'east', GPUCAP_REMOTE_CLUSTERS: '[{"file":"a","cluster_id":"east"},{"file":"a"}]' })).to.deep.equal([
        'GPUCAP_REMOTE_CLUSTERS: needs GPUCAP_REMOTE_KUBECONFIG_DIR, the folder of those files',
        'GPUCAP_REMOTE_CLUSTERS (item 0): cluster_id "east" is already used',
        'GPUCAP_REMOTE_CLUSTERS (item 1): file "a" is listed twice',
      ]);
    });

    it('lets a remote cluster take the home cluster\'s id when the home cluster is not watched', () => {
      const env = { ...BASE, GPUCAP_HOME_CLUSTER_ENABLED: 'false', GPUCAP_REMOTE_KUBECONFIG_DIR: '/d', GPUCAP_REMOTE_CLUSTERS: '[{"file":"a","cluster_id":"local"}]' };
      expect(loadConfig(env).home_cluster_enabled).to.equal(false);
    });

    it('rejects a label key Kubernetes would refuse and a namespace that is not a DNS label', () => {
      expect(problemsOf({ ...BASE, GPUCAP_LABEL_INITIATIVE: 'team name', GPUCAP_WATCH_NAMESPACES: 'ml,ML-Prod' })).to.have.members([
        'GPUCAP_WATCH_NAMESPACES (item 1): must match pattern "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", got "ML-Prod"',
        `GPUCAP_LABEL_INITIATIVE: must match pattern "${'^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'}", got "team name"`,
      ]);
    });

    it('takes the GPU-hours basis and MIG totals by product, as JSON in the env var, and says what is wrong', () => {
      expect(loadConfig(BASE)).to.deep.include({ gpu_hours_basis: 'equivalents', mig_total_slices: {} });
      expect(loadConfig({ ...BASE, GPUCAP_GPU_HOURS_BASIS: 'devices', GPUCAP_MIG_TOTAL_SLICES: '{"NVIDIA-X9*":8}' })).to.deep.include({
        gpu_hours_basis: 'devices', mig_total_slices: { 'NVIDIA-X9*': 8 },
      });
      expect(problemsOf({ ...BASE, GPUCAP_GPU_HOURS_BASIS: 'slices', GPUCAP_MIG_TOTAL_SLICES: '{"NVIDIA-X9*":0}' })).to.have.members([
        'GPUCAP_GPU_HOURS_BASIS: must be one of equivalents, devices, got "slices"',
        'GPUCAP_MIG_TOTAL_SLICES (item NVIDIA-X9*): must be >= 1',
      ]);
      expect(problemsOf({ ...BASE, GPUCAP_MIG_TOTAL_SLICES: 'H100=7' })).to.deep.equal(['GPUCAP_MIG_TOTAL_SLICES: must be a JSON object (e.g. {"NVIDIA-X9*":8}), got "H100=7"']);
    });

    it("takes KAI's reservation namespace, or none when the file says \"\", and rejects one that is not a DNS label", () => {
      expect(loadConfig(BASE).kai_reservation_namespace).to.equal('kai-resource-reservation');
      expect(loadConfig({ ...BASE, GPUCAP_KAI_RESERVATION_NAMESPACE: 'kai-reservations' }).kai_reservation_namespace).to.equal('kai-reservations');
      // An empty variable is unset (as Helm renders unset values): none is said in the file.
      expect(loadConfig({ ...BASE, GPUCAP_KAI_RESERVATION_NAMESPACE: '' }).kai_reservation_namespace).to.equal('kai-resource-reservation');
      expect(loadConfig({ ...BASE, GPUCAP_CONFIG: FILE }, fileWith('kai_reservation_namespace: ""\n')).kai_reservation_namespace).to.equal('');
      expect(problemsOf({ ...BASE, GPUCAP_KAI_RESERVATION_NAMESPACE: 'KAI_Reservation' })).to.deep.equal([
        'GPUCAP_KAI_RESERVATION_NAMESPACE: must match pattern "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$", got "KAI_Reservation"',
      ]);
    });

    it('accepts GPU resource names with a trailing wildcard and rejects one without a domain', () => {
      expect(loadConfig({ ...BASE, GPUCAP_GPU_RESOURCES: 'nvidia.com/gpu,amd.com/gpu,nvidia.com/mig-*' }).gpu_resources).to.deep.equal(['nvidia.com/gpu', 'amd.com/gpu', 'nvidia.com/mig-*']);
      expect(problemsOf({ ...BASE, GPUCAP_GPU_RESOURCES: 'gpu' })[0]).to.match(/^GPUCAP_GPU_RESOURCES \(item 0\): must match pattern/);
    });
  });

  describe('cross-key rules', () => {
    it('rejects db_url together with an explicit db_path, and a read URL without PostgreSQL', () => {
      expect(problemsOf({ ...BASE, GPUCAP_DB_URL: 'postgres://gpucap@db:5432/gpucap', GPUCAP_DB_PATH: '/data/index.db' })).to.deep.equal([
        'GPUCAP_DB_URL and GPUCAP_DB_PATH: set one, not both',
      ]);
      expect(problemsOf({ ...BASE, GPUCAP_DB_READ_URL: 'postgres://gpucap@db-ro:5432/gpucap' })).to.deep.equal([
        'GPUCAP_DB_READ_URL: needs a PostgreSQL GPUCAP_DB_URL',
      ]);
      expect(problemsOf({ ...BASE, GPUCAP_DB_URL: 'mysql://db/gpucap' })[0]).to.match(/^GPUCAP_DB_URL: must match pattern .*got "mysql:\/\/db\/gpucap"/);
    });

    it('rejects jwks_url together with jwks_file', () => {
      const problems = problemsOf({ GPUCAP_JWKS_URL: 'https://idp.example.com/jwks', GPUCAP_JWKS_FILE: '/jwks.json', GPUCAP_JWT_ISSUER: 'https://idp.example.com', GPUCAP_JWT_AUDIENCE: 'gpucap' });
      expect(problems).to.deep.equal(['GPUCAP_JWKS_URL and GPUCAP_JWKS_FILE: set one, not both']);
    });

    it('requires jwt_issuer and jwt_audience once JWT verification is on', () => {
      expect(problemsOf({ GPUCAP_JWKS_URL: 'https://idp.example.com/jwks' })).to.deep.equal([
        'GPUCAP_JWT_ISSUER: required when JWT verification is on',
        'GPUCAP_JWT_AUDIENCE: required when JWT verification is on',
      ]);
      expect(problemsOf({ GPUCAP_JWKS_FILE: '/jwks.json', GPUCAP_JWT_ISSUER: 'https://idp.example.com' })).to.deep.equal([
        'GPUCAP_JWT_AUDIENCE: required when JWT verification is on',
      ]);
    });

    it('accepts JWT verification alone as the credential source when issuer and audience are set', () => {
      const config = loadConfig({ GPUCAP_JWKS_URL: 'https://idp.example.com/jwks', GPUCAP_JWT_ISSUER: 'https://idp.example.com', GPUCAP_JWT_AUDIENCE: 'gpucap' });
      expect(config).to.include({ jwks_url: 'https://idp.example.com/jwks', jwt_issuer: 'https://idp.example.com', jwt_audience: 'gpucap' });
    });

    it('rejects a configuration with no credential source', () => {
      expect(problemsOf({})).to.deep.equal([
        'No credential source: set GPUCAP_JWKS_URL, GPUCAP_JWKS_FILE or GPUCAP_API_TOKENS_FILE, or every request would be rejected',
      ]);
    });

    describe('a plain-http jwks_url', () => {
      const JWT = { GPUCAP_JWT_ISSUER: 'https://idp.example.com', GPUCAP_JWT_AUDIENCE: 'gpucap' };

      it('is refused for a host that is not loopback, naming jwks_url and jwks_allow_http', () => {
        expect(problemsOf({ ...JWT, GPUCAP_JWKS_URL: 'http://idp.example.com/jwks' })).to.deep.equal([
          'GPUCAP_JWKS_URL: must be https:// (keys fetched over plain http can be replaced on the way); http:// is accepted ' +
            'only for a loopback host (127.0.0.0/8, ::1, localhost) or with jwks_allow_http (GPUCAP_JWKS_ALLOW_HTTP) set ' +
            'to true, got "http://idp.example.com/jwks"',
        ]);
      });

      it('is refused for an address that only looks local, and names the file when it came from there', () => {
        for (const url of ['http://10.0.0.7/jwks', 'http://[::2]/jwks', 'http://localhost.example.com/jwks', 'http://128.0.0.1/jwks']) {
          expect(problemsOf({ ...JWT, GPUCAP_JWKS_URL: url })[0], url).to.match(/^GPUCAP_JWKS_URL: must be https:\/\//);
        }
        const problems = problemsOf({ ...JWT, GPUCAP_CONFIG: FILE }, fileWith('jwks_url: http://idp.example.com/jwks\n'));
        expect(problems[0]).to.match(/^jwks_url \(in \/etc\/gpucap\/config.yaml\): must be https:\/\//);
      });

      it('is accepted for a loopback host, however the address is written', () => {
        for (const url of ['http://127.0.0.1:8080/jwks', 'http://127.9.8.7/jwks', 'http://[::1]:8080/jwks', 'http://localhost/jwks', 'http://0x7f.1/jwks']) {
          expect(loadConfig({ ...JWT, GPUCAP_JWKS_URL: url }).jwks_url, url).to.equal(url);
        }
      });

      it('is accepted for any host with jwks_allow_http, which is off by default', () => {
        expect(loadConfig({ ...BASE }).jwks_allow_http).to.equal(false);
        const config = loadConfig({ ...JWT, GPUCAP_JWKS_URL: 'http://idp.internal/jwks', GPUCAP_JWKS_ALLOW_HTTP: 'true' });
        expect(config).to.include({ jwks_url: 'http://idp.internal/jwks', jwks_allow_http: true });
      });

      it('is not asked of an https URL', () => {
        expect(loadConfig({ ...JWT, GPUCAP_JWKS_URL: 'https://idp.example.com/jwks' }).jwks_url).to.equal('https://idp.example.com/jwks');
      });

      it('is refused when it is no URL at all', () => {
        expect(problemsOf({ ...JWT, GPUCAP_JWKS_URL: 'https://' })).to.deep.equal(['GPUCAP_JWKS_URL: is not a valid URL, got "https://"']);
      });
    });

    it('applies the cross-key rules to values from the YAML file too', () => {
      const problems = problemsOf({ GPUCAP_CONFIG: FILE }, fileWith('jwks_file: /jwks.json\njwt_audience: gpucap\n'));
      expect(problems).to.deep.equal(['GPUCAP_JWT_ISSUER: required when JWT verification is on']);
    });

    it('rejects admin_listen equal to listen', () => {
      expect(problemsOf({ ...BASE, GPUCAP_LISTEN: '0.0.0.0:8080', GPUCAP_ADMIN_LISTEN: '0.0.0.0:8080' })).to.deep.equal([
        'GPUCAP_ADMIN_LISTEN: must differ from GPUCAP_LISTEN',
      ]);
      expect(problemsOf({ ...BASE, GPUCAP_ADMIN_LISTEN: '0.0.0.0:8080' })).to.deep.equal(['GPUCAP_ADMIN_LISTEN: must differ from GPUCAP_LISTEN']);
    });

    it('accepts the same host with port 0 for both listeners, since the OS picks a free port for each', () => {
      const config = loadConfig({ ...BASE, GPUCAP_LISTEN: '127.0.0.1:0', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0' });
      expect(config).to.include({ listen: '127.0.0.1:0', admin_listen: '127.0.0.1:0' });
    });
  });

  describe('result', () => {
    it('is frozen, lists included: assignment throws in strict mode', () => {
      const config = loadConfig(BASE);
      expect(Object.isFrozen(config)).to.equal(true);
      expect(() => {
        (config as { -readonly [K in keyof Config]: Config[K] }).listen = '0.0.0.0:1';
      }).to.throw(TypeError);
      expect(() => (config.jwt_algorithms as string[]).push('EdDSA')).to.throw(TypeError);
      expect(config.listen).to.equal('0.0.0.0:8080');
      expect(config.jwt_algorithms).to.deep.equal(['RS256', 'ES256']);
    });

    it('gives each load its own object: freezing one leaves the defaults of the next intact', () => {
      const first = loadConfig(BASE);
      const second = loadConfig({ ...BASE, GPUCAP_JWT_ALGORITHMS: 'EdDSA' });
      expect(first.jwt_algorithms).to.deep.equal(['RS256', 'ES256']);
      expect(second.jwt_algorithms).to.deep.equal(['EdDSA']);
      expect(loadConfig(BASE).jwt_algorithms).to.not.equal(first.jwt_algorithms);
    });
  });

  describe('the database location', () => {
    it('is the SQLite file db_path unless db_url is set', () => {
      expect(databaseLocation(loadConfig({ ...BASE, GPUCAP_DB_PATH: '/data/index.db' }))).to.deep.equal({ kind: 'sqlite', path: '/data/index.db' });
      expect(databaseLocation(loadConfig({ ...BASE, GPUCAP_DB_URL: 'sqlite:/data/other.db' }))).to.deep.equal({ kind: 'sqlite', path: '/data/other.db' });
      const postgres = databaseLocation(loadConfig({ ...BASE, GPUCAP_DB_URL: 'postgresql://app:s3cret@db:5432/gpucap', GPUCAP_DB_READ_URL: 'postgres://app:s3cret@db-ro/gpucap' }));
      expect(postgres).to.deep.equal({ kind: 'postgres', url: 'postgresql://app:s3cret@db:5432/gpucap', readUrl: 'postgres://app:s3cret@db-ro/gpucap' });
    });

    it('is described without the password', () => {
      expect(describeDatabase({ kind: 'postgres', url: 'postgres://app:s3cret@db:5432/gpucap?sslmode=require', readUrl: undefined }))
        .to.equal('postgres://app:***@db:5432/gpucap?sslmode=require');
      expect(describeDatabase({ kind: 'sqlite', path: '/data/index.db' })).to.equal('/data/index.db');
    });

    it('names this replica by instance_id, else $HOSTNAME, else the host name', () => {
      expect(instanceIdOf({ instance_id: 'replica-a' }, { HOSTNAME: 'pod-1' }, 'host')).to.equal('replica-a');
      expect(instanceIdOf({}, { HOSTNAME: 'pod-1' }, 'host')).to.equal('pod-1');
      expect(instanceIdOf({}, {}, 'host')).to.equal('host');
    });
  });
});
