// /v1/openapi.json, generated from the endpoint declarations and their schemas (OpenAPI 3.1, whose
// Schema Object is JSON Schema 2020-12, so TypeBox schemas go in as they are).
import type { TObject, TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import type { Endpoint } from './endpoint.js';
import { PRIVATE_CACHE_CONTROL, PRIVATE_VARY } from './middleware/private-answers.js';
import { ErrorBody, MetricSummary } from './schemas/responses.js';

const COMMON_AUTH_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'];

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({ description, schema });
const REQUEST_ID_HEADER = header('The request id: the caller\'s X-Request-Id when it is safe, else a generated UUID; also in the body.');
/** What every answer of an authenticated endpoint carries, errors included (docs/api.md "Caching and paths"). */
const PRIVATE_HEADERS = {
  'Cache-Control': header(
    'The answer is the caller\'s own view of the organization: no cache may keep it.',
    { type: 'string', const: PRIVATE_CACHE_CONTROL },
  ),
  Vary: header(`Lists ${PRIVATE_VARY.join(', ')}, besides Accept on the CSV endpoints and Origin with CORS.`),
};
/** Headers each error status carries besides X-Request-Id. */
const ERROR_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': header('RFC 6750 Bearer challenge, with error="invalid_token" and a description when a token was given.') },
  405: { Allow: header('The methods the path accepts (GET, HEAD).') },
  429: { 'Retry-After': header('Seconds until the credential\'s bucket has a request again.', { type: 'integer', minimum: 1 }) },
  503: { 'Retry-After': header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 }) },
};

// `Accept: text/csv` (docs/api.md "CSV"). Errors stay JSON.
const CSV_CONTENT = {
  schema: {
    type: 'string',
    description: 'With `Accept: text/csv`: RFC 4180 records after a header row, ' +
      'the same scope and filters as the JSON. See docs/api.md "CSV".',
  },
};
const CSV_HEADERS = {
  'Content-Disposition': header('With text/csv: `attachment; filename="<what>-<organization>-<time>.csv"`.'),
  'X-Total-Count': header('With text/csv from /v1/workloads: total_count of the filters.', { type: 'integer', minimum: 0 }),
  'X-Next-Token': header('With text/csv from /v1/workloads and a limit: the next_token after the rows sent, when more match.'),
};

/** Rules every authenticated endpoint shares, appended to its description. */
const AUTHENTICATED_RULES =
  ' Needs `Authorization: Bearer` (JWT or API token) and `X-Organization-Id` equal to the credential\'s organization ' +
  '(missing: 400 VALIDATION_ERROR; another: 403 FORBIDDEN). Results cover the caller\'s scope: ORG_ADMIN sees the whole organization, ' +
  'TEAM_LEAD and MEMBER only their initiatives; an initiative_id outside them is 403 FORBIDDEN. ' +
  'Unknown or repeated query parameters are 400 VALIDATION_ERROR. 503 UNAVAILABLE ' +
  'while the index is synchronizing or the identity provider\'s keys cannot be fetched.';

/**
 * TypeBox keeps its own bookkeeping under symbols, which JSON.stringify drops; `$id`s are dropped too
 * because inline schemas are not components (only `$ref`s name those).
 */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value))) as Record<string, unknown>;
}

/** Component refs: `$id`-named schemas become `#/components/schemas/<id>`. */
function withRefs(schema: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema).replace(/"\$ref":"([A-Za-z]+)"/g, '"$ref":"#/components/schemas/$1"'),
  ) as Record<string, unknown>;
}

function parameters(endpoint: Endpoint) {
  const params: Record<string, unknown>[] = [];
  for (const [name, schema] of Object.entries(endpoint.pathParams ?? {})) {
    const { description, ...rest } = plain(schema);
    params.push({ name, in: 'path', required: true, description, schema: rest });
  }
  const query = endpoint.query as TObject;
  const required = new Set(query.required ?? []);
  for (const [name, schema] of Object.entries(query.properties)) {
    const { description, ...rest } = plain(schema);
    // Defaults make a property "required" for TypeBox's type, but a client may always omit it.
    params.push({
      name,
      in: 'query',
      required: required.has(name) && rest.default === undefined,
      ...(description ? { description } : {}),
      schema: rest,
    });
  }
  if (endpoint.authenticated) {
    params.push(
      {
        name: 'X-Organization-Id',
        in: 'header',
        required: true,
        description: 'The caller\'s organization; must match the credential.',
        schema: { type: 'string' },
      },
    );
  }
  params.push({
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Echoed in request_id and the X-Request-Id response header when it is ' +
      'at most 128 characters of [A-Za-z0-9._:-]; otherwise one is generated.',
    schema: { type: 'string' },
  });
  return params;
}

function errorResponses(endpoint: Endpoint) {
  const codes = new Set<ErrorCode>(endpoint.authenticated ? [...COMMON_AUTH_ERRORS, ...endpoint.errors] : endpoint.errors);
  codes.add('VALIDATION_ERROR'); // unknown query parameters, on every endpoint
  codes.add('METHOD_NOT_ALLOWED');
  // Answered by the HTTP parser before any endpoint runs (runtime/http-listener.ts), on every path.
  for (const code of ['BAD_REQUEST', 'REQUEST_TIMEOUT', 'REQUEST_TOO_LARGE'] as const) codes.add(code);
  const byStatus: Record<string, unknown> = {};
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    const existing = byStatus[status] as { description: string } | undefined;
    byStatus[status] = {
      description: existing ? `${existing.description}, ${code}` : code,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...(endpoint.authenticated ? PRIVATE_HEADERS : {}), ...ERROR_HEADERS[status] },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    };
  }
  return byStatus;
}

export function openApiDocument(endpoints: readonly Endpoint[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const responses: Record<string, unknown> = {};
    for (const status of endpoint.responseStatuses ?? [200]) {
      const csv = status === 200 && endpoint.csv !== undefined;
      responses[String(status)] = {
        description: status === 200 ? 'Success' : `Same body with status ${status}`,
        headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...(endpoint.authenticated ? PRIVATE_HEADERS : {}), ...(csv ? CSV_HEADERS : {}) },
        content: { 'application/json': { schema: withRefs(plain(endpoint.response)) }, ...(csv ? { 'text/csv': CSV_CONTENT } : {}) },
      };
    }
    Object.assign(responses, errorResponses(endpoint));
    paths[endpoint.path] = {
      get: {
        operationId: endpoint.operationId,
        summary: endpoint.summary,
        description: endpoint.authenticated ? endpoint.description + AUTHENTICATED_RULES : endpoint.description,
        ...(endpoint.authenticated ? {} : { security: [] }),
        parameters: parameters(endpoint),
        responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'gpu-capacity-api',
      version,
      description:
        'GPU workloads, GPU metrics and GPU-hour budgets of an organization, read from live Kubernetes state. ' +
        'All timestamps are UTC ISO 8601 with Z. Every response carries request_id and X-Request-Id. ' +
        'Errors: {"error": {"code", "message", "details": [{"location", "field", "message"}]}, "request_id"}. See docs/api.md.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A JWT from the identity provider, or an API token (gca_…).' },
      },
      schemas: { ErrorBody: plain(ErrorBody), MetricSummary: plain(MetricSummary) },
    },
  };
}
