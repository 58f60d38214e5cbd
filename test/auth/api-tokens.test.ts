import { mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createAuthenticator, type StatusReportingAuthenticator } from '../../src/auth/authenticator.js';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import {
  baseConfig,
  bearer,
  captureLogger,
  ERROR_LEVEL,
  expectInvalidToken,
  removeDir,
  T0,
  tempDir,
  TestClock,
  type LogLine,
} from './auth-helpers.js';

interface RecordFields {
  id: string;
  token: string;
  role?: string;
  organization_id?: string;
  initiatives?: string[];
  expires_at?: string;
}

function recordYaml(fields: RecordFields): string {
  const lines = [
    `  - id: ${fields.id}`,
    `    sha256: ${hashApiToken(fields.token)}`,
    `    organization_id: ${fields.organization_id ?? 'acme'}`,
    `    role: ${fields.role ?? 'ORG_ADMIN'}`,
  ];
  if (fields.initiatives) lines.push(`    initiatives: [${fields.initiatives.join(', ')}]`);
  if (fields.expires_at) lines.push(`    expires_at: ${fields.expires_at}`);
  return lines.join('\n');
}

function tokensYaml(...records: RecordFields[]): string {
  return `# API tokens\ntokens:\n${records.map(recordYaml).join('\n')}\n`;
}

