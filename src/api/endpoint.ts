// An endpoint declared once: the router registers it and the OpenAPI document describes it from the
// same schemas, so the two cannot disagree.
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Clock } from '../domain/clock.js';
import type { ErrorCode } from '../domain/errors.js';
import type { BudgetSource, FleetSource, HealthSource, PriceSource, TelemetryReader, WorkloadIndex } from '../query/ports.js';
import type { ApiContext } from './context.js';
import type { CsvTable } from './csv/csv-table.js';

export interface ReadDeps {
  index: WorkloadIndex;
  telemetry: TelemetryReader;
  budgets: BudgetSource;
  /** Absent: no organization has prices, and no answer carries a cost. */
  prices?: PriceSource;
  fleet: FleetSource;
  health: HealthSource;
  clock: Clock;
  version: string;
}

export interface EndpointResult {
  status?: number;
  body: Record<string, unknown>;
}

export interface Endpoint<Q extends TObject = TObject> {
  operationId: string;
  /** OpenAPI-style path: `/v1/workloads/{workload_id}`. */
  path: string;
  summary: string;
  description: string;
  authenticated: boolean;
  query: Q;
  pathParams?: Record<string, TSchema & { pattern?: string; description?: string }>;
  /** Schema of the whole success body (envelope included). */
  response: TSchema;
  /** Statuses answered with `response` (default [200]); health also answers 503 with its own body. */
  responseStatuses?: number[];
  /** Error codes this endpoint can answer besides the ones every authenticated endpoint has. */
  errors: ErrorCode[];
  handle(request: EndpointRequest<Q>): Promise<EndpointResult>;
  /** The answer to `Accept: text/csv` (docs/api.md "CSV"); without it the endpoint answers JSON whatever the Accept. */
  csv?(request: EndpointRequest<Q>): Promise<CsvTable>;
}

export interface EndpointRequest<Q extends TObject = TObject> {
  ctx: ApiContext;
  query: Static<Q>;
  params: Record<string, string>;
  deps: ReadDeps;
}

export function defineEndpoint<Q extends TObject>(endpoint: Endpoint<Q>): Endpoint<Q> {
  return endpoint;
}

/** `/v1/workloads/{workload_id}` → `/v1/workloads/:workload_id` for @koa/router. */
export function routerPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}
