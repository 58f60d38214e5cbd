// Generates docs/configuration.md from ConfigSchema (src/config/schema.ts), the one source of truth
// for settings: key, env var, type, default and description of each, plus how they are read.
//   npm run docs:config            rewrite docs/configuration.md
//   npm run docs:config -- --check exit 1 when docs/configuration.md is out of date
// test/config/config-docs.test.ts fails when the file and the schema drift apart.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { envVarOf } from '../src/config/load.js';
import { ConfigSchema } from '../src/config/schema.js';

export const CONFIG_DOCS_PATH = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

interface PropertySchema {
  type?: string;
  anyOf?: { const?: unknown }[];
  items?: PropertySchema;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

const properties = ConfigSchema.properties as unknown as Record<string, PropertySchema>;
const required = new Set<string>(ConfigSchema.required ?? []);

// Patterns said in words; a pattern not listed here is shown as it is.
const PATTERN_NAMES = new Map<string | undefined, string>([
  [properties.listen?.pattern, '`host:port`'],
  [properties.cluster_id?.pattern, 'string: letters, digits, `.`, `_`, `-` (at most 63, starting with a letter or digit)'],
  [properties.namespace?.pattern, 'Kubernetes namespace name'],
  [properties.jwks_url?.pattern, '`http://` or `https://` URL'],
  [properties.cors_allowed_origins?.items?.pattern, 'origin (`https://host[:port]`) or `*`'],
]);

/** The example of the docs; the docs test loads it with loadConfig, so it stays valid. */
export const EXAMPLE_YAML = `# GPUCAP_CONFIG=/etc/gpu-capacity-api/config.yaml
listen: 0.0.0.0:8080
admin_listen: 0.0.0.0:9090
db_path: /var/lib/gpu-capacity-api/index.db
retention_days: 400
cluster_id: gpu-east
namespace: gpu-capacity-api
default_organization_id: org-acme

# JWTs from the identity provider...
jwks_url: https://idp.example.com/.well-known/jwks.json
jwt_issuer: https://idp.example.com/
jwt_audience: gpu-capacity-api
jwt_algorithms: [RS256, ES256]
# ...and API tokens for scripts (hashes only; see \`npm run token\`)
api_tokens_file: /var/run/secrets/gpu-capacity-api/tokens.yaml

rate_limit_per_second: 50
rate_limit_burst: 100
cors_allowed_origins:
  - https://grafana.example.com
log_level: info
`;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function typeOf(schema: PropertySchema): string {
  if (schema.anyOf) return `one of ${schema.anyOf.map((o) => `\`${String(o.const)}\``).join(', ')}`;
  if (schema.type === 'array') {
    const items = schema.items ?? {};
    return items.anyOf ? `list of ${items.anyOf.map((o) => `\`${String(o.const)}\``).join(', ')}` : `list of ${typeOf(items)}`;
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const range = schema.minimum !== undefined && schema.maximum !== undefined ? ` (${schema.minimum}–${schema.maximum})` : '';
    return `${schema.type}${range}`;
  }
  if (schema.type === 'string' && schema.pattern !== undefined) return PATTERN_NAMES.get(schema.pattern) ?? `string matching \`${schema.pattern}\``;
  return schema.type ?? 'any';
}

function defaultOf(key: string, schema: PropertySchema): string {
  if (!required.has(key) || schema.default === undefined) return 'unset';
  if (Array.isArray(schema.default)) return schema.default.length === 0 ? 'empty' : `\`${schema.default.join(',')}\``;
  return `\`${String(schema.default)}\``;
}

function settingsTable(): string[] {
  const rows = Object.entries(properties).map(([key, schema]) =>
    `| \`${key}\` | \`${envVarOf(key)}\` | ${cell(typeOf(schema))} | ${cell(defaultOf(key, schema))} | ${cell(schema.description ?? '')} |`,
  );
  return ['| YAML key | Env var | Type | Default | Description |', '|---|---|---|---|---|', ...rows];
}

