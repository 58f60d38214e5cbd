// /v1/openapi.json is a valid OpenAPI 3.1 document that describes exactly what the server answers.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { createAjv } from '../../src/api/schemas/ajv.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const EXPECTED_PATHS = [
  '/v1/health',
  '/v1/workloads',
  '/v1/workloads/stats',
  '/v1/workloads/metrics',
  '/v1/workloads/{workload_id}',
  '/v1/workloads/{workload_id}/metrics',
  '/v1/capacity',
  '/v1/chargeback',
  '/v1/fleet',
  '/v1/fleet/nodes',
];

describe('OpenAPI document', () => {
  let t: TestService;
  let doc: JsonBody;
  before(async () => {
    t = await startTestService();
    doc = (await t.get('/v1/openapi.json', { as: null })).body;
  });
  after(() => t.stop());

  it('is served without credentials and passes an OpenAPI 3.1 validator', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.valid, JSON.stringify(result.errors, null, 2)).to.equal(true);
  });

  it('describes every endpoint of the seed, each as GET', () => {
    expect(Object.keys(doc.paths)).to.have.members(EXPECTED_PATHS);
    for (const path of EXPECTED_PATHS) expect(Object.keys(doc.paths[path]), path).to.deep.equal(['get']);
  });

  it('lists the query parameters the server accepts, with their limits and defaults', () => {
    const list = doc.paths['/v1/workloads'].get.parameters;
    const limit = list.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).to.include({ minimum: 1, maximum: 100, default: 20 });
    expect(list.map((p: { name: string }) => p.name)).to.include.members([
      'organization_id', 'initiative_id', 'status', 'submitted_by', 'is_managed', 'start_date', 'end_date', 'limit', 'next_token', 'X-Organization-Id',
    ]);
    const ranking = doc.paths['/v1/workloads/metrics'].get.parameters;
    expect(ranking.find((p: { name: string }) => p.name === 'limit').schema).to.include({ default: 10 });
  });

  it('marks health as needing no credentials and the rest as bearer-protected', () => {
    expect(doc.paths['/v1/health'].get.security).to.deep.equal([]);
    expect(doc.security).to.deep.equal([{ bearer: [] }]);
    expect(doc.paths['/v1/capacity'].get.responses).to.have.keys('200', '400', '401', '403', '405', '408', '429', '431', '500', '503');
  });

  it('declares the headers the server sends with each status', () => {
    const responses = doc.paths['/v1/workloads'].get.responses;
    // The list also answers CSV, with its download name and counts.
    // Authenticated answers, errors included, are no-store and vary by credential and organization.
    const scoped = ['X-Request-Id', 'Cache-Control', 'Vary'];
    expect(responses['200'].headers).to.have.keys(...scoped, 'Content-Disposition', 'X-Total-Count', 'X-Next-Token');
    expect(responses['200'].headers['Cache-Control'].schema).to.deep.equal({ type: 'string', const: 'no-store' });
    expect(doc.paths['/v1/workloads/{workload_id}'].get.responses['200'].headers).to.have.keys(...scoped);
    const csvPaths = EXPECTED_PATHS.filter((path) => doc.paths[path].get.responses['200'].content['text/csv'] !== undefined);
    expect(csvPaths).to.deep.equal(['/v1/workloads', '/v1/workloads/stats', '/v1/capacity', '/v1/chargeback', '/v1/fleet', '/v1/fleet/nodes']);
    expect(responses['400'].headers).to.have.keys(...scoped);
    expect(responses['401'].headers).to.have.keys(...scoped, 'WWW-Authenticate');
    expect(responses['405'].headers).to.have.keys(...scoped, 'Allow');
    expect(responses['429'].headers).to.have.keys(...scoped, 'Retry-After');
    expect(responses['503'].headers).to.have.keys(...scoped, 'Retry-After');
    // Health needs no credentials but still refuses unknown parameters; its answers are the same for everyone.
    expect(doc.paths['/v1/health'].get.responses).to.have.keys('200', '400', '405', '408', '431', '503');
    expect(doc.paths['/v1/health'].get.responses['200'].headers).to.have.keys('X-Request-Id');
    expect(doc.paths['/v1/health'].get.responses['431'].description).to.equal('REQUEST_TOO_LARGE');
    expect(doc.components.schemas.ErrorBody.properties.error.properties.code.enum).to.include.members(['BAD_REQUEST', 'REQUEST_TIMEOUT', 'REQUEST_TOO_LARGE']);
  });

  it('states the shared rules (scope, organization header, unknown parameters) on authenticated endpoints', () => {
    for (const path of EXPECTED_PATHS.filter((p) => p !== '/v1/health')) {
      const description: string = doc.paths[path].get.description;
      expect(description, path).to.contain('X-Organization-Id').and.contain('TEAM_LEAD and MEMBER only their initiatives').and.contain('Unknown or repeated query parameters');
    }
  });

  it('makes an empty or malformed date invalid by the document alone, as the service refuses it', async () => {
    // JSON Schema 2020-12 makes `format` an annotation: a validator may ignore it, so each branch of
    // start_date and end_date must refuse "" by its pattern. This one ignores formats, as it may.
    const annotationOnly = new Ajv2020({ strict: false, validateFormats: false });
    const dateParameters = (path: string) => (doc.paths[path].get.parameters as JsonBody[]).filter((p) => p.name === 'start_date' || p.name === 'end_date');
    for (const path of ['/v1/workloads', '/v1/workloads/stats']) {
      const parameters = dateParameters(path);
      expect(parameters.map((p) => p.name), path).to.deep.equal(['start_date', 'end_date']);
      for (const parameter of parameters) {
        for (const branch of parameter.schema.anyOf as JsonBody[]) expect(branch.pattern, `${path} ${parameter.name} ${branch.format}`).to.be.a('string');
        const valid = annotationOnly.compile(parameter.schema);
        for (const value of ['', ' ', 'yesterday', '2026-11', '2026-11-01T10:00Z', '2026-11-01 10:00:00Z']) {
          expect(valid(value), `${path} ${parameter.name}=${JSON.stringify(value)} by the document`).to.equal(false);
        }
        for (const value of ['2026-11-01', '2026-11-01T09:30:00Z', '2026-11-01T11:30:00.250+02:00']) expect(valid(value), value).to.equal(true);
      }
    }
    for (const query of ['/v1/workloads?start_date=', '/v1/workloads?end_date=', '/v1/workloads/stats?time_range=custom&start_date=', '/v1/workloads/stats?time_range=custom&start_date=2026-11-01&end_date=']) {
      const res = await t.get(query);
      expect(res.status, query).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const field = query.endsWith('end_date=') ? 'end_date' : 'start_date';
      expect(res.body.error.details.map((d: JsonBody) => d.field), query).to.deep.equal([field]);
    }
  });

  it('has response schemas that the real responses satisfy', async () => {
    const w = aWorkload({ workloadId: 'd0000000-0000-4000-8000-000000000001' });
    await t.service.store.upsertWorkloads([w]);
    await t.service.store.upsertPodIntervals([aPodInterval(w)]);
    const ajv = createAjv('forResponses');
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema as object, `doc#/components/schemas/${name}`);
    const check = async (path: string, docPath: string) => {
      const res = await t.get(path);
      const schema = JSON.parse(JSON.stringify(doc.paths[docPath].get.responses['200'].content['application/json'].schema).replaceAll('#/components', 'doc#/components'));
      const validate = ajv.compile(schema);
      expect(validate(res.body), `${path}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    };
    await check('/v1/workloads', '/v1/workloads');
    await check(`/v1/workloads/${w.workloadId}`, '/v1/workloads/{workload_id}');
    await check(`/v1/workloads/${w.workloadId}/metrics`, '/v1/workloads/{workload_id}/metrics');
    await check(`/v1/workloads/${w.workloadId}/metrics?percentiles=50,95,99`, '/v1/workloads/{workload_id}/metrics');
    await check('/v1/workloads/stats?group_by=submitted_by', '/v1/workloads/stats');
    await check('/v1/workloads/metrics?sort_by=gpu_hours', '/v1/workloads/metrics');
    await check('/v1/capacity', '/v1/capacity');
    await check('/v1/fleet?group_by=gpu_model', '/v1/fleet');
    await check('/v1/fleet/nodes', '/v1/fleet/nodes');
  });

  it('types as nullable only the fields docs/api.md names, each as type: [T, "null"], and never a plain string', () => {
    const nullable: string[] = [];
    const walk = (schema: JsonBody, at: string): void => {
      if (schema === null || typeof schema !== 'object') return;
      if (Array.isArray(schema.type) && schema.type.includes('null')) nullable.push(`${at} ${schema.type.join('|')}`);
      expect(schema.anyOf?.some((s: JsonBody) => s.type === 'null') ?? false, `${at} uses anyOf with null`).to.equal(false);
      for (const [key, value] of Object.entries(schema.properties ?? {})) walk(value, `${at}.${key}`);
      if (schema.items) walk(schema.items, `${at}[]`);
    };
    for (const [path, item] of Object.entries(doc.paths)) walk((item as JsonBody).get.responses['200'].content['application/json'].schema, path);
    walk(doc.components.schemas.MetricSummary, 'MetricSummary');
    expect(nullable.sort()).to.deep.equal(
      [
        '/v1/capacity.data.initiatives[].projected_exhaustion_at string|null',
        '/v1/fleet/nodes.data.nodes[].gpu_model string|null',
        ...['summary', 'grouped[]', 'series[]', 'series[].grouped[]'].flatMap((at) =>
          ['allocation_rate', 'utilization_rate'].map((f) => `/v1/fleet.data.${at}.${f} number|null`)),
        '/v1/fleet/nodes.data.nodes[].pool_id string|null',
        '/v1/capacity.data.initiatives[].projected_used_gpu_hours_at_period_end number|null',
        '/v1/capacity.data.pools[].projected_exhaustion_at string|null',
        '/v1/capacity.data.pools[].capacity_gpu_hours_in_period number|null',
        '/v1/capacity.data.pools[].projected_used_gpu_hours_at_period_end number|null',
        '/v1/capacity.data.summary.projected_exhaustion_at string|null',
        '/v1/capacity.data.summary.projected_used_gpu_hours_at_period_end number|null',
        '/v1/workloads.data.workloads[].started_at string|null',
        '/v1/workloads/metrics.data.scope_average.gpu_efficiency number|null',
        '/v1/workloads/metrics.data.scope_average.gpu_hours number|null',
        '/v1/workloads/metrics.data.scope_average.idle_gpu_hours number|null',
        '/v1/workloads/metrics.data.scope_average.gpu_utilization number|null',
        '/v1/workloads/metrics.data.scope_average.memory_utilization number|null',
        '/v1/workloads/metrics.data.scope_average.power_usage number|null',
        '/v1/workloads/metrics.data.scope_average.queue_seconds number|null',
        '/v1/workloads/stats.data.grouped[].failure_reason string|null',
        '/v1/workloads/stats.data.series[].failure_reason string|null',
        '/v1/workloads/stats.data.grouped[].gpu_model string|null',
        '/v1/workloads/stats.data.series[].gpu_model string|null',
        '/v1/workloads/{workload_id}.data.failure_reason string|null',
        '/v1/workloads/{workload_id}.data.gpu_sharing string|null',
        '/v1/workloads/{workload_id}.data.gpu_model string|null',
        '/v1/workloads/{workload_id}.data.idle_gpu_hours number|null',
        '/v1/workloads/{workload_id}.data.gpu_efficiency number|null',
        '/v1/workloads/{workload_id}.data.energy_kwh number|null',
        ...['grouped[]', 'series[]'].flatMap((at) => ['idle_gpu_hours', 'gpu_efficiency', 'energy_kwh'].map((f) => `/v1/workloads/stats.data.${at}.${f} number|null`)),
        ...['total_idle_gpu_hours', 'gpu_efficiency', 'total_energy_kwh'].map((f) => `/v1/workloads/stats.data.summary.${f} number|null`),
        // Present only with `queue_percentiles`; null when the summary counts no workload (a group always counts one).
        ...[50, 75, 90, 95, 99].map((p) => `/v1/workloads/stats.data.summary.p${p}_queue_seconds integer|null`),
        '/v1/capacity.data.initiatives[].allocated_cost number|null',
        '/v1/capacity.data.initiatives[].projected_cost_exhaustion_at string|null',
        '/v1/capacity.data.initiatives[].projected_used_cost_at_period_end number|null',
        '/v1/capacity.data.initiatives[].remaining_cost number|null',
        '/v1/capacity.data.pools[].allocated_cost number|null',
        '/v1/capacity.data.pools[].projected_cost_exhaustion_at string|null',
        '/v1/capacity.data.pools[].projected_used_cost_at_period_end number|null',
        '/v1/capacity.data.pools[].remaining_cost number|null',
        '/v1/capacity.data.summary.projected_cost_exhaustion_at string|null',
        '/v1/capacity.data.summary.projected_used_cost_at_period_end number|null',
        '/v1/capacity.data.summary.total_allocated_cost number|null',
        '/v1/capacity.data.summary.total_remaining_cost number|null',
        // Cost beside the statistics and the cost ranking's average: present with prices only.
        '/v1/workloads/metrics.data.scope_average.cost number|null',
        ...['grouped[]', 'series[]'].flatMap((at) => ['cost', 'idle_cost'].map((f) => `/v1/workloads/stats.data.${at}.${f} number|null`)),
        ...['total_cost', 'total_idle_cost'].map((f) => `/v1/workloads/stats.data.summary.${f} number|null`),
        // The statement's money, null without prices (docs/api.md, "Chargeback").
        '/v1/chargeback.data.currency string|null',
        '/v1/chargeback.data.group_by string|null',
        '/v1/chargeback.data.rows[].key string|null',
        ...['cost', 'energy_cost', 'idle_cost', 'shared_unallocated_cost', 'total_cost'].map((f) => `/v1/chargeback.data.rows[].${f} number|null`),
        ...['idle.cost', 'unallocated.cost'].map((f) => `/v1/chargeback.data.${f} number|null`),
        ...['cost', 'energy_cost', 'idle_cost', 'unallocated_cost', 'total_cost'].map((f) => `/v1/chargeback.data.total.${f} number|null`),
        '/v1/workloads/{workload_id}.data.completed_at string|null',
        '/v1/workloads/{workload_id}.data.cost number|null',
        '/v1/workloads/{workload_id}.data.energy_cost number|null',
        '/v1/workloads/{workload_id}.data.exit_code integer|null',
        '/v1/workloads/{workload_id}.data.started_at string|null',
        'MetricSummary.avg number|null',
        'MetricSummary.current number|null',
        'MetricSummary.max number|null',
        'MetricSummary.min number|null',
        // Present only with `percentiles`; null like the four above.
        'MetricSummary.p50 number|null',
        'MetricSummary.p75 number|null',
        'MetricSummary.p90 number|null',
        'MetricSummary.p95 number|null',
        'MetricSummary.p99 number|null',
      ].sort(),
    );
  });
});
