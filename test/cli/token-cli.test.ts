import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { mintDevJwt } from '../../src/auth/dev-jwt.js';
import { hashApiToken } from '../../src/auth/token-format.js';
import { parseTokenArgs, runTokenCli, UsageError, type CliIo } from '../../src/cli/token.js';
import { baseConfig, bearer, captureLogger, expectInvalidToken, removeDir, T0, tempDir, TestClock } from '../auth/auth-helpers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function devAuthenticator(jwksFile: string) {
  return createAuthenticator(baseConfig({ jwks_file: jwksFile, jwt_issuer: 'gpucap-dev', jwt_audience: 'gpu-capacity-api' }), {
    clock: new TestClock(),
    logger: captureLogger().logger,
  });
}

function captureIo(cwd: string): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    cwd,
    now: () => T0,
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

describe('token CLI', () => {
  let dir: string;

  beforeEach(() => {
    dir = tempDir();
  });

  afterEach(() => {
    removeDir(dir);
  });

  describe('parseTokenArgs', () => {
    it('parses a JWT request with defaults for sub, ttl and the dev folder', () => {
      expect(parseTokenArgs(['--role', 'TEAM_LEAD', '--org', 'acme', '--initiatives', 'llm, vision,llm'], { cwd: '/home/dev/project' })).to.deep.equal({
        kind: 'jwt',
        role: 'TEAM_LEAD',
        organizationId: 'acme',
        initiatives: ['llm', 'vision'],
        subject: 'dev-user',
        ttlSeconds: 8 * 3600,
        devDir: '/home/dev/project/.gpucap-dev',
        rotate: false,
      });
    });

    it('accepts --flag=value and every duration unit', () => {
      const parsed = parseTokenArgs(['--role=MEMBER', '--org=acme', '--sub=alice', '--ttl=90s', '--dev-dir=keys', '--rotate'], { cwd: '/home/dev/project' });
      expect(parsed).to.include({ subject: 'alice', ttlSeconds: 90, devDir: '/home/dev/project/keys', rotate: true });
      expect(parseTokenArgs(['--role', 'MEMBER', '--org', 'a', '--ttl', '15m'])).to.include({ ttlSeconds: 900 });
      expect(parseTokenArgs(['--role', 'MEMBER', '--org', 'a', '--ttl', '7d'])).to.include({ ttlSeconds: 7 * 86400 });
    });

    it('parses an API token request', () => {
      expect(
        parseTokenArgs(['--api-token', '--id', 'grafana', '--org', 'acme', '--role', 'ORG_ADMIN', '--expires', '2027-06-30', '--append', 'tokens.yaml'], { cwd: '/home/dev/project' }),
      ).to.deep.equal({
        kind: 'api-token',
        id: 'grafana',
        role: 'ORG_ADMIN',
        organizationId: 'acme',
        initiatives: [],
        expiresAt: Date.parse('2027-06-30T00:00:00Z'),
        description: null,
        append: '/home/dev/project/tokens.yaml',
      });
    });

    it('returns help for --help and -h', () => {
      expect(parseTokenArgs(['--help'])).to.deep.equal({ kind: 'help' });
      expect(parseTokenArgs(['--role', 'x', '-h'])).to.deep.equal({ kind: 'help' });
    });

    const bad: Array<[string, string[], string]> = [
      ['an unknown flag', ['--role', 'MEMBER', '--org', 'a', '--colour', 'red'], 'Unknown flag "--colour" (see --help)'],
      ['a stray argument', ['MEMBER'], 'Unexpected argument "MEMBER" (flags start with --)'],
      ['a bad role', ['--role', 'admin', '--org', 'a'], '--role must be one of ORG_ADMIN, TEAM_LEAD, MEMBER, got "admin"'],
      ['a missing role', ['--org', 'a'], '--role is required (one of ORG_ADMIN, TEAM_LEAD, MEMBER)'],
      ['a missing --org', ['--role', 'MEMBER'], '--org is required (the organization id, like acme)'],
      ['a flag without its value', ['--role', 'MEMBER', '--org'], '--org needs a value'],
      ['a flag given twice', ['--role', 'MEMBER', '--role', 'MEMBER', '--org', 'a'], '--role is given twice'],
      ['a bad duration', ['--role', 'MEMBER', '--org', 'a', '--ttl', '8 hours'], '--ttl must be a duration like 30m, 8h or 7d (at most 30d), got "8 hours"'],
      ['a zero duration', ['--role', 'MEMBER', '--org', 'a', '--ttl', '0h'], '--ttl must be a duration'],
      ['a duration over 30 days', ['--role', 'MEMBER', '--org', 'a', '--ttl', '31d'], '--ttl must be a duration'],
      ['empty initiatives', ['--role', 'MEMBER', '--org', 'a', '--initiatives', 'llm,,x'], '--initiatives must be a comma-separated list'],
      ['a JWT flag with --api-token', ['--api-token', '--id', 'x', '--role', 'MEMBER', '--org', 'a', '--ttl', '1h'], '--ttl applies to JWTs, not to --api-token'],
      ['an API token flag without --api-token', ['--role', 'MEMBER', '--org', 'a', '--append', 't.yaml'], '--append applies only with --api-token'],
      ['--api-token without --id', ['--api-token', '--role', 'MEMBER', '--org', 'a'], '--id is required with --api-token'],
      ['a bad id', ['--api-token', '--id', 'Grafana Prod', '--role', 'MEMBER', '--org', 'a'], '--id must match'],
      ['a bad expiry', ['--api-token', '--id', 'x', '--role', 'MEMBER', '--org', 'a', '--expires', 'next week'], '--expires must be a date'],
      ['a value on a switch', ['--rotate=yes', '--role', 'MEMBER', '--org', 'a'], '--rotate takes no value'],
    ];
    for (const [what, argv, message] of bad) {
      it(`rejects ${what}`, () => {
        expect(() => parseTokenArgs(argv)).to.throw(UsageError, message);
      });
    }
  });

  describe('dev JWTs', () => {
    it('mints a token that verifies against the dev jwks.json', async () => {
      const minted = await mintDevJwt({ role: 'TEAM_LEAD', organizationId: 'acme', initiatives: ['llm', 'vision'], subject: 'alice', ttlSeconds: 3600, devDir: join(dir, 'dev'), now: T0 });
      expect(minted.env).to.deep.equal({ GPUCAP_JWKS_FILE: join(dir, 'dev', 'jwks.json'), GPUCAP_JWT_ISSUER: 'gpucap-dev', GPUCAP_JWT_AUDIENCE: 'gpu-capacity-api' });
      const principal = await devAuthenticator(minted.jwksFile).authenticate(bearer(minted.token));
      expect(principal).to.deep.equal({ id: 'jwt:gpucap-dev:alice', kind: 'jwt', organizationId: 'acme', role: 'TEAM_LEAD', initiatives: ['llm', 'vision'] });
    });

    it('reuses the key on later runs and keeps old public keys on --rotate', async () => {
      const options = { role: 'MEMBER' as const, organizationId: 'acme', initiatives: [], subject: 'bob', ttlSeconds: 3600, devDir: join(dir, 'dev'), now: T0 };
      const first = await mintDevJwt(options);
      const again = await mintDevJwt(options);
      const rotated = await mintDevJwt({ ...options, rotate: true });
      expect(again.kid).to.equal(first.kid);
      expect(rotated.kid).not.to.equal(first.kid);
      const jwks = JSON.parse(readFileSync(rotated.jwksFile, 'utf8')) as { keys: Array<{ kid: string; d?: string }> };
      expect(jwks.keys.map((key) => key.kid)).to.deep.equal([rotated.kid, first.kid]);
      expect(jwks.keys.every((key) => key.d === undefined)).to.equal(true);

      const auth = devAuthenticator(rotated.jwksFile);
      expect(await auth.authenticate(bearer(first.token))).to.include({ role: 'MEMBER' });
      expect(await auth.authenticate(bearer(rotated.token))).to.include({ role: 'MEMBER' });
    });

    it('prints only the token on stdout and the service settings on stderr', async () => {
      const io = captureIo(dir);
      expect(await runTokenCli(['--role', 'ORG_ADMIN', '--org', 'acme', '--dev-dir', 'dev'], io)).to.equal(0);
      const token = io.out.trimEnd();
      expect(io.out).to.equal(`${token}\n`);
      expect(token.split('.')).to.have.length(3);
      expect(io.err).to.include(`GPUCAP_JWKS_FILE=${join(dir, 'dev', 'jwks.json')} GPUCAP_JWT_ISSUER=gpucap-dev GPUCAP_JWT_AUDIENCE=gpu-capacity-api`);
      expect(await devAuthenticator(join(dir, 'dev', 'jwks.json')).authenticate(bearer(token))).to.include({ role: 'ORG_ADMIN', organizationId: 'acme' });
    });
  });

  describe('API tokens', () => {
    it('appends a record that authenticates the printed token', async () => {
      const file = join(dir, 'tokens.yaml');
      const io = captureIo(dir);
      const code = await runTokenCli(['--api-token', '--id', 'grafana', '--org', 'acme', '--role', 'TEAM_LEAD', '--initiatives', 'llm', '--expires', '2027-06-30', '--append', 'tokens.yaml'], io);
      expect(code).to.equal(0);
      const token = io.out.trim();
      expect(token).to.match(/^gca_[A-Za-z0-9_-]{43}$/);
      expect(readFileSync(file, 'utf8')).not.to.include(token);
      expect(io.err).to.equal(`Appended record "grafana" to ${file}. The token above is shown only once.\n`);

      const auth = createAuthenticator(baseConfig({ api_tokens_file: file }), { clock: new TestClock(), logger: captureLogger().logger });
      expect(await auth.authenticate(bearer(token))).to.deep.equal({ id: 'grafana', kind: 'api_token', organizationId: 'acme', role: 'TEAM_LEAD', initiatives: ['llm'] });
    });

    it('appends to an existing file, keeping its records and comments, and refuses a duplicate id', async () => {
      const file = join(dir, 'tokens.yaml');
      const io = captureIo(dir);
      await runTokenCli(['--api-token', '--id', 'first', '--org', 'acme', '--role', 'MEMBER', '--append', file], io);
      const firstToken = io.out.trim();
      writeFileSync(file, `# managed by hand\n${readFileSync(file, 'utf8')}`);

      const second = captureIo(dir);
      expect(await runTokenCli(['--api-token', '--id', 'second', '--org', 'acme', '--role', 'ORG_ADMIN', '--append', file], second)).to.equal(0);
      const text = readFileSync(file, 'utf8');
      expect(text.startsWith('# managed by hand\n')).to.equal(true);

      const auth = createAuthenticator(baseConfig({ api_tokens_file: file }), { clock: new TestClock(), logger: captureLogger().logger });
      expect(await auth.authenticate(bearer(firstToken))).to.include({ id: 'first' });
      expect(await auth.authenticate(bearer(second.out.trim()))).to.include({ id: 'second' });

      const duplicate = captureIo(dir);
      expect(await runTokenCli(['--api-token', '--id', 'first', '--org', 'acme', '--role', 'MEMBER', '--append', file], duplicate)).to.equal(2);
      expect(duplicate.out).to.equal('');
      expect(duplicate.err).to.include(`already has a record with id "first"`);
      expect(readFileSync(file, 'utf8')).to.equal(text);
    });

    it('prints the record on stderr when there is no --append', async () => {
      const io = captureIo(dir);
      expect(await runTokenCli(['--api-token', '--id', 'ci', '--org', 'acme', '--role', 'MEMBER', '--description', 'CI jobs'], io)).to.equal(0);
      const token = io.out.trim();
      expect(io.err).to.include(`  - id: ci\n    sha256: ${hashApiToken(token)}\n`);
      expect(io.err).to.include('    description: CI jobs');
    });

    it('refuses an expiry in the past', async () => {
      const io = captureIo(dir);
      expect(await runTokenCli(['--api-token', '--id', 'ci', '--org', 'acme', '--role', 'MEMBER', '--expires', '2020-01-01'], io)).to.equal(2);
      expect(io.out).to.equal('');
      expect(io.err).to.include('--expires must be in the future');
    });

    it('does not accept a token of an expired record appended earlier', async () => {
      const file = join(dir, 'tokens.yaml');
      const io = captureIo(dir);
      await runTokenCli(['--api-token', '--id', 'short', '--org', 'acme', '--role', 'MEMBER', '--expires', '2026-11-23T00:00:00Z', '--append', file], io);
      const clock = new TestClock(Date.parse('2026-11-23T00:00:00Z'));
      const auth = createAuthenticator(baseConfig({ api_tokens_file: file }), { clock, logger: captureLogger().logger });
      await expectInvalidToken(auth.authenticate(bearer(io.out.trim())), 'API token has expired');
    });
  });

  describe('as a process', () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', ...args], { cwd: repoRoot }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
      );

    it('exits 2 with a message on bad arguments', async () => {
      const result = await run(['--role', 'BOSS', '--org', 'acme']);
      expect(result.code).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal('Error: --role must be one of ORG_ADMIN, TEAM_LEAD, MEMBER, got "BOSS"\nRun with --help for usage.\n');
    });

    it('prints a verifiable token alone on stdout', async () => {
      const result = await run(['--role', 'MEMBER', '--org', 'acme', '--initiatives', 'llm', '--dev-dir', join(dir, 'dev')]);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      const clock = { now: () => Date.now() };
      const auth = createAuthenticator(baseConfig({ jwks_file: join(dir, 'dev', 'jwks.json'), jwt_issuer: 'gpucap-dev', jwt_audience: 'gpu-capacity-api' }), {
        clock,
        logger: captureLogger().logger,
      });
      expect(await auth.authenticate(bearer(result.stdout.trim()))).to.include({ role: 'MEMBER', organizationId: 'acme' });
    });

    it('prints usage on --help', async () => {
      const result = await run(['--help']);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('Usage:');
      expect(result.stdout).to.include('--api-token');
    });
  });
});
