// GET /v1/chargeback through the whole service on the simulated API, on last month's pods whose bill is
// known: two teams' GPU time at known rates, a pod across a price change split between its rates, a pod
// that began the month before billed only for its hours inside the month, idle time and energy saved as
// the telemetry saves them, and the fleet's unallocated hours written to its history. The statement adds
// up to the cent in JSON and in CSV, shares the unallocated cost on request, refuses every role but
// ORG_ADMIN and a month that is malformed or to come, and gives its GPU-hours without money without prices.
import { expect } from 'chai';
import { createAjv } from '../../src/api/schemas/ajv.js';
import type { FleetHourRow } from '../../src/domain/fleet-ledger.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { capacityYaml } from '../support/capacity-yaml.js';
import { usageOf } from '../support/gpu-usage.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuNode, aGpuPod, aNamespace, finished, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { saveUsage } from '../support/usage-seed.js';
import { waitFor } from '../support/wait-for.js';

const NAMESPACE = 'gpu-system';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const H100 = 'NVIDIA-H100-80GB-HBM3';
const L40S = 'NVIDIA-L40S';
const MONEY = ['cost', 'energy_cost', 'idle_cost', 'shared_unallocated_cost', 'total_cost'] as const;

// Last month, which has ended: its statement is complete and nothing in it moves while the test runs.
const today = new Date();
const monthStart = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1);
const MONTH = new Date(monthStart).toISOString().slice(0, 7);
/** H100s cost 4 a GPU-hour until the 11th of the month, 3 from then on; L40S 1.5; energy 0.2 a kWh. */
const CHANGE = monthStart + 10 * DAY;

const PRICES = [
  'organization_id: acme',
  'currency: EUR',
  'energy_rate_per_kwh: 0.2',
  'gpu_hour_rates:',
  `  - { gpu_model: ${H100}, rate_per_gpu_hour: 4, effective_from: 2020-01-01, effective_to: "${new Date(CHANGE).toISOString()}" }`,
  `  - { gpu_model: ${H100}, rate_per_gpu_hour: 3, effective_from: "${new Date(CHANGE).toISOString()}" }`,
  `  - { gpu_model: ${L40S}, rate_per_gpu_hour: 1.5, effective_from: 2020-01-01 }`,
  '',
].join('\n');

/** The pods, each finished: [namespace, name, submitter, node, GPUs, started, finished]. */
const PODS: [string, string, string, string, number, number, number][] = [
  // 10 GPU-hours at 4: 40, of which 1 idle GPU-hour (4), and 5 kWh (1.00).
  ['llm', 'train-a', 'alice', 'h100', 2, monthStart + 2 * DAY, monthStart + 2 * DAY + 5 * HOUR],
  // Began an hour before the month: only its 2 hours inside it, 4 GPU-hours at 4: 16.
  ['llm', 'edge', 'alice', 'h100', 2, monthStart - HOUR, monthStart + 2 * HOUR],
  // Across the change: 2 GPU-hours at 4 and 3 at 3: 17.
  ['llm', 'train-b', 'bob', 'h100', 1, CHANGE - 2 * HOUR, CHANGE + 3 * HOUR],
  // 4 GPU-hours at 1.5: 6.
  ['vision', 'eval', 'carol', 'l40s', 1, monthStart + 5 * DAY, monthStart + 5 * DAY + 4 * HOUR],
];

/** A node of an archived cluster: 16 GPU-hours over 2 hours at 4, 6 of them held; 8 over an hour at 3, none held. */
function fleetHours(): FleetHourRow[] {
  const row = (hour: number, allocatedMs: number): FleetHourRow => ({
    clusterId: 'gpu-archive', node: 'old-1', hour, organizationId: 'acme', gpuModel: H100, instanceType: 'p5.48xlarge',
    capacityType: null, capacityMs: 8 * HOUR, unavailableMs: 0, allocatedMs, idleMs: 0,
  });
  return [row(monthStart + DAY, 3 * HOUR), row(monthStart + DAY + HOUR, 3 * HOUR), row(CHANGE + 5 * HOUR, 0)];
}