/** The whole of docs/configuration.md. */
export function renderConfigDocs(): string {
  const lines = [
    '<!-- Generated from src/config/schema.ts by `npm run docs:config`; do not edit by hand (a test fails when the two differ). -->',
    '# Configuration',
    '',
    'gpu-capacity-api reads its settings once, at start, from an optional YAML file and from environment variables.',
    'Changing a setting needs a restart; only the API token file and the JWKS file are re-read while running.',
    '',
    '## How settings are read',
    '',
    '- **YAML file**: `GPUCAP_CONFIG` names an optional YAML file holding a mapping of the keys in the table below.',
    '- **Environment variables**: every key `foo_bar` is also the variable `GPUCAP_FOO_BAR`. A variable overrides the same key of the file, key by key; a key set in neither takes its default.',
    '- **Empty means unset**: a variable set to the empty string counts as not set (the way Helm renders unset values), so the file value or the default applies. An empty `GPUCAP_CONFIG` means no file.',
    '- **Lists**: a YAML sequence in the file; comma-separated in a variable (`GPUCAP_CORS_ALLOWED_ORIGINS=https://a.example.com,https://b.example.com`). Blanks around items are trimmed and empty items dropped.',
    '- **Numbers** in variables are plain decimals (`15`, `2.5`).',
    '- **Typos are errors**: an unknown `GPUCAP_*` variable or an unknown key in the file stops the start.',
    '- **Errors**: every problem is reported at once on stderr, each naming the variable (`GPUCAP_LOG_LEVEL: must be one of …`) or the key and the file (`log_level (in /etc/gpucap.yaml): …`), and the process exits with status 2.',
    '',
    '## Rules across settings',
    '',
    `- \`jwks_url\` and \`jwks_file\` are alternatives: set at most one (\`${envVarOf('jwks_url')}\`, \`${envVarOf('jwks_file')}\`).`,
    `- Setting either turns JWT verification on, which then requires \`jwt_issuer\` and \`jwt_audience\` (\`${envVarOf('jwt_issuer')}\`, \`${envVarOf('jwt_audience')}\`).`,
    `- \`jwks_url\` must be \`https://\`, unless its host is loopback (127.0.0.0/8, ::1, localhost) or \`jwks_allow_http\` (\`${envVarOf('jwks_allow_http')}\`) is true: keys fetched over plain http can be swapped on the way.`,
    `- At least one credential source is required: \`jwks_url\`, \`jwks_file\` or \`api_tokens_file\` (\`${envVarOf('api_tokens_file')}\`); otherwise every request would be rejected. Both JWTs and API tokens may be on at once.`,
    `- \`admin_listen\` must differ from \`listen\`, unless both ask for port 0 (the OS then picks a free port for each).`,
    `- \`scrape_timeout_seconds\` must be shorter than \`scrape_interval_seconds\` (\`${envVarOf('scrape_timeout_seconds')}\`); unset, it is 10 or the interval − 1, whichever is shorter.`,
    '',
    '## Settings',
    '',
    ...settingsTable(),
    '',
    '## Example',
    '',
    '```yaml',
    ...EXAMPLE_YAML.trimEnd().split('\n'),
    '```',
    '',
    'The same file with one setting overridden for a debugging session:',
    '',
    '```sh',
    'GPUCAP_CONFIG=/etc/gpu-capacity-api/config.yaml GPUCAP_LOG_LEVEL=debug node dist/src/main.js',
    '```',
    '',
  ];
  return lines.join('\n');
}

function main(argv: readonly string[]): void {
  const rendered = renderConfigDocs();
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    } catch {
      // a missing file is out of date like any other
    }
    if (current !== rendered) {
      console.error(`${CONFIG_DOCS_PATH} is out of date: run npm run docs:config`);
      process.exit(1);
    }
    return;
  }
  writeFileSync(CONFIG_DOCS_PATH, rendered);
  console.log(`Wrote ${CONFIG_DOCS_PATH}`);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) main(process.argv.slice(2));
