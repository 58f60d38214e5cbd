// The chart's HA mode, rendered by the real helm: with a database (database.url or
// database.existingSecret) the index is in PostgreSQL, so the chart runs 3 replicas that roll one at a
// time, a PDB, anti-affinity, no PVC, a preStop sleep, and the URLs only through secretKeyRef. The
// rendered environment, over the image's, must pass the service's own config check. Skips when helm
// cannot be had (see helm.ts).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1NetworkPolicy, V1PodDisruptionBudget, V1Secret } from '@kubernetes/client-node';
import { loadConfig } from '../../src/config/load.js';
import { CHART_DIR, CI_VALUES_DIR, NAMESPACE, RELEASE, container, deployment, env, envValue, find, helm, helmOrSkip, only, template, type RenderedObject } from './helm.js';

const FULLNAME = `${RELEASE}-gpu-capacity-api`;
const SELECTOR = { 'app.kubernetes.io/name': 'gpu-capacity-api', 'app.kubernetes.io/instance': RELEASE };
const PRIMARY_URL = 'postgres://gpucap:s3cret-password@gpucap-db-rw:5432/gpucap?sslmode=require';
const READ_ONLY_URL = 'postgres://gpucap:s3cret-password@gpucap-db-ro:5432/gpucap?sslmode=require';
const DOCKERFILE = new URL('../../deploy/Dockerfile', import.meta.url);