const cents = (value: number) => Math.round(value * 100);
const sum = (rows: readonly JsonBody[], field: string) => rows.reduce((total, row) => total + cents(row[field] ?? 0), 0);

describe('GET /v1/chargeback, live: the month\'s statement', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let location: TestIndexLocation;
  let sim: SimCluster;
  let t: TestService;
  let validate: (body: unknown) => boolean;

  const node = (name: string, instanceType: string, product: string): KubeObject => {
    const base = aGpuNode(name, instanceType);
    return { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, 'nvidia.com/gpu.product': product } } };
  };
  const statement = async (query = '') => {
    const res = await t.get(`/v1/chargeback?month=${MONTH}${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(validate(res.body), JSON.stringify(res.body)).to.equal(true);
    return res.body.data as JsonBody;
  };

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace(NAMESPACE));
    for (const team of ['llm', 'vision']) store.create('namespaces', aNamespace(team, { 'gpucap.io/organization': 'acme' }));
    store.create('nodes', node('h100', 'p5.48xlarge', H100));
    store.create('nodes', node('l40s', 'g6e.12xlarge', L40S));
    store.create('configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'capacity-acme', namespace: NAMESPACE, labels: { 'gpucap.io/capacity': 'true' } },
      data: { 'capacity.yaml': capacityYaml({ visionNamespaces: ['vision'] }) },
    });
    for (const [namespace, name, submitter, host, gpus, startedAt, finishedAt] of PODS) {
      const pod = aGpuPod(namespace, name, { gpus, node: host, labels: { 'gpucap.io/submitted-by': submitter } });
      const created = store.create('pods', { ...pod, metadata: { ...pod.metadata, creationTimestamp: new Date(startedAt - 60_000).toISOString() } });
      store.patchStatus('pods', created.metadata, finished(startedAt, finishedAt, 0));
    }
    location = await testIndexLocation(temp.path);
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      index: location,
      env: {
        GPUCAP_HOME_CLUSTER_ENABLED: 'true',
        GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'true',
        GPUCAP_KUBECONFIG: sim.kubeconfigPath,
        GPUCAP_NAMESPACE: NAMESPACE,
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
    const doc = (await t.get('/v1/openapi.json', { as: null })).body;
    const ajv = createAjv('forResponses');
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema as object, `doc#/components/schemas/${name}`);
    const schema = doc.paths['/v1/chargeback'].get.responses['200'].content['application/json'].schema;
    validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('#/components', 'doc#/components')));

    const trainA = await waitFor(async () => {
      const list = await t.get('/v1/workloads?limit=100');
      const workloads = (list.body?.data?.workloads ?? []) as { workload_id: string; name: string }[];
      return workloads.length === PODS.length ? workloads.find((w) => w.name === 'train-a')?.workload_id : undefined;
    }, { what: 'the pods indexed', timeoutMs: 15_000 });
    // Its 36,000 GPU-seconds: 3,600 idle, and 5 kWh (5 × 36,000,000 dJ).
    await saveUsage(location, trainA, usageOf({ utilSeconds: 36_000, idleSeconds: 3_600, powerSeconds: 36_000, energyDj: 180_000_000 }), PODS[0]?.[5] ?? 0);
    await t.service.store.writeFleetLedger({ clusterId: 'gpu-archive', expectedMark: null, to: CHANGE + 6 * HOUR, hours: fleetHours() });
    await waitFor(async () => ((await t.get(`/v1/chargeback?month=${MONTH}`)).body?.data?.total?.gpu_hours === 23 ? true : undefined), {
      what: 'the month\'s GPU time', timeoutMs: 10_000,
    });
  });

  after(async () => {
    await t?.stop();
    await location?.remove();
    await sim?.close();
    temp?.remove();
  });

  it('gives the GPU-hours, idle hours and energy without prices, and every money field null', async () => {
    const data = await statement();
    expect(data).to.include({ organization_id: 'acme', month: MONTH, complete: true, currency: null, group_by: null, share_idle: false });
    expect(data.from).to.equal(new Date(monthStart).toISOString());
    expect(data.to).to.equal(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1)).toISOString());
    expect(data.rows.map((r: JsonBody) => [r.initiative_id, r.key, r.gpu_hours, r.idle_gpu_hours, r.energy_kwh])).to.deep.equal([
      ['llm', null, 19, 1, 5],
      ['vision', null, 4, 0, 0],
    ]);
    for (const row of data.rows) for (const field of MONEY) expect(row[field], field).to.equal(null);
    expect(data.idle).to.deep.equal({ gpu_hours: 1, cost: null });
    expect(data.unallocated).to.deep.equal({ gpu_hours: 18, cost: null, shared: false });
    expect(data.total).to.deep.equal({
      gpu_hours: 23, cost: null, energy_kwh: 5, energy_cost: null, idle_gpu_hours: 1, idle_cost: null,
      unallocated_gpu_hours: 18, unallocated_cost: null, total_cost: null,
    });
    expect(data.unpriced_gpu_hours).to.equal(23);
    expect(data.rounding).to.match(/^No prices/);
  });

  it('prices each team\'s GPU time at the rates in force when it was used, idle and energy included', async () => {
    sim.api.store.create('configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'prices-acme', namespace: NAMESPACE, labels: { 'gpucap.io/prices': 'true' } },
      data: { 'prices.yaml': PRICES },
    });
    await waitFor(async () => ((await t.get(`/v1/chargeback?month=${MONTH}`)).body?.data?.currency === 'EUR' ? true : undefined), {
      what: 'the prices in force', timeoutMs: 10_000,
    });
    const data = await statement();
    expect(data.rows).to.deep.equal([
      {
        initiative_id: 'llm', key: null, gpu_hours: 19, cost: 73, energy_kwh: 5, energy_cost: 1, idle_gpu_hours: 1, idle_cost: 4,
        shared_unallocated_cost: 0, total_cost: 74,
      },
      {
        initiative_id: 'vision', key: null, gpu_hours: 4, cost: 6, energy_kwh: 0, energy_cost: 0, idle_gpu_hours: 0, idle_cost: 0,
        shared_unallocated_cost: 0, total_cost: 6,
      },
    ]);
    expect(data.idle).to.deep.equal({ gpu_hours: 1, cost: 4 });
    // 10 GPU-hours at 4 and 8 at 3.
    expect(data.unallocated).to.deep.equal({ gpu_hours: 18, cost: 64, shared: false });
    expect(data.total).to.deep.equal({
      gpu_hours: 23, cost: 79, energy_kwh: 5, energy_cost: 1, idle_gpu_hours: 1, idle_cost: 4,
      unallocated_gpu_hours: 18, unallocated_cost: 64, total_cost: 144,
    });
    expect(data.unpriced_gpu_hours).to.equal(0);
    expect(data.rounding).to.contain('largest remainder');
  });

  it('splits a pod across a price change, and its team\'s rows by submitter add up to the team', async () => {
    const data = await statement('&group_by=submitted_by');
    expect(data.group_by).to.equal('submitted_by');
    expect(data.rows.map((r: JsonBody) => [r.initiative_id, r.key, r.gpu_hours, r.cost, r.total_cost])).to.deep.equal([
      ['llm', 'alice', 14, 56, 57],
      ['llm', 'bob', 5, 17, 17],
      ['vision', 'carol', 4, 6, 6],
    ]);
    const team = (await statement()).rows.find((r: JsonBody) => r.initiative_id === 'llm');
    const llm = data.rows.filter((r: JsonBody) => r.initiative_id === 'llm');
    for (const field of ['gpu_hours', 'idle_gpu_hours', 'energy_kwh', ...MONEY]) expect(sum(llm, field), field).to.equal(cents(team[field]));
  });

  it('groups by pool and by GPU model, the GPU time outside every pool under null', async () => {
    const pools = await statement('&group_by=pool_id');
    expect(pools.rows.map((r: JsonBody) => [r.initiative_id, r.key, r.cost])).to.deep.equal([['llm', 'h100', 73], ['vision', null, 6]]);
    const models = await statement('&group_by=gpu_model');
    expect(models.rows.map((r: JsonBody) => [r.initiative_id, r.key])).to.deep.equal([['llm', H100], ['vision', L40S]]);
  });

  it('spreads the unallocated cost over the rows in proportion to their cost with share_idle, the total unchanged', async () => {
    const data = await statement('&share_idle=true');
    expect(data.share_idle).to.equal(true);
    expect(data.unallocated).to.deep.equal({ gpu_hours: 18, cost: 64, shared: true });
    // 64 × 73/79 = 59.1392… and 64 × 6/79 = 4.8607…
    expect(data.rows.map((r: JsonBody) => [r.initiative_id, r.shared_unallocated_cost, r.total_cost])).to.deep.equal([
      ['llm', 59.14, 133.14],
      ['vision', 4.86, 10.86],
    ]);
    expect(data.total.total_cost).to.equal(144);
    expect(sum(data.rows, 'total_cost')).to.equal(cents(data.total.total_cost));
    expect(sum(data.rows, 'shared_unallocated_cost')).to.equal(cents(data.unallocated.cost));
  });

  it('answers CSV whose lines add up to the total line to the cent, as an attachment named after the month', async () => {
    for (const query of ['', '&share_idle=true', '&group_by=submitted_by']) {
      const res = await t.getText(`/v1/chargeback?month=${MONTH}${query}`, { headers: { Accept: 'text/csv' } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/csv/);
      expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="chargeback-acme-${MONTH}.csv"`);
      const [header, ...lines] = res.text.trimEnd().split('\r\n').map((line) => line.split(','));
      const records = lines.map((line) => Object.fromEntries((header ?? []).map((name, i) => [name, line[i] === '' ? null : line[i]])));
      expect(records.map((r) => r.line?.split(' ')[0])).to.deep.equal([...records.slice(0, -3).map(() => 'row'), 'idle', 'unallocated', 'total']);
      const rows = records.filter((r) => r.line === 'row');
      const total = records.at(-1) as JsonBody;
      const unallocated = records.at(-2) as JsonBody;
      const number = (v: string | null) => Number(v ?? 0);
      for (const field of ['cost', 'energy_cost', 'idle_cost']) {
        expect(rows.reduce((s, r) => s + cents(number(r[field] ?? null)), 0), `${query} ${field}`).to.equal(cents(number(total[field])));
      }
      expect(rows.reduce((s, r) => s + cents(number(r.total_cost ?? null)), 0) + cents(number(unallocated.total_cost)), query)
        .to.equal(cents(number(total.total_cost)));
      expect(cents(number(total.total_cost))).to.equal(14_400);
      expect(records.at(-3)).to.include({ idle_gpu_hours: '1', idle_cost: '4' });
    }
  });

  it('bills the current month up to now, not complete', async () => {
    const current = new Date().toISOString().slice(0, 7);
    const res = await t.get(`/v1/chargeback?month=${current}`);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ month: current, complete: false });
    expect(Date.parse(res.body.data.to)).to.be.within(Date.now() - 10_000, Date.now());
  });

  it('refuses every role but ORG_ADMIN', async () => {
    for (const caller of [t.callers.member, t.callers.lead]) {
      const res = await t.get(`/v1/chargeback?month=${MONTH}`, { as: caller });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
    }
  });

  it('refuses a malformed, missing or future month, naming month', async () => {
    const next = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
    for (const query of ['?month=2026-13', '?month=2026-1', `?month=${next}`, '', '?month=']) {
      const res = await t.get(`/v1/chargeback${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: JsonBody) => d.field), query).to.deep.equal(['month']);
    }
  });
});
