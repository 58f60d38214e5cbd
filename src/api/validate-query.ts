// Validates a query string against its endpoint's schema and turns ajv's errors into the contract's
// VALIDATION_ERROR details: one entry per problem, naming the parameter and saying what it must be.
import type { TObject, Static } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { validationError, type ErrorDetail } from '../domain/errors.js';
import { METRIC_NAMES } from '../domain/metrics.js';
import { PERCENTILES } from '../domain/percentiles.js';
import { createAjv } from './schemas/ajv.js';
import { METRIC_LIST_PATTERN, NEXT_TOKEN_PATTERN, PERCENTILE_LIST_PATTERN } from './schemas/query.js';

const ajv = createAjv();

export type QueryValidator<T extends TObject> = (query: Record<string, unknown>) => Static<T>;

export function queryValidator<T extends TObject>(schema: T): QueryValidator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  const properties = schema.properties as Properties;
  const integers = Object.keys(properties).filter((k) => properties[k]?.type === 'integer');
  return (query) => {
    const candidate: Record<string, unknown> = { ...query }; // ajv coerces in place; keep the caller's object intact
    // Number() would accept "0x10", "1e1", "+5" and " 5"; the contract promises plain decimals.
    const notDecimal = integers.filter((k) => typeof query[k] === 'string' && !/^-?\d+$/.test(query[k] as string));
    for (const k of notDecimal) candidate[k] = query[k] === '' ? '' : 'not-a-number';
    if (validate(candidate)) return candidate as Static<T>;
    const details = (validate.errors ?? []).map((e) => toDetail(e, query, properties));
    throw validationError(dedupe(details));
  };
}

type Properties = Record<string, { type?: string; minimum?: number; maximum?: number; pattern?: string; anyOf?: unknown[] }>;

const DATE_MESSAGE = 'must be an ISO 8601 date-time with offset (2026-11-01T09:30:00Z) or a date (2026-11-01)';
const PATTERN_MESSAGES: Record<string, string> = {
  [METRIC_LIST_PATTERN]: `must be a comma-separated list of ${METRIC_NAMES.join(', ')}`,
  [NEXT_TOKEN_PATTERN]: 'must be the metadata.next_token of a previous page',
  [PERCENTILE_LIST_PATTERN]: `must be a comma-separated list of ${PERCENTILES.join(', ')} in ascending order, each at most once`,
};

function toDetail(error: ErrorObject, query: Record<string, unknown>, properties: Properties): ErrorDetail {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const field = String(params.additionalProperty);
    const known = Object.keys(properties);
    return { location: 'query', field, message: `is not a parameter of this endpoint (known: ${known.join(', ') || 'none'})` };
  }
  const field = error.instancePath.replace(/^\//, '') || String(params.missingProperty ?? '');
  const value = query[field];
  return { location: 'query', field, message: Array.isArray(value) ? 'must be given once' : describe(error, value, properties[field]) };
}

function describe(error: ErrorObject, value: unknown, property: Properties[string] | undefined): string {
  const params = error.params as Record<string, unknown>;
  const got = typeof value === 'string' ? `, got "${value.length > 60 ? `${value.slice(0, 60)}…` : value}"` : '';
  // A date fails inside its anyOf (pattern, format) and then the anyOf itself: one message for all.
  if (property?.anyOf !== undefined) return `${DATE_MESSAGE}${got}`;
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).join(', ')}${got}`;
    case 'type':
      return params.type === 'integer'
        ? `must be an integer${got}`
        : params.type === 'boolean' ? `must be true or false${got}` : `must be a ${String(params.type)}${got}`;
    case 'minimum':
    case 'maximum':
      return `must be between ${property?.minimum} and ${property?.maximum}${got}`;
    case 'pattern':
      return `${PATTERN_MESSAGES[String(params.pattern)] ?? `must match ${String(params.pattern)}`}${got}`;
    case 'minLength':
      return 'must not be empty';
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    default:
      return error.message ?? 'is invalid';
  }
}

function dedupe(details: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => {
    const key = `${d.field}\u0000${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
