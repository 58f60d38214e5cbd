// A real etcd + kube-apiserver (v1.20) for the e2e tests, through scripts/envtest/start.sh and
// stop.sh. One instance per test file: start it in before(), stop it in after(). Whatever happens,
// the processes do not outlive the test run (stop() in after(), and a kill on process exit).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { cleanUpOnExit, forgetCleanup, readEnvFile, signal } from '../exit-cleanup.js';
import { makeTempDir } from '../temp-dir.js';
import { sendJson } from './admin-client.js';

const run = promisify(execFile);
const ENVTEST_SCRIPTS = fileURLToPath(new URL('../../../scripts/envtest/', import.meta.url));
/** What a developer runs once (about 20 minutes the first time, then cached); .ci/run does it in CI. */
export const ENVTEST_INSTALL_HINT = 'export ENVTEST_BIN=$(bash scripts/envtest/install.sh)';

export interface Envtest {
  dir: string;
  /** https://127.0.0.1:PORT, the same across API-server restarts. */
  url: string;
  /** cluster-admin: for test setup only. */
  adminKubeconfig: string;
  /** User gpucap-reader: no rights until bindChartRulesToReader(); what the service runs as. */
  readerKubeconfig: string;
  /** Stops the kube-apiserver alone; etcd keeps running with its data. */
  stopApiServer(): Promise<void>;
  /** Starts the kube-apiserver again on the same port, with the same tokens and certificates. */
  startApiServer(): Promise<void>;
  /** stopApiServer() then startApiServer(). */
  restartApiServer(): Promise<void>;
  /** Stops both processes and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * The rule for suites that need a real API server: run when ENVTEST_BIN is set; in CI without it,
 * fail (these tests must run there); on a developer machine without it, skip with a hint.
 */
export async function startEnvtestOrSkip(context: Mocha.Context, options: { apiserverFlags?: string } = {}): Promise<Envtest> {
  const bin = process.env.ENVTEST_BIN;
  if (bin === undefined || bin === '') {
    if (process.env.CI) throw new Error(`Cannot run the real-API e2e tests: ENVTEST_BIN is not set, and CI must run them (${ENVTEST_INSTALL_HINT})`);
    console.log(`      skipped: these tests need a real kube-apiserver; run \`${ENVTEST_INSTALL_HINT}\` first`);
    context.skip();
  }
  for (const name of ['etcd', 'kube-apiserver']) {
    if (!existsSync(join(bin, name))) throw new Error(`Cannot start envtest: ENVTEST_BIN="${bin}" has no ${name} (${ENVTEST_INSTALL_HINT})`);
  }
  return startEnvtest(options);
}

export async function startEnvtest(options: { apiserverFlags?: string } = {}): Promise<Envtest> {
  const temp = makeTempDir('gpucap-envtest-');
  const dir = temp.path;
  const env: NodeJS.ProcessEnv = { ...process.env, ENVTEST_APISERVER_FLAGS: options.apiserverFlags ?? '' };
  cleanUpOnExit(dir, () => {
    killRecorded(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (): Promise<void> => {
    try {
      await run('bash', [join(ENVTEST_SCRIPTS, 'start.sh'), dir], { env, timeout: 90_000 });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim();
      throw new Error(`Cannot start envtest in "${dir}": ${stderr || (error as Error).message}`, { cause: error });
    }
  };
  const stopApiServer = async (): Promise<void> => {
    await run('bash', [join(ENVTEST_SCRIPTS, 'stop.sh'), '--apiserver-only', dir], { timeout: 30_000 });
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await run('bash', [join(ENVTEST_SCRIPTS, 'stop.sh'), dir], { timeout: 30_000 }).catch(() => killRecorded(dir));
    forgetCleanup(dir);
    reportPanics(dir);
    temp.remove();
  };
  try {
    await start();
    await probeObjectCoding(join(dir, 'kubeconfig'), dir);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    dir,
    url: readEnvFile(dir).ENVTEST_APISERVER_URL ?? '',
    adminKubeconfig: join(dir, 'kubeconfig'),
    readerKubeconfig: join(dir, 'kubeconfig-reader'),
    stopApiServer,
    startApiServer: start,
    async restartApiServer() {
      await stopApiServer();
      await start();
    },
    stop,
  };
}

/**
 * A dry-run create of a Node with a capacity map. A kube-apiserver 1.20 built with Go >= 1.18 against
 * its vendored reflect2 1.0.1 can get into a state where it panics on every Pod, Node or Job it decodes
 * or encodes as JSON; a binary that starts that way fails here with the reason, instead of as obscure
 * stream errors in every test.
 */
async function probeObjectCoding(adminKubeconfig: string, dir: string): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(adminKubeconfig);
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'envtest-probe' }, status: { capacity: { cpu: '1' } } };
  const response = await sendJson(kubeConfig, 'POST', '/api/v1/nodes?dryRun=All', node).catch((error: unknown) => ({ status: 0, body: (error as Error).message }));
  if (response.status === 201) return;
  const log = readFileSync(join(dir, 'apiserver.log'), 'utf8');
  const reflect2Panic = /Observed a panic[\s\S]*?modern-go\/reflect2/.test(log);
  throw new Error(
    `Cannot use the envtest kube-apiserver: a dry-run create of a Node answered ${response.status || 'no response'} (${JSON.stringify(response.body).slice(0, 200)})` +
      (reflect2Panic ? '; its log shows a panic in modern-go/reflect2: the binary was built with Go >= 1.18 against reflect2 1.0.1 and must be rebuilt with reflect2 >= 1.0.2' : ''),
  );
}

/** A panic in the API server explains odd failures (reset streams, 500s): say so before the log goes. */
function reportPanics(dir: string): void {
  const file = join(dir, 'apiserver.log');
  if (!existsSync(file)) return;
  const log = readFileSync(file, 'utf8');
  const panics = log.split('Observed a panic').length - 1;
  if (panics === 0) return;
  const first = log.slice(log.indexOf('Observed a panic')).split('\n').filter((line) => !/^\s/.test(line)).slice(0, 6).join('\n  ');
  console.warn(`      envtest: the kube-apiserver logged ${panics} panic(s); the first:\n  ${first}`);
}

function killRecorded(dir: string): void {
  const env = readEnvFile(dir);
  for (const pid of [env.ENVTEST_APISERVER_PID, env.ENVTEST_ETCD_PID]) signal(pid, 'SIGKILL');
}
