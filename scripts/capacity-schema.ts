// Generates docs/capacity.schema.json, the published JSON Schema (draft 2020-12) of `capacity.yaml`,
// from CapacityFileSchema (src/capacity/capacity-schema.ts), the schema the service validates with.
// Editors use it to check a file as it is written (yaml-language-server: `# yaml-language-server: $schema=…`).
//   npm run docs:capacity-schema            rewrite docs/capacity.schema.json
//   npm run docs:capacity-schema -- --check exit 1 when docs/capacity.schema.json is out of date
// test/capacity/capacity-file.test.ts fails when the file and the schema drift apart.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CapacityFileSchema } from '../src/capacity/capacity-schema.js';

export const CAPACITY_SCHEMA_PATH = fileURLToPath(new URL('../docs/capacity.schema.json', import.meta.url));
export const CAPACITY_SCHEMA_ID = 'https://gpucap.io/schemas/capacity.schema.json';

/** The whole of docs/capacity.schema.json. */
export function renderCapacitySchema(): string {
  // JSON.stringify drops TypeBox's symbol-keyed metadata; what remains is plain JSON Schema.
  const { title, description, ...rest } = JSON.parse(JSON.stringify(CapacityFileSchema)) as Record<string, unknown>;
  const document = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: CAPACITY_SCHEMA_ID, title, description, ...rest };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function main(argv: readonly string[]): void {
  const rendered = renderCapacitySchema();
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(CAPACITY_SCHEMA_PATH, 'utf8');
    } catch {
      // a missing file is out of date like any other
    }
    if (current !== rendered) {
      console.error(`${CAPACITY_SCHEMA_PATH} is out of date: run npm run docs:capacity-schema`);
      process.exit(1);
    }
    return;
  }
  writeFileSync(CAPACITY_SCHEMA_PATH, rendered);
  console.log(`Wrote ${CAPACITY_SCHEMA_PATH}`);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) main(process.argv.slice(2));
