// Checks a response body against the endpoint's declared schema (closed objects: no field missing,
// none extra), so "field for field against the seed" is asserted on every success test.
import type { TSchema } from '@sinclair/typebox';
import { expect } from 'chai';
import { createAjv } from '../../src/api/schemas/ajv.js';
import { MetricSummary } from '../../src/api/schemas/responses.js';

const ajv = createAjv('forResponses');
ajv.addSchema(MetricSummary);

export function expectShape(body: unknown, schema: TSchema): void {
  const validate = ajv.compile(schema);
  const ok = validate(body);
  expect(ok, `response does not match its schema: ${JSON.stringify(validate.errors)}\nbody: ${JSON.stringify(body)}`).to.equal(true);
}
