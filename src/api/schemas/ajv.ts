// The one ajv setup of the HTTP edge. For queries, strings are coerced to the schema's types and
// defaults filled; `forResponses` checks a body as it is (coercion would rewrite a null into "").
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export function createAjv(mode: 'forQueries' | 'forResponses' = 'forQueries'): Ajv {
  const queries = mode === 'forQueries';
  const ajv = new Ajv({ allErrors: true, coerceTypes: queries, useDefaults: queries, strict: true, strictTypes: false });
  addFormats(ajv, ['date', 'date-time']);
  return ajv;
}
