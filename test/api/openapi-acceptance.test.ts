// The served /v1/openapi.json says exactly what the service accepts. For every operation, fast-check
// generates requests from the document's own parameter schemas (valid values, near misses and junk);
// an oracle built only from the document decides whether each is valid, and the service must agree:
// valid → not 400, invalid → 400 VALIDATION_ERROR naming a parameter. The oracle adds the rules the
// document states in words (cross-parameter rules, next_token issued by the service), nothing else.
import { expect } from 'chai';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: Schema;
}
interface Schema {
  type?: string | string[];
  enum?: string[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  anyOf?: Schema[];
  default?: unknown;
}
interface GeneratedRequest {
  path: string;
  query: Record<string, string>;
  pathValues: Record<string, string>;
}

const RUNS_PER_OPERATION = 250;
// Segments that would route elsewhere (/v1/workloads/stats) or be normalized away by the URL parser.
const ROUTED_SEGMENTS = new Set(['stats', 'metrics', '.', '..']);

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv, ['date', 'date-time']);

/** A query value as an OpenAPI client serializes it (form style): integers and booleans in plain text. */
function typed(value: string, schema: Schema): unknown {
  if (schema.type === 'integer') return /^-?\d+$/.test(value) ? Number(value) : value;
  if (schema.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

const instant = (text: string) => Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);

type Verdict = { accepted: true } | { accepted: false; parameter: string } | { forbidden: true };

/**
 * What the document says of the request, in the order the service checks (docs/api.md "Errors"):
 * each parameter by its schema and the required ones present (400); then the caller's scope, here an
 * organization_id other than the caller's (403); then the rules the descriptions state in words (400).
 */
function verdict(operationId: string, parameters: Parameter[], request: GeneratedRequest, now: number): Verdict {
  const bySchema = refusedBySchema(parameters, request);
  if (bySchema !== null) return { accepted: false, parameter: bySchema };
  const organization = request.query.organization_id;
  if (organization !== undefined && organization !== 'acme') return { forbidden: true };
  const byRule = refusedByRule(operationId, request, now);
  return byRule === null ? { accepted: true } : { accepted: false, parameter: byRule };
}

function refusedBySchema(parameters: Parameter[], request: GeneratedRequest): string | null {
  for (const parameter of parameters.filter((p) => p.in !== 'header')) {
    const raw = parameter.in === 'path' ? request.pathValues[parameter.name] : request.query[parameter.name];
    if (raw === undefined) {
      if (parameter.required) return parameter.name;
      continue;
    }
    if (!ajv.validate(parameter.schema, typed(raw, parameter.schema))) return parameter.name;
  }
  return null;
}

/** The span a custom statistics range may have at most: retention_days, whose default the test service keeps. */
const RETENTION_DAYS = 400;

const OPERATIONS = [
  'getHealth', 'listWorkloads', 'getWorkloadStatistics', 'rankWorkloadMetrics', 'getWorkload', 'getWorkloadMetrics', 'getCapacity',
  'getChargeback', 'getFleet', 'listFleetNodes',
];

function refusedByRule(operationId: string, request: GeneratedRequest, now: number): string | null {
  const { start_date: start, end_date: end, time_range: range, next_token: token } = request.query;
  // "metadata.next_token of the previous page": generated tokens were never issued.
  if (token !== undefined) return 'next_token';
  // "cost (an addition, with prices only)": the test service's organization has none.
  if (operationId === 'rankWorkloadMetrics' && request.query.sort_by === 'cost') return 'sort_by';
  // "not after the current month".
  if (operationId === 'getChargeback' && (request.query.month ?? '') > new Date(now).toISOString().slice(0, 7)) return 'month';
  if (operationId === 'listWorkloads' && start !== undefined && end !== undefined && instant(end) <= instant(start)) return 'end_date';
  if (operationId === 'getWorkloadStatistics' || operationId === 'getFleet') {
    if ((range ?? 'last_30_days') !== 'custom') return start !== undefined ? 'start_date' : end !== undefined ? 'end_date' : null;
    if (start === undefined) return 'start_date';
    if (end === undefined && instant(start) > now) return 'start_date';
    if ((end === undefined ? now + 1 : instant(end)) <= instant(start)) return 'end_date';
    // At most the retention (the test service's retention_days is the default, 400 days).
    if ((end === undefined ? now : instant(end)) - instant(start) > RETENTION_DAYS * 86_400_000) return 'start_date';
    if (operationId === 'getFleet' && tooManyFleetIntervals(request.query.interval, instant(start), end === undefined ? now + 1 : instant(end))) {
      return 'interval';
    }
  }
  return null;
}

/** The fleet's series over whole hours holds at most 744 hours, 1,000 days or 1,000 weeks (docs/api.md). */
function tooManyFleetIntervals(interval: string | undefined, start: number, end: number): boolean {
  if (interval === undefined) return false;
  const hour = 3_600_000;
  const from = Math.floor(start / hour) * hour;
  const to = Math.ceil(end / hour) * hour;
  const size = interval === 'hour' ? hour : interval === 'day' ? 24 * hour : 7 * 24 * hour;
  const number = (ms: number) => (interval === 'week' ? Math.floor((Math.floor(ms / (24 * hour)) + 3) / 7) : Math.floor(ms / size));
  return number(to - 1) - number(from) + 1 > (interval === 'hour' ? 744 : 1000);
}

/** Values drawn from a parameter's schema, and near misses of it: the oracle sorts them out. */
function valueFor(schema: Schema): fc.Arbitrary<string> {
  const junk = fc.oneof(
    fc.constantFrom('', 'x'.repeat(600)),
    fc.constantFrom(' ', '0', '-1', '1e1', '0x10', 'true', 'null', 'yes', '2026-02-30', '2026-11-01T10:00Z', '2026-11-01 10:00:00Z', 'a,b'),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
  const fromSchema: fc.Arbitrary<string>[] = [];
  if (schema.enum) fromSchema.push(fc.constantFrom(...schema.enum));
  if (schema.type === 'integer') fromSchema.push(fc.integer({ min: (schema.minimum ?? 0) - 5, max: (schema.maximum ?? 1000) + 5 }).map(String));
  if (schema.type === 'boolean') fromSchema.push(fc.constantFrom('true', 'false', 'TRUE', '1'));
  if (schema.pattern) fromSchema.push(fc.stringMatching(new RegExp(schema.pattern)));
  for (const branch of schema.anyOf ?? []) if (branch.pattern) fromSchema.push(fc.stringMatching(new RegExp(branch.pattern)));
  if (schema.anyOf) fromSchema.push(dateValues);
  if (schema.type === 'string' && !schema.enum && !schema.pattern && !schema.anyOf) fromSchema.push(fc.string({ minLength: 1, maxLength: 300 }));
  return fc.oneof({ arbitrary: fc.oneof(...fromSchema), weight: 3 }, { arbitrary: junk, weight: 1 });
}

/** Real instants around the test clock, in each form the document allows. */
const dateValues = fc
  .tuple(fc.integer({ min: Date.parse('2025-01-01T00:00:00Z'), max: Date.parse('2027-12-31T00:00:00Z') }), fc.constantFrom('Z', 'date', '+02:00', 'fraction'))
  .map(([ms, form]) => {
    const iso = new Date(ms).toISOString();
    if (form === 'date') return iso.slice(0, 10);
    if (form === 'fraction') return iso.replace(/\.\d{3}Z$/, '.123456Z');
    if (form === '+02:00') return `${new Date(ms + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    return `${iso.slice(0, 19)}Z`;
  });

function requests(path: string, parameters: Parameter[]): fc.Arbitrary<GeneratedRequest> {
  const query = parameters.filter((p) => p.in === 'query');
  const paths = parameters.filter((p) => p.in === 'path');
  // Each parameter left out more often than not, so that requests valid as a whole are common too.
  const maybe = (value: fc.Arbitrary<string>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: value, weight: 2 });
  const queryValues = fc
    .record(Object.fromEntries(query.map((p) => [p.name, maybe(p.name === 'organization_id' ? fc.oneof(fc.constant('acme'), valueFor(p.schema)) : valueFor(p.schema))])))
    .map((values) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)));
  const pathValues = fc.record(
    Object.fromEntries(paths.map((p) => [p.name, valueFor(p.schema).filter((v) => v !== '' && !ROUTED_SEGMENTS.has(v))])),
  );
  return fc.record({ query: queryValues, pathValues }).map(({ query: q, pathValues: pv }) => ({
    path,
    query: q as Record<string, string>,
    pathValues: pv as Record<string, string>,
  }));
}

function url(request: GeneratedRequest): string {
  const path = request.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(request.pathValues[name] ?? ''));
  const query = Object.entries(request.query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return query.length === 0 ? path : `${path}?${query.join('&')}`;
}

describe('OpenAPI document: accepted exactly when valid by it', function () {
  this.timeout(180_000);
  let t: TestService;
  let doc: JsonBody;
  before(async () => {
    t = await startTestService();
    doc = (await t.get('/v1/openapi.json', { as: null })).body;
  });
  after(() => t.stop());

  it('covers every operation of the document', () => {
    const operations = Object.values(doc.paths).map((item) => (item as { get: { operationId: string } }).get.operationId);
    expect(operations).to.have.members(OPERATIONS);
  });

  for (const operationId of OPERATIONS) {
    it(`${operationId}: every generated request valid by the document is accepted, every invalid one is a 400 naming a parameter`, async () => {
      const [path, item] = Object.entries(doc.paths).find(([, i]) => (i as { get: { operationId: string } }).get.operationId === operationId) as [string, { get: { parameters: Parameter[] } }];
      const parameters = item.get.parameters;
      const seen = { valid: 0, invalid: 0 };
      await fc.assert(
        fc.asyncProperty(requests(path, parameters), async (request) => {
          const expected = verdict(operationId, parameters, request, t.clock.now());
          const res = await t.get(url(request));
          const described = `${url(request)} → ${res.status} ${JSON.stringify(res.body?.error ?? '')}`;
          if ('forbidden' in expected) {
            seen.valid += 1;
            expect(res.status, described).to.equal(403);
          } else if (expected.accepted) {
            seen.valid += 1;
            expect(res.status, described).to.be.oneOf([200, 404]);
          } else {
            seen.invalid += 1;
            expect(res.status, `${described} (the document refuses ${expected.parameter})`).to.equal(400);
            expect(res.body.error.code).to.equal('VALIDATION_ERROR');
            expect(res.body.error.details.map((d: { field: string }) => d.field), described).to.not.be.empty;
          }
        }),
        { numRuns: operationId === 'getHealth' ? 5 : RUNS_PER_OPERATION, seed: Number(process.env.FC_SEED ?? 20261126) },
      );
      // Both sides of the equivalence were exercised, not only the easy one.
      if (operationId !== 'getHealth') expect(Math.min(seen.valid, seen.invalid), JSON.stringify(seen)).to.be.greaterThan(RUNS_PER_OPERATION / 20);
    });
  }
});