describe('API token authentication', () => {
  const grafana = generateApiToken();
  const ci = generateApiToken();
  let dir: string;
  let file: string;
  let clock: TestClock;
  let lines: LogLine[];
  let auth: StatusReportingAuthenticator;

  const build = (): StatusReportingAuthenticator => {
    const captured = captureLogger();
    lines = captured.lines;
    return createAuthenticator(baseConfig({ api_tokens_file: file, api_tokens_reload_seconds: 5 }), { clock, logger: captured.logger });
  };

  beforeEach(() => {
    dir = tempDir();
    file = join(dir, 'tokens.yaml');
    clock = new TestClock();
    writeFileSync(
      file,
      tokensYaml({ id: 'grafana-prod', token: grafana }, { id: 'ci', token: ci, role: 'MEMBER', initiatives: ['llm', 'vision'], expires_at: '2027-06-30T00:00:00Z' }),
    );
    auth = build();
  });

  afterEach(() => {
    auth.close();
    removeDir(dir);
  });

  it('accepts a valid token and returns the principal of its record', async () => {
    expect(await auth.authenticate(bearer(grafana))).to.deep.equal({ id: 'grafana-prod', kind: 'api_token', organizationId: 'acme', role: 'ORG_ADMIN', initiatives: [] });
    expect(await auth.authenticate(bearer(ci))).to.deep.equal({ id: 'ci', kind: 'api_token', organizationId: 'acme', role: 'MEMBER', initiatives: ['llm', 'vision'] });
  });

  it('rejects a well-formed token that is in no record', async () => {
    await expectInvalidToken(auth.authenticate(bearer(generateApiToken())), 'Unknown API token');
  });

  it('rejects a token of the wrong shape', async () => {
    await expectInvalidToken(auth.authenticate(bearer('gca_short')), 'API token is malformed');
    await expectInvalidToken(auth.authenticate(bearer(`${grafana}A`)), 'API token is malformed');
    await expectInvalidToken(auth.authenticate(bearer(`gca_${'!'.repeat(43)}`)), 'API token is malformed');
  });

  it('rejects a token whose record has expired, by the injected clock', async () => {
    await auth.authenticate(bearer(ci));
    clock.advance(Date.parse('2027-06-30T00:00:00Z') - T0);
    await expectInvalidToken(auth.authenticate(bearer(ci)), 'API token has expired');
  });

  it('accepts a date-only expires_at as midnight UTC', async () => {
    writeFileSync(file, tokensYaml({ id: 'ci', token: ci, expires_at: '2026-11-23' }));
    auth = build();
    await auth.authenticate(bearer(ci));
    clock.advance(24 * 3600 * 1000);
    await expectInvalidToken(auth.authenticate(bearer(ci)), 'API token has expired');
  });

  it('revokes a token removed from the file once the reload interval has passed', async () => {
    await auth.authenticate(bearer(grafana));
    writeFileSync(file, tokensYaml({ id: 'ci', token: ci }));
    clock.advance(4_000);
    await auth.authenticate(bearer(grafana)); // not checked again yet
    clock.advance(1_000);
    await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
    expect(await auth.authenticate(bearer(ci))).to.include({ id: 'ci' });
    expect(auth.status().apiTokens).to.deep.equal({ records: 1, lastLoadError: null, loadedAt: T0 + 5_000 });
  });

  it('follows a Kubernetes Secret volume update (symlink swap)', async () => {
    // Secret volumes: tokens.yaml -> ..data/tokens.yaml, ..data -> ..<timestamp>/; an update swaps ..data.
    const volume = join(dir, 'secret');
    mkdirSync(join(volume, '..v1'), { recursive: true });
    writeFileSync(join(volume, '..v1', 'tokens.yaml'), tokensYaml({ id: 'grafana-prod', token: grafana }));
    utimesSync(join(volume, '..v1', 'tokens.yaml'), 1_700_000_000, 1_700_000_000);
    symlinkSync('..v1', join(volume, '..data'));
    symlinkSync(join('..data', 'tokens.yaml'), join(volume, 'tokens.yaml'));
    file = join(volume, 'tokens.yaml');
    auth = build();
    await auth.authenticate(bearer(grafana));

    mkdirSync(join(volume, '..v2'));
    // Same size and mtime as the old file: only the inode tells the new version apart.
    writeFileSync(join(volume, '..v2', 'tokens.yaml'), tokensYaml({ id: 'ci-pipelines', token: ci }));
    utimesSync(join(volume, '..v2', 'tokens.yaml'), 1_700_000_000, 1_700_000_000);
    symlinkSync('..v2', join(volume, '..data_tmp'));
    renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
    rmSync(join(volume, '..v1'), { recursive: true });
    clock.advance(5_000);

    await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
    expect(await auth.authenticate(bearer(ci))).to.include({ id: 'ci-pipelines' });
  });

  it('keeps the previous records and logs at error when the file turns invalid', async () => {
    writeFileSync(file, tokensYaml({ id: 'grafana-prod', token: grafana, role: 'BOSS' }));
    clock.advance(5_000);
    expect(await auth.authenticate(bearer(grafana))).to.include({ role: 'ORG_ADMIN' });
    expect(await auth.authenticate(bearer(ci))).to.include({ id: 'ci' });

    const reason = 'tokens[0] (id "grafana-prod"): "role" must be one of ORG_ADMIN, TEAM_LEAD, MEMBER';
    const errors = lines.filter((line) => line.level === ERROR_LEVEL);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ msg: 'API tokens file is invalid; the last valid version stays in force', file, reason });
    expect(auth.status().apiTokens).to.deep.equal({ records: 2, lastLoadError: reason, loadedAt: T0 });

    clock.advance(5_000);
    await auth.authenticate(bearer(grafana));
    expect(lines.filter((line) => line.level === ERROR_LEVEL), 'the same problem is logged once').to.have.length(1);

    writeFileSync(file, tokensYaml({ id: 'ci', token: ci }));
    clock.advance(5_000);
    await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
    expect(auth.status().apiTokens?.lastLoadError).to.equal(null);
  });

  describe('when the file is gone', () => {
    const WARN_LEVEL = 40;
    const away = (): string => join(dir, 'tokens.yaml.away');

    it('keeps its tokens while the file is missing at one check only', async () => {
      renameSync(file, away());
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });
      expect(auth.status().apiTokens?.lastLoadError).to.equal('file not found');

      renameSync(away(), file);
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(ci))).to.include({ id: 'ci' });
      expect(auth.status().apiTokens).to.include({ records: 2, lastLoadError: null });
      expect(lines.filter((line) => line.level >= WARN_LEVEL)).to.deep.equal([]);
    });

    it('keeps its tokens through a Secret volume update that leaves the file missing for a check', async () => {
      // tokens.yaml -> ..data/tokens.yaml; the update is caught between removing ..data and linking the new one.
      const volume = join(dir, 'secret');
      mkdirSync(join(volume, '..v1'), { recursive: true });
      writeFileSync(join(volume, '..v1', 'tokens.yaml'), tokensYaml({ id: 'grafana-prod', token: grafana }));
      symlinkSync('..v1', join(volume, '..data'));
      symlinkSync(join('..data', 'tokens.yaml'), join(volume, 'tokens.yaml'));
      file = join(volume, 'tokens.yaml');
      auth = build();

      mkdirSync(join(volume, '..v2'));
      writeFileSync(join(volume, '..v2', 'tokens.yaml'), tokensYaml({ id: 'grafana-prod', token: grafana }, { id: 'ci', token: ci }));
      rmSync(join(volume, '..data'));
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });

      symlinkSync('..v2', join(volume, '..data'));
      rmSync(join(volume, '..v1'), { recursive: true });
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });
      expect(await auth.authenticate(bearer(ci))).to.include({ id: 'ci' });
    });

    it('revokes every token once the file is still missing a reload interval later, logging it at warn once', async () => {
      renameSync(file, away());
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });
      clock.advance(5_000);
      await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
      await expectInvalidToken(auth.authenticate(bearer(ci)), 'Unknown API token');
      expect(auth.status().apiTokens).to.deep.equal({ records: 0, lastLoadError: 'file not found', loadedAt: T0 + 10_000 });

      clock.advance(5_000);
      await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
      const warnings = lines.filter((line) => line.level >= WARN_LEVEL);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include({ level: WARN_LEVEL, file, msg: 'API tokens file was deleted; every token from it is rejected until it is back' });
    });

    it('accepts the tokens of the file again once it is back', async () => {
      renameSync(file, away());
      clock.advance(5_000);
      await auth.authenticate(bearer(grafana));
      clock.advance(5_000);
      await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');

      renameSync(away(), file);
      clock.advance(5_000);
      expect(await auth.authenticate(bearer(grafana))).to.include({ id: 'grafana-prod' });
      expect(auth.status().apiTokens).to.include({ records: 2, lastLoadError: null });
    });

    it('keeps them revoked when what comes back is invalid', async () => {
      renameSync(file, away());
      clock.advance(5_000);
      await auth.authenticate(bearer(grafana));
      clock.advance(5_000);
      await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');

      writeFileSync(file, tokensYaml({ id: 'grafana-prod', token: grafana, role: 'BOSS' }));
      clock.advance(5_000);
      await expectInvalidToken(auth.authenticate(bearer(grafana)), 'Unknown API token');
      const errors = lines.filter((line) => line.level === ERROR_LEVEL);
      expect(errors.map((line) => line.msg)).to.deep.equal(['API tokens file is invalid; every token from it is rejected until a valid one is back']);
    });
  });

  it('refuses to start with an invalid file, naming the record and the field', () => {
    writeFileSync(file, `tokens:\n${recordYaml({ id: 'grafana-prod', token: grafana })}\n  - id: ci\n    sha256: ABC\n    organization_id: acme\n    role: MEMBER\n`);
    expect(() => build()).to.throw(`Cannot load API tokens file "${file}": tokens[1] (id "ci"): "sha256" must be 64 lowercase hex characters (the SHA-256 of the token)`);
  });

  it('refuses to start with a misspelt field', () => {
    writeFileSync(file, `tokens:\n${recordYaml({ id: 'ci', token: ci })}\n    expire_at: 2027-01-01\n`);
    expect(() => build()).to.throw('tokens[0] (id "ci"): unknown field "expire_at"');
  });

  it('refuses to start with a duplicate id', () => {
    writeFileSync(file, tokensYaml({ id: 'ci', token: ci }, { id: 'ci', token: grafana }));
    expect(() => build()).to.throw('tokens[1] (id "ci"): "id" is used by an earlier record');
  });

  it('refuses to start with an impossible expires_at', () => {
    writeFileSync(file, tokensYaml({ id: 'ci', token: ci, expires_at: '2027-02-30' }));
    expect(() => build()).to.throw('tokens[0] (id "ci"): "expires_at" must be an ISO 8601 date or date-time');
  });

  it('refuses to start with a file that is not a mapping with tokens', () => {
    writeFileSync(file, '');
    expect(() => build()).to.throw(`Cannot load API tokens file "${file}": must be a mapping with a "tokens" list`);
    writeFileSync(file, 'tokenz: []\n');
    expect(() => build()).to.throw('"tokens" is required');
  });

  it('reads a JSON file as well', async () => {
    const json = join(dir, 'tokens.json');
    writeFileSync(json, JSON.stringify({ tokens: [{ id: 'json', sha256: hashApiToken(ci), organization_id: 'acme', role: 'TEAM_LEAD', initiatives: ['llm'] }] }));
    file = json;
    auth = build();
    expect(await auth.authenticate(bearer(ci))).to.deep.equal({ id: 'json', kind: 'api_token', organizationId: 'acme', role: 'TEAM_LEAD', initiatives: ['llm'] });
  });
});
