// The image deploy/Dockerfile builds (scripts/image/build.sh), run with podman as an operator would
// run it: read-only root filesystem, one named volume for the index, credentials mounted read-only,
// the home cluster a kubeconfig away (the simulated API server on loopback; podman uses host
// networking here). Run by `npm run test:image` (and .ci/run), not by `npm test`: it needs root,
// Debian's podman and the built image.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { freePorts } from '../support/free-port.js';
import { aGpuJob, aGpuNode, aGpuPod, aNamespace, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { IMAGE_HINT, podman, podmanOk, REPO_DIR, requireContainerTools, serviceImage } from '../support/container-tools.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const INDEX_DIR = '/var/lib/gpu-capacity-api';
/** The service's defaults (docs/image.md): SIGTERM → 5 s still serving → up to 10 s for requests. */
const SHUTDOWN_DELAY_SECONDS = 5;
/** What the chart gives the pod between SIGTERM and SIGKILL (terminationGracePeriodSeconds). */
const GRACE_PERIOD_SECONDS = 30;

interface Started {
  name: string;
  api: string;
  admin: string;
}

describe('the container image, run with podman', function () {
  this.timeout(10 * 60_000);
  const suffix = `${process.pid}-${Date.now().toString(36)}`;
  const volume = `gpucap-image-test-${suffix}`;
  const containers: string[] = [];
  const temp = makeTempDir('gpucap-image-');
  const token = generateApiToken();
  let image: string;
  let sim: SimCluster;
  let first: Started;

  before(async function () {
    requireContainerTools(this, 'the image tests', IMAGE_HINT);
    image = await serviceImage();
    console.log(`      image ${image}`);
    sim = await startSimCluster(temp.path, 'image-test');
    const store = sim.api.store;
    const started = Date.now() - 60_000;
    store.create('namespaces', aNamespace('team-vision', { 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': 'vision' }));
    store.create('nodes', aGpuNode('gpu-node-1', 'p5.48xlarge'));
    const job = store.create('jobs', aGpuJob('team-vision', 'resnet', 2));
    store.patchStatus('jobs', job.metadata, { startTime: new Date(started).toISOString(), active: 1 });
    const pod = store.create('pods', aGpuPod('team-vision', 'resnet-abcde', { job, node: 'gpu-node-1', gpus: 2 }));
    store.patchStatus('pods', pod.metadata, running(started));
    const files = {
      'tokens.yaml': `tokens:\n  - id: image-test\n    sha256: ${hashApiToken(token)}\n    organization_id: acme\n    role: ORG_ADMIN\n`,
      kubeconfig: sim.api.kubeconfig(),
    };
    for (const [name, content] of Object.entries(files)) {
      writeFileSync(join(temp.path, name), content);
      chmodSync(join(temp.path, name), 0o644); // read by UID 65532 through the bind mount
    }
    await podmanOk(['volume', 'create', volume]);
    first = await start('first', { cluster: true });
  });

  after(async () => {
    for (const name of containers) await podman(['rm', '--force', '--time', '0', name]);
    await podman(['volume', 'rm', '--force', volume]);
    await sim?.close();
    temp.remove();
  });

  /** Starts the image with the index volume and the token file, and waits for /readyz. */
  async function start(label: string, options: { cluster: boolean }): Promise<Started> {
    const name = `gpucap-image-test-${label}-${suffix}`;
    const [apiPort, adminPort] = await freePorts(2);
    const env: Record<string, string> = {
      GPUCAP_LISTEN: `127.0.0.1:${apiPort}`,
      GPUCAP_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      GPUCAP_API_TOKENS_FILE: '/etc/gpucap/tokens.yaml',
      GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
      GPUCAP_TELEMETRY_ENABLED: 'false',
      // /metrics behind TokenReview is the cluster test's (test/cluster): the simulated API server answers none.
      GPUCAP_ADMIN_AUTH: 'none',
      ...(options.cluster ? { GPUCAP_KUBECONFIG: '/etc/gpucap/kubeconfig', GPUCAP_CLUSTER_ID: 'image-test' } : { GPUCAP_HOME_CLUSTER_ENABLED: 'false' }),
    };
    containers.push(name);
    await podmanOk([
      'run', '--detach', '--name', name, '--network', 'host',
      // Only the volume is writable: no root filesystem, and none of podman's /tmp, /var/tmp or /run tmpfs.
      '--read-only', '--read-only-tmpfs=false',
      '--volume', `${volume}:${INDEX_DIR}`,
      '--volume', `${join(temp.path, 'tokens.yaml')}:/etc/gpucap/tokens.yaml:ro`,
      ...(options.cluster ? ['--volume', `${join(temp.path, 'kubeconfig')}:/etc/gpucap/kubeconfig:ro`] : []),
      ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      image,
    ]);
    const started = { name, api: `http://127.0.0.1:${apiPort}`, admin: `http://127.0.0.1:${adminPort}` };
    await waitFor(async () => (await fetch(`${started.admin}/readyz`)).status === 200, {
      timeoutMs: 60_000,
      what: `${name} to answer /readyz 200`,
    }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- podman logs ---\n${(await podman(['logs', name])).stderr}`, { cause: error });
    });
    return started;
  }

  const authorized = { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' };
  const workloadNames = async (service: Started): Promise<string[]> => {
    const response = await fetch(`${service.api}/v1/workloads`, { headers: authorized });
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { data: { workloads: Array<{ name: string }> } };
    return body.data.workloads.map((workload) => workload.name);
  };

  it('prints its size', async () => {
    const bytes = Number(await podmanOk(['image', 'inspect', '--format', '{{.Size}}', image]));
    console.log(`      ${image}: ${(bytes / 1e6).toFixed(0)} MB`);
    expect(bytes).to.be.greaterThan(0);
  });

  it('runs every process as UID and GID 65532, under tini as PID 1', async () => {
    expect(await podmanOk(['image', 'inspect', '--format', '{{.Config.User}}', image])).to.equal('65532:65532');
    // One line per process: pid, real/effective/saved/fs UIDs, the same GIDs, then its command line.
    const script = 'for p in /proc/[0-9]*; do echo "${p#/proc/}|$(grep ^Uid: $p/status | cut -f2-)|$(grep ^Gid: $p/status | cut -f2-)|$(tr "\\0" " " < $p/cmdline)"; done';
    const processes = (await podmanOk(['exec', first.name, 'sh', '-c', script])).split('\n').map((line) => {
      const [pid, uids, gids, command] = line.split('|');
      return { pid, uids: new Set(uids?.split(/\s+/)), gids: new Set(gids?.split(/\s+/)), command: command?.trim() };
    });
    expect(processes.find((p) => p.pid === '1')?.command).to.equal('/usr/bin/tini -- node dist/src/main.js');
    expect(processes.map((p) => p.command)).to.include('node dist/src/main.js');
    for (const process of processes) {
      expect(process.uids, `UIDs of ${process.command}`).to.deep.equal(new Set(['65532']));
      expect(process.gids, `GIDs of ${process.command}`).to.deep.equal(new Set(['65532']));
    }
  });

  it('answers /readyz and /v1/health, and serves the GPU Job of the cluster it watches', async () => {
    const readyz = await fetch(`${first.admin}/readyz`);
    expect(readyz.status).to.equal(200);
    expect(await readyz.json()).to.deep.include({ ready: true, shuttingDown: false });
    const health = await fetch(`${first.api}/v1/health`);
    expect(health.status).to.equal(200);
    expect(((await health.json()) as { data: { version: string } }).data.version).to.equal(JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')).version);
    expect(await waitFor(async () => (await workloadNames(first)).includes('resnet') && workloadNames(first), { timeoutMs: 30_000, what: 'the Job to be indexed' })).to.deep.equal(['resnet']);
  });

  it('serves the web console it was built with: the page at /, its script under /ui/, with the CSP', async () => {
    const page = await fetch(`${first.api}/`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.include("script-src 'self'");
    const script = /<script type="module" src="(\/ui\/console-[A-Z0-9]{8}\.js)"><\/script>/.exec(await page.text())?.[1];
    expect(script, 'the page names its script').to.be.a('string');
    const asset = await fetch(`${first.api}${script}`);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect((await asset.text()).length).to.be.greaterThan(20_000);
  });

  it('writes nothing but the index volume: SQLite keeps its WAL there, and the root filesystem is read-only', async () => {
    const attempt = async (path: string) => (await podman(['exec', first.name, 'sh', '-c', `: > ${path}`])).code === 0;
    expect(await attempt(`${INDEX_DIR}/probe`), 'the index volume').to.be.true;
    for (const path of ['/app/probe', '/tmp/probe', '/var/tmp/probe', '/run/probe', '/etc/probe', '/probe']) {
      expect(await attempt(path), path).to.be.false;
    }
    const files = (await podmanOk(['exec', first.name, 'ls', '-n', INDEX_DIR])).split('\n');
    expect(files.map((line) => line.split(/\s+/).pop())).to.include.members(['index.db', 'index.db-wal', 'index.db-shm']);
    const owners = files.filter((line) => /index\.db/.test(line)).map((line) => line.split(/\s+/).slice(2, 4).join(':'));
    expect(new Set(owners)).to.deep.equal(new Set(['65532:65532']));
  });

  it(`drains on SIGTERM: /readyz 503 at once, the API still answers for ${SHUTDOWN_DELAY_SECONDS} s, then exit code 0 well within the grace period`, async () => {
    const started = Date.now();
    await podmanOk(['kill', '--signal', 'TERM', first.name]);
    const readyz = await waitFor(async () => {
      const response = await fetch(`${first.admin}/readyz`);
      return response.status === 503 && response;
    }, { timeoutMs: 3_000, what: '/readyz to answer 503 after SIGTERM' });
    expect(await readyz.json()).to.deep.include({ ready: false, shuttingDown: true });
    expect(await workloadNames(first), 'the API during the shutdown delay').to.deep.equal(['resnet']);
    const exitCode = await podmanOk(['wait', first.name], { timeoutMs: GRACE_PERIOD_SECONDS * 1000 });
    const seconds = (Date.now() - started) / 1000;
    console.log(`      exited ${exitCode} ${seconds.toFixed(1)} s after SIGTERM`);
    const logs = (await podman(['logs', first.name])).stdout;
    // The log's stop lines say which part held the exit up, should the bound fail.
    const stopLog = logs.split('\n').filter((line) => /shutting down|draining|stopp|Stopp|"level":(40|50)/.test(line)).join('\n');
    expect(exitCode, stopLog).to.equal('0');
    expect(seconds, stopLog).to.be.within(SHUTDOWN_DELAY_SECONDS - 0.5, GRACE_PERIOD_SECONDS);
    expect(logs).to.match(/"msg":"(Stopped|stopped)[^"]*"/);
  });

  it('keeps the index across a restart on the same volume: a new container with no cluster serves the same workloads', async () => {
    const second = await start('second', { cluster: false });
    expect(await workloadNames(second)).to.deep.equal(['resnet']);
  });

  it('holds no npm, no compiler and no dev dependency', async () => {
    const tools = await podman(['run', '--rm', '--entrypoint', 'sh', image, '-c', 'for t in npm npx corepack yarn gcc g++ cc c++ make python3 tsc tsx; do command -v "$t"; done; ls /usr/local/include/node 2>/dev/null; true']);
    expect(tools.stdout.trim(), 'tools found in the image').to.equal('');
    const listing = await podmanOk([
      'run', '--rm', '--entrypoint', 'node', image, '-e',
      `const fs = require('fs'), path = require('path'), found = [];
       (function walk(dir) {
         for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
           if (!entry.isDirectory() || entry.name === '.bin') continue;
           const full = path.join(dir, entry.name);
           if (entry.name.startsWith('@')) { walk(full); continue; }
           found.push(path.relative('/app', full));
           if (fs.existsSync(path.join(full, 'node_modules'))) walk(path.join(full, 'node_modules'));
         }
       })('/app/node_modules');
       console.log(JSON.stringify(found));`,
    ]);
    const installed = JSON.parse(listing) as string[];
    const lock = JSON.parse(readFileSync(join(REPO_DIR, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    expect(installed).to.include.members(['node_modules/better-sqlite3', 'node_modules/koa', 'node_modules/@kubernetes/client-node']);
    const devOnly = installed.filter((pkg) => lock.packages[pkg]?.dev === true);
    expect(devOnly, 'dev-only packages in /app/node_modules').to.deep.equal([]);
    const unknown = installed.filter((pkg) => lock.packages[pkg] === undefined);
    expect(unknown, 'packages that package-lock.json does not list').to.deep.equal([]);
  });
});
