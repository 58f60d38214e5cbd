// Generates docs/capacity.schema.json and docs/prices.schema.json, the published JSON Schemas (draft
// 2020-12) of `capacity.yaml` and `prices.yaml`, from CapacityFileSchema (src/capacity/capacity-schema.ts)
// and PricesFileSchema (src/capacity/prices-schema.ts), the schemas the service validates with.
// Editors use it to check a file as it is written (yaml-language-server: `# yaml-language-server: $schema=…`).
//   npm run docs:capacity-schema            rewrite both files
//   npm run docs:capacity-schema -- --check exit 1 when either is out of date
// test/capacity/capacity-file.test.ts and test/pricing/prices-file.test.ts fail when a file and its schema drift apart.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { CapacityFileSchema } from '../src/capacity/capacity-schema.js';
import { PricesFileSchema } from '../src/capacity/prices-schema.js';

export const CAPACITY_SCHEMA_PATH = fileURLToPath(new URL('../docs/capacity.schema.json', import.meta.url));
export const CAPACITY_SCHEMA_ID = 'https://gpucap.io/schemas/capacity.schema.json';
export const PRICES_SCHEMA_PATH = fileURLToPath(new URL('../docs/prices.schema.json', import.meta.url));
export const PRICES_SCHEMA_ID = 'https://gpucap.io/schemas/prices.schema.json';

function render(schema: TSchema, id: string): string {
  // JSON.stringify drops TypeBox's symbol-keyed metadata; what remains is plain JSON Schema.
  const { title, description, ...rest } = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  const document = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id, title, description, ...rest };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The whole of docs/capacity.schema.json. */
export function renderCapacitySchema(): string {
  return render(CapacityFileSchema, CAPACITY_SCHEMA_ID);
}

/** The whole of docs/prices.schema.json. */
export function renderPricesSchema(): string {
  return render(PricesFileSchema, PRICES_SCHEMA_ID);
}

function main(argv: readonly string[]): void {
  for (const [path, rendered] of [[CAPACITY_SCHEMA_PATH, renderCapacitySchema()], [PRICES_SCHEMA_PATH, renderPricesSchema()]] as const) {
    if (argv.includes('--check')) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {
        // a missing file is out of date like any other
      }
      if (current !== rendered) {
        console.error(`${path} is out of date: run npm run docs:capacity-schema`);
        process.exit(1);
      }
      continue;
    }
    writeFileSync(path, rendered);
    console.log(`Wrote ${path}`);
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) main(process.argv.slice(2));
