// The real process: `node --import tsx src/main.ts` with its configuration in env vars, as the image
// runs it (from dist/). It logs `listening`, serves, and on SIGTERM drains, logs `stopped` and exits 0;
// a bad configuration exits 2 naming the setting.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { freePorts } from '../support/free-port.js';
import { makeTempDir } from '../support/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START_TIMEOUT_MS = 15_000;

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function logLines(run: Run): { msg?: string; [key: string]: unknown }[] {
  return run.stdout
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { msg?: string });
}

/** Starts src/main.ts with only the given GPUCAP_* variables (none inherited from this process). */
function startProcess(gpucapEnv: Record<string, string>): Run {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('GPUCAP_') && name !== 'NODE_OPTIONS') env[name] = value;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: { ...env, ...gpucapEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: Run = {
    child,
    stdout: [],
    stderr: [],
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => run.stdout.push(chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => run.stderr.push(chunk));
  return run;
}

/** Resolves with the `listening` log line; rejects when the process exits first or takes too long. */
async function listening(run: Run): Promise<{ api: string; admin: string }> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const line = run.stdout.join('').split('\n').find((l) => l.includes('"msg":"listening"'));
    if (line) return JSON.parse(line) as { api: string; admin: string };
    if (run.child.exitCode !== null) throw new Error(`The process exited (${run.child.exitCode}) before listening: ${run.stderr.join('')}`);
    if (Date.now() > deadline) throw new Error(`No "listening" line within ${START_TIMEOUT_MS} ms: ${run.stdout.join('')}${run.stderr.join('')}`);
    await sleep(50);
  }
}