describe('Helm chart: the index in PostgreSQL (database.*)', function () {
  this.timeout(60_000);
  let helmBin: string;
  /** ci/postgres-values.yaml: the URLs from existing Secrets (CloudNativePG's). */
  let fromSecrets: RenderedObject[];
  /** database.url and database.readOnlyUrl as plain values. */
  let fromValues: RenderedObject[];

  before(async function () {
    helmBin = await helmOrSkip(this);
    fromSecrets = await template(helmBin, ['-f', join(CI_VALUES_DIR, 'postgres-values.yaml')]);
    fromValues = await template(helmBin, ['--set', `database.url=${PRIMARY_URL}`, '--set', `database.readOnlyUrl=${READ_ONLY_URL}`]);
  });

  async function refused(args: string[]): Promise<string> {
    const result = await helm(helmBin, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...args]);
    expect(result.code, `helm template ${args.join(' ')} should fail`).not.to.equal(0);
    return result.stderr;
  }

  it('runs 3 replicas when replicaCount is unset, and replicaCount when it is set', async () => {
    expect(deployment(fromSecrets).spec?.replicas).to.equal(3);
    expect(deployment(fromValues).spec?.replicas).to.equal(3);
    const five = await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'replicaCount=5']);
    expect(deployment(five).spec?.replicas).to.equal(5);
  });

  it('rolls with maxSurge 1 and maxUnavailable 0 instead of Recreate', () => {
    expect(deployment(fromSecrets).spec?.strategy).to.deep.equal({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });

  it('creates a PodDisruptionBudget with maxUnavailable 1, unless podDisruptionBudget.enabled=false', async () => {
    const budget = only(fromSecrets, 'PodDisruptionBudget') as unknown as V1PodDisruptionBudget;
    expect(budget.spec).to.deep.equal({ maxUnavailable: 1, selector: { matchLabels: SELECTOR } });
    const off = await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'podDisruptionBudget.enabled=false']);
    expect(find(off, 'PodDisruptionBudget')).to.deep.equal([]);
  });

  it('prefers one replica per node (anti-affinity on kubernetes.io/hostname), unless affinity is set', async () => {
    expect(deployment(fromSecrets).spec?.template.spec?.affinity).to.deep.equal({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: SELECTOR } } }],
      },
    });
    const zone = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: SELECTOR } }] } };
    const own = await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set-json', `affinity=${JSON.stringify(zone)}`]);
    expect(deployment(own).spec?.template.spec?.affinity).to.deep.equal(zone);
  });

  it('creates no PVC, even with persistence.enabled, and mounts emptyDirs on /tmp and the data folder', () => {
    expect(find(fromSecrets, 'PersistentVolumeClaim')).to.deep.equal([]);
    expect(deployment(fromSecrets).spec?.template.spec?.volumes).to.deep.equal([
      { name: 'tmp', emptyDir: {} },
      { name: 'data', emptyDir: {} },
      { name: 'api-tokens', secret: { secretName: `${FULLNAME}-api-tokens` } },
    ]);
    expect(container(fromSecrets).volumeMounts).to.deep.equal([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'data', mountPath: '/var/lib/gpu-capacity-api' },
      { name: 'api-tokens', mountPath: '/etc/gpu-capacity-api/tokens', readOnly: true },
    ]);
  });

  it('sleeps ha.preStopSeconds in a preStop hook, within a grace period that covers it, the delay and the grace', async () => {
    expect(container(fromSecrets).lifecycle).to.deep.equal({ preStop: { exec: { command: ['/bin/sleep', '5'] } } });
    expect(deployment(fromSecrets).spec?.template.spec?.terminationGracePeriodSeconds).to.be.at.least(5 + 5 + 10 + 5);
    const none = await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'ha.preStopSeconds=0']);
    expect(container(none).lifecycle).to.equal(undefined);
  });

  it('reads GPUCAP_DB_URL and GPUCAP_DB_READ_URL from the existing Secrets through secretKeyRef', () => {
    const variables = env(fromSecrets);
    expect(variables.get('GPUCAP_DB_URL')).to.deep.equal({ name: 'GPUCAP_DB_URL', valueFrom: { secretKeyRef: { name: 'gpucap-db-app', key: 'uri' } } });
    expect(variables.get('GPUCAP_DB_READ_URL')).to.deep.equal({ name: 'GPUCAP_DB_READ_URL', valueFrom: { secretKeyRef: { name: 'gpucap-db-ro', key: 'uri' } } });
    expect(find(fromSecrets, 'Secret').map((secret) => secret.metadata.name)).to.deep.equal([`${FULLNAME}-api-tokens`]);
  });

  it('keeps database.url and database.readOnlyUrl in a Secret of its own, never in the pod spec', () => {
    const secret = find(fromValues, 'Secret').find((object) => object.metadata.name === `${FULLNAME}-database`) as unknown as V1Secret | undefined;
    expect(secret?.stringData).to.deep.equal({ uri: PRIMARY_URL, 'read-only-uri': READ_ONLY_URL });
    const variables = env(fromValues);
    expect(variables.get('GPUCAP_DB_URL')).to.deep.equal({ name: 'GPUCAP_DB_URL', valueFrom: { secretKeyRef: { name: `${FULLNAME}-database`, key: 'uri' } } });
    expect(variables.get('GPUCAP_DB_READ_URL')).to.deep.equal({ name: 'GPUCAP_DB_READ_URL', valueFrom: { secretKeyRef: { name: `${FULLNAME}-database`, key: 'read-only-uri' } } });
    expect(JSON.stringify(deployment(fromValues))).not.to.include('s3cret-password');
  });

  it('rolls the pods when database.url changes (a checksum of its Secret on the pod template)', async () => {
    const checksum = (objects: RenderedObject[]) => deployment(objects).spec?.template.metadata?.annotations?.['checksum/database'];
    const other = await template(helmBin, ['--set', `database.url=${PRIMARY_URL.replace('gpucap-db-rw', 'gpucap-db2-rw')}`, '--set', `database.readOnlyUrl=${READ_ONLY_URL}`]);
    expect(checksum(fromValues)).to.match(/^[0-9a-f]{64}$/);
    expect(checksum(other)).to.match(/^[0-9a-f]{64}$/).and.not.equal(checksum(fromValues));
    expect(checksum(fromSecrets)).to.equal(undefined);
  });

  it('names the replica from the downward API, sets the pool size, and blanks the image\'s GPUCAP_DB_PATH', () => {
    const variables = env(fromSecrets);
    expect(variables.get('GPUCAP_INSTANCE_ID')).to.deep.equal({ name: 'GPUCAP_INSTANCE_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(envValue(fromSecrets, 'GPUCAP_DB_POOL_SIZE')).to.equal('4');
    // The image sets GPUCAP_DB_PATH; the service reads an empty variable as unset.
    expect(variables.get('GPUCAP_DB_PATH')).to.deep.equal({ name: 'GPUCAP_DB_PATH', value: '' });
  });

  it('renders an environment the service accepts over the image\'s own ENV (db_url without db_path)', () => {
    const imagePath = /GPUCAP_DB_PATH=(\S+)/.exec(readFileSync(DOCKERFILE, 'utf8'))?.[1];
    expect(imagePath, 'GPUCAP_DB_PATH in deploy/Dockerfile').to.be.a('string');
    const podEnv: Record<string, string> = { GPUCAP_DB_PATH: imagePath ?? '' };
    for (const variable of env(fromSecrets).values()) {
      if (variable.valueFrom?.secretKeyRef !== undefined) podEnv[variable.name] = variable.name === 'GPUCAP_DB_URL' ? PRIMARY_URL : READ_ONLY_URL;
      else if (variable.valueFrom?.fieldRef !== undefined) podEnv[variable.name] = variable.valueFrom.fieldRef.fieldPath === 'metadata.name' ? `${FULLNAME}-7d9f8-abcde` : NAMESPACE;
      else podEnv[variable.name] = variable.value ?? '';
    }
    const config = loadConfig(podEnv);
    expect(config.db_url).to.equal(PRIMARY_URL);
    expect(config.db_read_url).to.equal(READ_ONLY_URL);
    expect(config.instance_id).to.equal(`${FULLNAME}-7d9f8-abcde`);
    expect(config.cluster_id).to.equal('gpu-east');
  });

  it('networkpolicy: egress to the database pods on networkPolicy.database.port', async () => {
    const egress = (only(fromSecrets, 'NetworkPolicy') as unknown as V1NetworkPolicy).spec?.egress ?? [];
    expect(egress.at(-1)).to.deep.equal({ ports: [{ port: 5432, protocol: 'TCP' }], to: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'gpucap-db' } } }] });
    const pooler = await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'networkPolicy.restrictEgress=true', '--set', 'networkPolicy.database.port=6432']);
    expect((only(pooler, 'NetworkPolicy') as unknown as V1NetworkPolicy).spec?.egress?.at(-1)).to.deep.equal({ ports: [{ port: 6432, protocol: 'TCP' }] });
  });

  it('without a database: none of it (no database variables, no preStop, no anti-affinity)', async () => {
    const sqlite = await template(helmBin);
    expect([...env(sqlite).keys()].filter((name) => /^GPUCAP_(DB_URL|DB_READ_URL|DB_POOL_SIZE|INSTANCE_ID)$/.test(name))).to.deep.equal([]);
    expect(container(sqlite).lifecycle).to.equal(undefined);
    expect(deployment(sqlite).spec?.template.spec?.affinity).to.equal(undefined);
    expect(deployment(sqlite).spec?.template.metadata?.annotations).to.equal(undefined);
  });

  describe('values refused', () => {
    it('database.url and database.existingSecret together (values.schema.json)', async () => {
      expect(await refused(['--set', `database.url=${PRIMARY_URL}`, '--set', 'database.existingSecret=gpucap-db-app'])).to.include("at '/database/existingSecret': value must be ''");
    });

    it('database.readOnlyUrl and database.readOnlySecret together (values.schema.json)', async () => {
      const args = ['--set', 'database.existingSecret=gpucap-db-app', '--set', `database.readOnlyUrl=${READ_ONLY_URL}`, '--set', 'database.readOnlySecret=gpucap-db-ro'];
      expect(await refused(args)).to.include("at '/database/readOnlySecret': value must be ''");
    });

    it('a URL that is not postgres:// or postgresql://, and a pool size out of 1..64 (values.schema.json)', async () => {
      expect(await refused(['--set', 'database.url=mysql://gpucap@db/gpucap'])).to.include('/database/url');
      expect(await refused(['--set', 'database.existingSecret=gpucap-db-app', '--set', 'database.poolSize=0'])).to.include('/database/poolSize');
      await template(helmBin, ['--set', 'database.url=postgresql://gpucap@db/gpucap']);
    });

    it('a read-only URL without a primary', async () => {
      expect(await refused(['--set', 'database.readOnlySecret=gpucap-db-ro'])).to.include('without database.url or database.existingSecret');
    });

    it('a termination grace period shorter than preStop + shutdown delay + grace + 5', async () => {
      const args = ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'terminationGracePeriodSeconds=24'];
      expect(await refused(args)).to.include('terminationGracePeriodSeconds (24) must be at least ha.preStopSeconds + config.shutdown_delay_seconds + config.shutdown_grace_seconds + 5 = 25');
      await template(helmBin, ['--set', 'database.existingSecret=gpucap-db-app', '--set', 'terminationGracePeriodSeconds=25']);
    });
  });
});
