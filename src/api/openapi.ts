// /v1/openapi.json, generated from the endpoint declarations and their schemas (OpenAPI 3.1, whose
// Schema Object is JSON Schema 2020-12, so TypeBox schemas go in as they are).
import type { TObject, TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import type { Endpoint } from './endpoint.js';
import { ErrorBody, MetricSummary } from './schemas/responses.js';

const COMMON_AUTH_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'];

/**
 * TypeBox keeps its own bookkeeping under symbols, which JSON.stringify drops; `$id`s are dropped too
 * because inline schemas are not components (only `$ref`s name those).
 */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value))) as Record<string, unknown>;
}

/** Component refs: `$id`-named schemas become `#/components/schemas/<id>`. */
function withRefs(schema: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"([A-Za-z]+)"/g, '"$ref":"#/components/schemas/$1"')) as Record<string, unknown>;
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
    params.push({ name, in: 'query', required: required.has(name) && rest.default === undefined, ...(description ? { description } : {}), schema: rest });
  }
  if (endpoint.authenticated) {
    params.push(
      { name: 'X-Organization-Id', in: 'header', required: true, description: 'The caller\'s organization; must match the credential.', schema: { type: 'string' } },
    );
  }
  params.push({
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Echoed in request_id and the X-Request-Id response header when it is at most 128 characters of [A-Za-z0-9._:-]; otherwise one is generated.',
    schema: { type: 'string' },
  });
  return params;
}

function errorResponses(endpoint: Endpoint) {
  const codes = new Set<ErrorCode>(endpoint.authenticated ? [...COMMON_AUTH_ERRORS, ...endpoint.errors] : endpoint.errors);
  codes.add('METHOD_NOT_ALLOWED');
  const byStatus: Record<string, unknown> = {};
  for (const code of codes) {
    const status = String(ERROR_STATUS[code]);
    const existing = byStatus[status] as { description: string } | undefined;
    byStatus[status] = {
      description: existing ? `${existing.description}, ${code}` : code,
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
      responses[String(status)] = { description: status === 200 ? 'Success' : `Success body with status ${status}`, content: { 'application/json': { schema: withRefs(plain(endpoint.response)) } } };
    }
    Object.assign(responses, errorResponses(endpoint));
    paths[endpoint.path] = {
      get: {
        operationId: endpoint.operationId,
        summary: endpoint.summary,
        description: endpoint.description,
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
      description: 'GPU workloads, GPU metrics and GPU-hour budgets of an organization, read from live Kubernetes state. See docs/api.md.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A JWT from the identity provider, or an API token (gca_…).' } },
      schemas: { ErrorBody: plain(ErrorBody), MetricSummary: plain(MetricSummary) },
    },
  };
}
