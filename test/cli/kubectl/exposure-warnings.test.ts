// kubectl gpucap warns on stderr where the token may be seen besides the service: given with --token
// (shell history, `ps`), or sent over plain http to another machine. The command still runs, and the
// token itself is never printed.
import { join } from 'node:path';
import { expect } from 'chai';
import { run } from '../../../src/cli/kubectl/run.js';
import { startTestService, type TestService } from '../../support/service-harness.js';
import { makeTempDir } from '../../support/temp-dir.js';

describe('kubectl gpucap warnings about an exposed token', function () {
  this.timeout(60_000);
  let t: TestService;
  const temp = makeTempDir('gpucap-cli-warnings-');
  before(async () => {
    t = await startTestService();
  });
  after(async () => {
    await t.stop();
    temp.remove();
  });

  const cli = async (args: string[], env: Record<string, string> = {}) => {
    let out = '';
    let err = '';
    const code = await run(args, {
      env: { HOME: temp.path, ...env },
      out: (text) => (out += text),
      err: (text) => (err += text),
      now: () => t.clock.now(),
      connect: () => Promise.reject(new Error('no kubeconfig in this test')),
    });
    expect(out + err).not.to.include(t.callers.admin.token);
    return { code, out, err };
  };
  const tokenWarning = (configFile: string) =>
    'Warning: --token leaves the token in your shell history and shows it to every user of this machine in the process list (ps); ' +
    `set GPUCAP_TOKEN, or write "token: <token>" in ${configFile} (mode 0600), instead\n`;
  const httpWarning = (origin: string) =>
    `Warning: --url ${origin} is plain http to another machine: the token crosses the network unencrypted; ` +
    'use an https:// URL, or leave out --url to go through a port-forward\n';

  it('warns about --token, names the variable and the config file to use instead, and still answers', async () => {
    const result = await cli(['workloads', '-o', 'json', '--url', t.url, '--token', t.callers.admin.token, '--org', 'acme']);
    expect(result.code, result.err).to.equal(0);
    expect(result.err).to.equal(tokenWarning(join(temp.path, '.config', 'gpucap', 'config.yaml')));
    expect(JSON.parse(result.out)).to.have.property('total_count', 0);
    const configured = await cli(['health', '--url', t.url, '--token', 'x', '--org', 'acme'], { GPUCAP_CONFIG: '/etc/gpucap.yaml' });
    expect(configured.err).to.equal(tokenWarning('/etc/gpucap.yaml'));
  });

  it('says nothing when the token comes from GPUCAP_TOKEN and the URL is this machine or https', async () => {
    const env = { GPUCAP_TOKEN: t.callers.admin.token, GPUCAP_ORG: 'acme' };
    const port = new URL(t.url).port;
    for (const url of [t.url, `http://localhost:${port}`]) {
      const result = await cli(['health', '-o', 'json', '--url', url], env);
      expect(result, url).to.deep.include({ code: 0, err: '' });
    }
    // No service at these: only the connection error, no warning before it.
    for (const url of ['https://gpucap.invalid', `http://127.0.0.2:${port}`, `http://[::1]:${port}`]) {
      const result = await cli(['health', '--url', url], env);
      expect(result.code, url).to.equal(2);
      expect(result.err, url).to.match(/^Cannot reach the service at /);
    }
  });

  it('warns about plain http to another machine before sending the token there', async () => {
    const env = { GPUCAP_TOKEN: t.callers.admin.token, GPUCAP_ORG: 'acme' };
    for (const url of ['http://gpucap.invalid:8080', 'http://gpucap.invalid/base/', 'http://localhost.invalid']) {
      const result = await cli(['health', '--url', url], env);
      expect(result.code, url).to.equal(2);
      const origin = new URL(url).origin;
      expect(result.err.startsWith(httpWarning(origin)), result.err).to.equal(true);
      expect(result.err.slice(httpWarning(origin).length)).to.match(/^Cannot reach the service at /);
    }
    const both = await cli(['health', '--url', 'http://gpucap.invalid', '--token', 'gca_x', '--org', 'acme']);
    expect(both.err.split('\n').slice(0, 2)).to.deep.equal([
      tokenWarning(join(temp.path, '.config', 'gpucap', 'config.yaml')).trimEnd(),
      httpWarning('http://gpucap.invalid').trimEnd(),
    ]);
  });

  it('warns only once the command line is good: a usage error stays the only line', async () => {
    const result = await cli(['workloads', '--status', 'lost', '--url', 'http://gpucap.invalid', '--token', 'x', '--org', 'acme']);
    expect(result).to.deep.include({ code: 1, out: '', err: '--status must be one of pending, running, completed, failed, cancelled, not "lost"\n' });
    const badUrl = await cli(['health', '--url', 'ftp://x', '--token', 'x', '--org', 'acme']);
    expect(badUrl).to.deep.include({ code: 1, err: '--url must be an http:// or https:// URL, not "ftp://x"\n' });
  });
});