describe('entry point (child process)', function () {
  this.timeout(40_000);
  const temp = makeTempDir('gpucap-entry-');
  const token = generateApiToken();
  const tokensFile = join(temp.path, 'tokens.json');
  const running: Run[] = [];
  let blocker: Server | undefined;

  // The test backend's index: SQLite in a folder the service creates, or a PostgreSQL database.
  let index: TestIndexLocation | undefined;
  const baseEnv = () => ({ ...index?.env, GPUCAP_API_TOKENS_FILE: tokensFile, GPUCAP_LOG_LEVEL: 'info', GPUCAP_SHUTDOWN_DELAY_SECONDS: '0', GPUCAP_HOME_CLUSTER_ENABLED: 'false', GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false', GPUCAP_ADMIN_AUTH: 'none' });

  before(async () => {
    index = await testIndexLocation(join(temp.path, 'data'));
    writeFileSync(tokensFile, JSON.stringify({ tokens: [{ id: 'ops', sha256: hashApiToken(token), organization_id: 'acme', role: 'ORG_ADMIN' }] }));
  });
  after(async () => {
    for (const run of running) {
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill('SIGKILL');
        await run.exited;
      }
    }
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    await index?.remove();
    temp.remove();
  });

  it('serves on the configured ports, then on SIGTERM drains, logs stopped and exits 0', async () => {
    const [apiPort, adminPort] = await freePorts(2);
    const run = startProcess({ ...baseEnv(), GPUCAP_LISTEN: `127.0.0.1:${apiPort}`, GPUCAP_ADMIN_LISTEN: `127.0.0.1:${adminPort}` });
    running.push(run);

    const addresses = await listening(run);
    expect(addresses).to.include({ api: `127.0.0.1:${apiPort}`, admin: `127.0.0.1:${adminPort}` });

    const health = await fetch(`http://127.0.0.1:${apiPort}/v1/health`);
    expect(health.status).to.equal(200);
    expect(((await health.json()) as { data: unknown }).data).to.deep.include({ status: 'healthy' });
    const list = await fetch(`http://127.0.0.1:${apiPort}/v1/workloads`, { headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' } });
    expect(list.status).to.equal(200);
    expect((await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status).to.equal(200);

    run.child.kill('SIGTERM');
    const exit = await run.exited;
    expect(exit, run.stderr.join('')).to.deep.equal({ code: 0, signal: null });
    const messages = logLines(run).map((line) => line.msg);
    expect(messages).to.include.members(['listening', 'shutting down', 'draining requests', 'stopped']);
    expect(messages.indexOf('stopped'), messages.join(' | ')).to.be.greaterThan(messages.indexOf('draining requests'));
    expect(run.stdout.join('')).to.not.contain(token);
  });

  it('exits 2 on a bad configuration, naming the setting on stderr, without listening', async () => {
    const run = startProcess({ ...baseEnv(), GPUCAP_LISTEN: 'nonsense', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0' });
    running.push(run);
    const exit = await run.exited;
    expect(exit).to.deep.equal({ code: 2, signal: null });
    const stderr = run.stderr.join('');
    expect(stderr).to.contain('Invalid configuration');
    expect(stderr).to.match(/GPUCAP_LISTEN: /);
    expect(run.stdout.join('')).to.not.contain('"msg":"listening"');
  });

  it('exits 2 reporting every configuration problem at once', async () => {
    const run = startProcess({ GPUCAP_DB_PATH: join(temp.path, 'other.db'), GPUCAP_LOG_LEVEL: 'loud', GPUCAP_LISTEN_PORT: '8080' });
    running.push(run);
    const exit = await run.exited;
    expect(exit.code).to.equal(2);
    const stderr = run.stderr.join('');
    expect(stderr).to.contain('GPUCAP_LOG_LEVEL: must be one of');
    expect(stderr).to.contain('GPUCAP_LISTEN_PORT: unknown setting');
    expect(stderr).to.contain('No credential source');
  });

  it('exits 2 naming every place it looked when the home cluster has no kubeconfig', async () => {
    const run = startProcess({ ...baseEnv(), GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_LISTEN: '127.0.0.1:0', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0', HOME: temp.path, KUBECONFIG: '' });
    running.push(run);
    const exit = await run.exited;
    expect(exit.code).to.equal(2);
    expect(run.stderr.join('')).to.match(/^No kubeconfig for the home cluster: set GPUCAP_KUBECONFIG, .*GPUCAP_HOME_CLUSTER_ENABLED=false/m);
  });

  it('exits 2 without a kubeconfig under admin_auth kubernetes (the default) alone, saying why it needs one and how to do without', async () => {
    const { GPUCAP_ADMIN_AUTH: _none, ...env } = baseEnv();
    const run = startProcess({ ...env, GPUCAP_LISTEN: '127.0.0.1:0', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0', HOME: temp.path, KUBECONFIG: '' });
    running.push(run);
    const exit = await run.exited;
    expect(exit.code).to.equal(2);
    const stderr = run.stderr.join('');
    expect(stderr).to.match(/^No kubeconfig for the home cluster: /m);
    expect(stderr).to.contain('GPUCAP_ADMIN_AUTH=kubernetes (the default) needs it too').and.contain('GPUCAP_ADMIN_AUTH=none');
  });

  it('exits 2 quoting the file when GPUCAP_KUBECONFIG is not a usable kubeconfig', async () => {
    const file = join(temp.path, 'broken.kubeconfig');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const run = startProcess({ ...baseEnv(), GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: file, GPUCAP_LISTEN: '127.0.0.1:0', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0' });
    running.push(run);
    const exit = await run.exited;
    expect(exit.code).to.equal(2);
    expect(run.stderr.join('')).to.contain(`Kubeconfig "${file}" has no current-context`);
  });

  it('exits 1 with a one-line reason when a port is taken', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker?.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    const run = startProcess({ ...baseEnv(), GPUCAP_LISTEN: `127.0.0.1:${taken}`, GPUCAP_ADMIN_LISTEN: '127.0.0.1:0' });
    running.push(run);
    const exit = await run.exited;
    expect(exit.code).to.equal(1);
    expect(run.stderr.join('')).to.match(/^gpu-capacity-api failed to start: .*EADDRINUSE/m);
  });
});
