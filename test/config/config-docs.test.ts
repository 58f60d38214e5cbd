// docs/configuration.md is generated from ConfigSchema (npm run docs:config); these tests fail when
// the committed file and the schema drift apart, and keep the generated content honest.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { envVarOf, loadConfig } from '../../src/config/load.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { CONFIG_DOCS_PATH, EXAMPLE_YAML, renderConfigDocs } from '../../scripts/config-docs.js';

// The variables DESIGN.md "Configuration" fixes for the chart, the docs and outside tests.
const STABLE_VARIABLES = [
  'GPUCAP_CONFIG', 'GPUCAP_LISTEN', 'GPUCAP_ADMIN_LISTEN', 'GPUCAP_DB_PATH', 'GPUCAP_CLUSTER_ID', 'GPUCAP_KUBECONFIG',
  'GPUCAP_REMOTE_KUBECONFIG_DIR', 'GPUCAP_NAMESPACE', 'GPUCAP_DEFAULT_ORGANIZATION_ID', 'GPUCAP_JWKS_URL', 'GPUCAP_JWKS_FILE',
  'GPUCAP_JWT_ISSUER', 'GPUCAP_JWT_AUDIENCE', 'GPUCAP_API_TOKENS_FILE', 'GPUCAP_SCRAPE_INTERVAL_SECONDS', 'GPUCAP_LOG_LEVEL',
];

describe('config/docs', () => {
  const rendered = renderConfigDocs();

  it('docs/configuration.md is what `npm run docs:config` generates from the schema', () => {
    const committed = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    expect(committed, 'docs/configuration.md is out of date: run npm run docs:config').to.equal(rendered);
  });

  it('has one table row per schema key, with its env var', () => {
    const rows = rendered.split('\n').filter((line) => /^\| `[a-z_]+` \|/.test(line));
    expect(rows.map((row) => row.split(' | ')[0]?.replace(/^\| `|`$/g, ''))).to.deep.equal(Object.keys(ConfigSchema.properties));
    for (const row of rows) {
      const key = row.split('`')[1] ?? '';
      expect(row, key).to.contain(`| \`${envVarOf(key)}\` |`);
    }
  });

  it('shows each key\'s default as loadConfig applies it', () => {
    const defaults = loadConfig({ GPUCAP_API_TOKENS_FILE: '/tokens.yaml' });
    for (const [key, value] of Object.entries(defaults)) {
      if (key === 'api_tokens_file') continue;
      const row = rendered.split('\n').find((line) => line.startsWith(`| \`${key}\` |`)) ?? '';
      const shown = Array.isArray(value) ? (value.length === 0 ? 'empty' : `\`${value.join(',')}\``) : `\`${String(value)}\``;
      expect(row.split(' | ')[3], key).to.equal(shown);
    }
  });

  it('names every variable DESIGN.md fixes as the stable interface', () => {
    for (const name of STABLE_VARIABLES) expect(rendered, name).to.contain(`\`${name}\``);
  });

  it('documents the cross-key rules of loadConfig', () => {
    expect(rendered).to.contain('## Rules across settings');
    for (const key of ['jwks_url', 'jwks_file', 'jwt_issuer', 'jwt_audience', 'api_tokens_file', 'admin_listen', 'scrape_timeout_seconds']) {
      expect(rendered.split('## Rules across settings')[1]?.split('## Settings')[0], key).to.contain(`\`${key}\``);
    }
  });

  it('its example YAML is a valid configuration', () => {
    expect(rendered).to.contain(['```yaml', EXAMPLE_YAML.trimEnd(), '```'].join('\n'));
    const config = loadConfig({ GPUCAP_CONFIG: '/etc/gpu-capacity-api/config.yaml' }, () => EXAMPLE_YAML);
    expect(config).to.include({ cluster_id: 'gpu-east', jwt_audience: 'gpu-capacity-api', log_level: 'info' });
  });
});
