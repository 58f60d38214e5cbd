import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { createAuthenticator, type StatusReportingAuthenticator } from '../../src/auth/authenticator.js';
import { generateApiToken } from '../../src/auth/token-format.js';
import {
  baseConfig,
  bearer,
  captureLogger,
  expectInvalidToken,
  ISSUER,
  jwksOf,
  makeKey,
  rejectionOf,
  removeDir,
  signToken,
  tempDir,
  TestClock,
  type TestKey,
} from './auth-helpers.js';

describe('authenticator: the Authorization header and the claims', () => {
  let dir: string;
  let jwksFile: string;
  let key: TestKey;
  let auth: StatusReportingAuthenticator;
  const deps = () => ({ clock: new TestClock(), logger: captureLogger().logger });

  before(async () => {
    key = await makeKey('ES256');
  });

  beforeEach(() => {
    dir = tempDir();
    jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify(jwksOf(key)));
    auth = createAuthenticator(baseConfig({ jwks_file: jwksFile }), deps());
  });

  afterEach(() => {
    auth.close();
    removeDir(dir);
  });

  describe('header', () => {
    it('rejects a missing header with a bare Bearer challenge', async () => {
      const error = await rejectionOf(auth.authenticate(undefined));
      expect(error).to.include({ code: 'UNAUTHENTICATED', status: 401, message: 'Authorization header is missing' });
      expect(error.headers).to.deep.equal({ 'WWW-Authenticate': 'Bearer realm="gpu-capacity-api"' });
    });

    it('treats an empty header as missing', async () => {
      const error = await rejectionOf(auth.authenticate('  '));
      expect(error.headers['WWW-Authenticate']).to.equal('Bearer realm="gpu-capacity-api"');
    });

    it('rejects another scheme', async () => {
      await expectInvalidToken(auth.authenticate('Basic YWxpY2U6c2VjcmV0'), 'Authorization header must be "Bearer <token>"');
    });

    it('rejects the scheme without a token', async () => {
      await expectInvalidToken(auth.authenticate('Bearer'), 'Authorization header must be "Bearer <token>"');
    });

    it('rejects two tokens in one header', async () => {
      await expectInvalidToken(auth.authenticate('Bearer a.b.c d.e.f'), 'Authorization header must be "Bearer <token>"');
    });

    it('rejects a token that is neither a JWT nor an API token', async () => {
      await expectInvalidToken(auth.authenticate('Bearer not-a-token'), 'Token is neither a JWT nor an API token');
      await expectInvalidToken(auth.authenticate('Bearer a.b.c.d.e'), 'Token is neither a JWT nor an API token');
    });

    it('rejects three base64url parts that are not a JWS', async () => {
      await expectInvalidToken(auth.authenticate('Bearer abc.def.ghi'), 'Token is malformed');
    });

    it('rejects an oversized token before any parsing', async () => {
      await expectInvalidToken(auth.authenticate(bearer(`${'a'.repeat(5000)}.${'b'.repeat(5000)}.c`)), 'Token is too long');
    });

    it('rejects API tokens when no token file is configured', async () => {
      await expectInvalidToken(auth.authenticate(bearer(generateApiToken())), 'API tokens are not accepted by this server');
    });

    it('rejects JWTs when only API tokens are configured', async () => {
      const tokensFile = join(dir, 'tokens.yaml');
      writeFileSync(tokensFile, 'tokens: []\n');
      const apiOnly = createAuthenticator(baseConfig({ api_tokens_file: tokensFile }), deps());
      await expectInvalidToken(apiOnly.authenticate(bearer(await signToken(key))), 'JWTs are not accepted by this server');
    });

    it('refuses to start with no credential source', () => {
      expect(() => createAuthenticator(baseConfig({}), deps())).to.throw('No credential source: set jwks_url, jwks_file or api_tokens_file');
    });

    it('refuses to authenticate after close', async () => {
      auth.close();
      const outcome = await auth.authenticate(bearer(await signToken(key))).then(
        () => 'resolved',
        (error: Error) => error.message,
      );
      expect(outcome).to.equal('Authenticator is closed');
    });
  });

  describe('claims', () => {
    it('maps org_id, role and initiatives, with id jwt:<iss>:<sub>', async () => {
      const principal = await auth.authenticate(bearer(await signToken(key, { sub: 'carol', role: 'MEMBER', initiatives: ['llm'] })));
      expect(principal).to.deep.equal({ id: `jwt:${ISSUER}:carol`, kind: 'jwt', organizationId: 'acme', role: 'MEMBER', initiatives: ['llm'] });
    });

    it('gives no initiatives when the claim is absent', async () => {
      const principal = await auth.authenticate(bearer(await signToken(key, { role: 'ORG_ADMIN', initiatives: undefined })));
      expect(principal.initiatives).to.deep.equal([]);
    });

    it('rejects a role outside the three roles, naming the claim', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { role: 'admin' }))), 'Token claim "role" must be one of ORG_ADMIN, TEAM_LEAD, MEMBER');
    });

    it('rejects a role given as an array', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { role: ['ORG_ADMIN'] }))), 'Token claim "role" must be one of ORG_ADMIN, TEAM_LEAD, MEMBER');
    });

    it('rejects a missing role', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { role: undefined }))), 'Token claim "role" must be one of ORG_ADMIN, TEAM_LEAD, MEMBER');
    });

    it('rejects a missing or empty organization', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { org_id: undefined }))), 'Token claim "org_id" must be a non-empty string');
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { org_id: '' }))), 'Token claim "org_id" must be a non-empty string');
    });

    it('rejects initiatives that are not an array of strings', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { initiatives: 'llm' }))), 'Token claim "initiatives" must be an array of strings');
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { initiatives: ['llm', 7] }))), 'Token claim "initiatives" must be an array of strings');
    });

    it('rejects a token without sub or exp', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { sub: undefined }))), 'Token claim "sub" is missing');
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { exp: undefined }))), 'Token claim "exp" is missing');
    });

    it('rejects a token without iss or aud', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { iss: undefined }))), 'Token claim "iss" is missing');
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { aud: undefined }))), 'Token claim "aud" is missing');
    });

    it('rejects a non-numeric exp', async () => {
      await expectInvalidToken(auth.authenticate(bearer(await signToken(key, { exp: 'tomorrow' }))), 'Token claim "exp" is invalid');
    });

    it('reads the claims under the configured names', async () => {
      const custom = createAuthenticator(
        baseConfig({ jwks_file: jwksFile, claim_organization: 'https://acme.example/org', claim_role: 'gpu_role', claim_initiatives: 'teams' }),
        deps(),
      );
      const token = await signToken(key, { org_id: undefined, role: undefined, initiatives: undefined, 'https://acme.example/org': 'acme', gpu_role: 'ORG_ADMIN', teams: ['t1'] });
      expect(await custom.authenticate(bearer(token))).to.include({ organizationId: 'acme', role: 'ORG_ADMIN' });
      await expectInvalidToken(custom.authenticate(bearer(await signToken(key))), 'Token claim "https://acme.example/org" must be a non-empty string');
    });
  });
});
