// RemoteClusters on a real folder laid out as Kubernetes mounts a Secret (files symlinked into
// `..data`), feeding a real ClusterManager: what operators see is which clusters are watched (the
// manager's attach/detach of each cluster's consumer), what problems() reports for /readyz and
// /metrics, and what is logged.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ClusterManager } from '../../src/k8s/cluster-manager.js';
import type { K8sLogger } from '../../src/k8s/kube-object.js';
import { fsDirectoryReader, RemoteClusters, type DirectoryReader, type RemoteClusterSetting } from '../../src/k8s/remote-clusters.js';
import { systemClock } from '../../src/domain/clock.js';
import { realDelay } from '../../src/runtime/periodic.js';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { FAST_INFORMERS } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

const TOKEN = 'remote-token';

/** A kubeconfig whose current context is `context`, pointing at `server`. */
function kubeconfigFor(server: string, context: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': context,
    contexts: [{ name: context, context: { cluster: 'c', user: 'u' } }],
    // The simulated API speaks plain http, which client-node allows only with TLS verification off.
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: TOKEN } }],
  });
}

interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg?: string;
}

function recordingLogger(): K8sLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A delay that resolves when the test says so (or on abort), so the scan loop runs step by step. */
class ManualDelay {
  #pending: (() => void)[] = [];
  #onCall: (() => void)[] = [];
  readonly delay = (_ms: number, signal: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
      this.#pending.push(resolve);
      for (const notify of this.#onCall.splice(0)) notify();
    });

  /** Ends the current wait and resolves once the loop waits again (the work in between is done). */
  async elapse(): Promise<void> {
    const next = new Promise<void>((resolve) => this.#onCall.push(resolve));
    for (const resolve of this.#pending.splice(0)) resolve();
    await next;
  }
}

describe('RemoteClusters', () => {
  let api: KubeApi;
  let closedServer: string;
  let temp: ReturnType<typeof makeTempDir>;
  let dir: string;
  let manager: ClusterManager;
  let attached: string[];
  let log: ReturnType<typeof recordingLogger>;
  let remote: RemoteClusters | undefined;

  before(async () => {
    api = await startKubeApi({ token: TOKEN });
    // A server that was up and is gone: its port refuses connections.
    const gone = await startKubeApi();
    closedServer = gone.url;
    await gone.close();
  });

  after(async () => {
    await api?.close();
  });

  beforeEach(() => {
    temp = makeTempDir();
    dir = join(temp.path, 'clusters');
    mkdirSync(dir);
    attached = [];
    log = recordingLogger();
    manager = new ClusterManager({
      namespaces: [],
      clock: systemClock,
      delay: realDelay,
      logger: recordingLogger(),
      ...FAST_INFORMERS,
      attach: ({ clusterId, organizationId }) => {
        attached.push(`attach ${clusterId}${organizationId === undefined ? '' : ` org=${organizationId}`}`);
        return { onEvent: () => undefined, detach: () => void attached.push(`detach ${clusterId}`) };
      },
    });
  });

  afterEach(async () => {
    await remote?.stop();
    remote = undefined;
    await manager.stop();
    temp.remove();
  });

  function remoteClusters(options: { settings?: RemoteClusterSetting[]; reservedIds?: string[]; delay?: ManualDelay; folder?: string; reader?: DirectoryReader } = {}): RemoteClusters {
    remote = new RemoteClusters(manager, {
      dir: options.folder ?? dir,
      settings: options.settings ?? [],
      reservedIds: options.reservedIds ?? [],
      intervalMs: 5_000,
      delay: options.delay?.delay ?? realDelay,
      logger: log,
      reader: options.reader,
    });
    return remote;
  }

  const write = (name: string, text: string): void => writeFileSync(join(dir, name), text);
  const rejections = (): LogLine[] => log.lines.filter((line) => line.msg === 'Remote kubeconfig rejected: its cluster is not watched');

  it('watches the cluster of each kubeconfig file, with the context name as its id', async () => {
    write('west.kubeconfig', kubeconfigFor(api.url, 'gpu-west'));
    write('east.kubeconfig', kubeconfigFor(closedServer, 'gpu-east'));
    await remoteClusters().scan();
    expect(manager.ids().sort()).to.deep.equal(['gpu-east', 'gpu-west']);
    expect(attached.sort()).to.deep.equal(['attach gpu-east', 'attach gpu-west']);
    expect(remote?.problems()).to.deep.equal([]);
    const west = manager.statuses().find((status) => status.clusterId === 'gpu-west');
    expect(west?.origin).to.equal(join(dir, 'west.kubeconfig'));
  });

  it('connects the cluster it watches to the API server of the kubeconfig', async () => {
    write('west.kubeconfig', kubeconfigFor(api.url, 'gpu-west'));
    await remoteClusters().scan();
    const synced = await waitFor(() => {
      const informers = manager.statuses()[0]?.informers ?? [];
      return informers.length > 0 && informers.every((informer) => informer.synced) ? informers.length : undefined;
    }, { what: 'every gpu-west informer synced', timeoutMs: 10_000 });
    expect(synced).to.equal(4);
  });

  it('takes the cluster id and organization from the remote_clusters setting of the file', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    await remoteClusters({ settings: [{ file: 'west.kubeconfig', cluster_id: 'west-prod', organization_id: 'acme' }] }).scan();
    expect(manager.ids()).to.deep.equal(['west-prod']);
    expect(attached).to.deep.equal(['attach west-prod org=acme']);
  });

  it('ignores hidden files and the Secret volume bookkeeping in ..data', async () => {
    mkdirSync(join(dir, '..2026_05_01_10_00_00.1'));
    write('..2026_05_01_10_00_00.1/west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    symlinkSync('..2026_05_01_10_00_00.1', join(dir, '..data'));
    write('.east.kubeconfig', kubeconfigFor(closedServer, 'gpu-east'));
    await remoteClusters().scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(remote?.problems()).to.deep.equal([]);
  });

  it('follows a file symlinked into ..data, and restarts the cluster when the Secret is updated', async () => {
    // The layout kubelet writes: west.kubeconfig -> ..data/west.kubeconfig, ..data -> ..<timestamp>.
    mkdirSync(join(dir, '..v1'));
    write('..v1/west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync(join('..data', 'west.kubeconfig'), join(dir, 'west.kubeconfig'));
    const clusters = remoteClusters();
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    // Rotated credentials: a new timestamped folder, then ..data swapped to it.
    mkdirSync(join(dir, '..v2'));
    write('..v2/west.kubeconfig', kubeconfigFor(api.url, 'gpu-west'));
    symlinkSync('..v2', join(dir, '..data.tmp'));
    renameSync(join(dir, '..data.tmp'), join(dir, '..data'));
    await clusters.scan();
    expect(attached).to.deep.equal(['attach gpu-west', 'detach gpu-west', 'attach gpu-west']);
  });

  it('restarts the cluster of a changed file, stopping the old one first', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const clusters = remoteClusters();
    await clusters.scan();
    write('west.kubeconfig', kubeconfigFor(api.url, 'gpu-west'));
    await clusters.scan();
    expect(attached).to.deep.equal(['attach gpu-west', 'detach gpu-west', 'attach gpu-west']);
    expect(manager.ids()).to.deep.equal(['gpu-west']);
  });

  it('leaves the cluster of an unchanged file running across scans', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const clusters = remoteClusters();
    await clusters.scan();
    await clusters.scan();
    await clusters.scan();
    expect(attached).to.deep.equal(['attach gpu-west']);
  });

  it('stops watching the cluster of a removed file, and logs it', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    write('east.kubeconfig', kubeconfigFor(closedServer, 'gpu-east'));
    const clusters = remoteClusters();
    await clusters.scan();
    rmSync(join(dir, 'west.kubeconfig'));
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['gpu-east']);
    expect(attached).to.include('detach gpu-west');
    expect(log.lines).to.deep.include({ level: 'info', obj: { file: 'west.kubeconfig', cluster: 'gpu-west' }, msg: 'Remote kubeconfig removed: cluster no longer watched' });
  });

  it('reports a file that is not a kubeconfig, naming it, watches nothing for it, and logs it once', async () => {
    write('README', 'Put one kubeconfig per cluster here.\n');
    const clusters = remoteClusters();
    await clusters.scan();
    await clusters.scan();
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(clusters.problems()).to.deep.equal([{ file: 'README', message: `Kubeconfig "${join(dir, 'README')}" has no current-context` }]);
    expect(rejections()).to.have.length(1);
    expect(rejections()[0]?.level).to.equal('error');
  });

  it('watches a rejected file once it is fixed, and drops its problem', async () => {
    write('west.kubeconfig', 'current-context: [unclosed');
    const clusters = remoteClusters();
    await clusters.scan();
    expect(clusters.problems().map((p) => p.file)).to.deep.equal(['west.kubeconfig']);
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    expect(clusters.problems()).to.deep.equal([]);
  });

  it('drops the problem of a rejected file once it is removed', async () => {
    write('README', 'not a kubeconfig');
    const clusters = remoteClusters();
    await clusters.scan();
    rmSync(join(dir, 'README'));
    await clusters.scan();
    expect(clusters.problems()).to.deep.equal([]);
  });

  it('stops the cluster of a file changed into an invalid kubeconfig, and reports it', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const clusters = remoteClusters();
    await clusters.scan();
    write('west.kubeconfig', kubeconfigFor('west.example:6443', 'gpu-west'));
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(attached).to.deep.equal(['attach gpu-west', 'detach gpu-west']);
    expect(clusters.problems()[0]?.message).to.match(/needs a server URL \(https:\/\/host:port\), got "west.example:6443"$/);
  });

  it('asks for a cluster_id when the context name is not a valid cluster id (an EKS ARN)', async () => {
    write('eks.kubeconfig', kubeconfigFor(closedServer, 'arn:aws:eks:us-west-2:123456789012:cluster/gpu'));
    const clusters = remoteClusters();
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(clusters.problems()).to.deep.equal([
      {
        file: 'eks.kubeconfig',
        message:
          'Remote kubeconfig "eks.kubeconfig": its context name "arn:aws:eks:us-west-2:123456789012:cluster/gpu" is not a valid cluster id (letters, digits, ".", "_", "-", at most 63): set cluster_id for it in GPUCAP_REMOTE_CLUSTERS',
      },
    ]);
  });

  it('watches an EKS kubeconfig under the cluster_id set for it', async () => {
    write('eks.kubeconfig', kubeconfigFor(closedServer, 'arn:aws:eks:us-west-2:123456789012:cluster/gpu'));
    const clusters = remoteClusters({ settings: [{ file: 'eks.kubeconfig', cluster_id: 'eks-gpu' }] });
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['eks-gpu']);
    expect(clusters.problems()).to.deep.equal([]);
  });

  it('rejects a cluster_id setting that is not a valid cluster id either', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const clusters = remoteClusters({ settings: [{ file: 'west.kubeconfig', cluster_id: 'west/prod' }] });
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(clusters.problems()[0]?.message).to.include('"west/prod" is not a valid cluster id');
  });

  it('rejects a file whose cluster id is the home cluster\'s', async () => {
    write('home.kubeconfig', kubeconfigFor(closedServer, 'home'));
    const clusters = remoteClusters({ reservedIds: ['home'] });
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(clusters.problems()).to.deep.equal([
      {
        file: 'home.kubeconfig',
        message: 'Remote kubeconfig "home.kubeconfig": cluster id "home" is already watched: set another cluster_id for it in GPUCAP_REMOTE_CLUSTERS',
      },
    ]);
  });

  it('rejects the second of two files with the same cluster id, keeping the first watched', async () => {
    write('a.kubeconfig', kubeconfigFor(closedServer, 'gpu'));
    write('b.kubeconfig', kubeconfigFor(closedServer, 'gpu'));
    const clusters = remoteClusters();
    await clusters.scan();
    await clusters.scan();
    expect(attached).to.deep.equal(['attach gpu']);
    expect(clusters.problems()).to.deep.equal([
      { file: 'b.kubeconfig', message: 'Remote kubeconfig "b.kubeconfig": cluster id "gpu" is already watched: set another cluster_id for it in GPUCAP_REMOTE_CLUSTERS' },
    ]);
    expect(rejections()).to.have.length(1);
  });

  it('accepts the rejected file, unchanged, once the file holding its id is removed', async () => {
    write('a.kubeconfig', kubeconfigFor(closedServer, 'gpu'));
    write('b.kubeconfig', kubeconfigFor(api.url, 'gpu'));
    const clusters = remoteClusters();
    await clusters.scan();
    rmSync(join(dir, 'a.kubeconfig'));
    await clusters.scan();
    expect(attached).to.deep.equal(['attach gpu', 'detach gpu', 'attach gpu']);
    expect(manager.statuses()[0]?.origin).to.equal(join(dir, 'b.kubeconfig'));
    expect(clusters.problems()).to.deep.equal([]);
  });

  it('refuses a file larger than 1 MiB without reading it as a kubeconfig', async () => {
    const padded = `${kubeconfigFor(closedServer, 'gpu-big')}\n${'#'.repeat(1024 * 1024)}\n`;
    write('big.kubeconfig', padded);
    const clusters = remoteClusters();
    await clusters.scan();
    expect(manager.ids()).to.deep.equal([]);
    expect(clusters.problems()).to.deep.equal([
      {
        file: 'big.kubeconfig',
        message: `Remote kubeconfig "${join(dir, 'big.kubeconfig')}" is ${Buffer.byteLength(padded)} bytes, more than the 1048576 a kubeconfig can reasonably be: ignored`,
      },
    ]);
  });

  it('reports a file it cannot read and still applies the rest of the folder', async () => {
    write('locked.kubeconfig', kubeconfigFor(closedServer, 'gpu-locked'));
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    // Root reads any file, so the permission error is injected at the one read that must fail.
    const reader: DirectoryReader = {
      ...fsDirectoryReader,
      read: (path) => {
        if (path.endsWith('locked.kubeconfig')) throw new Error(`EACCES: permission denied, open '${path}'`);
        return fsDirectoryReader.read(path);
      },
    };
    const clusters = remoteClusters({ reader });
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    expect(clusters.problems()).to.deep.equal([
      { file: 'locked.kubeconfig', message: `Cannot read remote kubeconfig "${join(dir, 'locked.kubeconfig')}": EACCES: permission denied, open '${join(dir, 'locked.kubeconfig')}'` },
    ]);
  });

  it('reports a missing folder, naming it', async () => {
    const missing = join(temp.path, 'not-mounted');
    const clusters = remoteClusters({ folder: missing });
    await clusters.scan();
    expect(clusters.problems()).to.have.length(1);
    expect(clusters.problems()[0]?.file).to.equal(missing);
    expect(clusters.problems()[0]?.message).to.match(new RegExp(`^Cannot read remote kubeconfig folder "${missing}": ENOENT`));
  });

  it('reports a folder that is not readable as a folder, naming it', async () => {
    const notAFolder = join(temp.path, 'a-file');
    writeFileSync(notAFolder, 'oops');
    const clusters = remoteClusters({ folder: notAFolder });
    await clusters.scan();
    expect(clusters.problems()[0]?.message).to.match(new RegExp(`^Cannot read remote kubeconfig folder "${notAFolder}": ENOTDIR`));
  });

  it('keeps watching its clusters while the folder is gone, and clears the problem once it is back', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const clusters = remoteClusters();
    await clusters.scan();
    renameSync(dir, `${dir}.away`);
    await clusters.scan();
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    expect(attached).to.deep.equal(['attach gpu-west']);
    expect(clusters.problems().map((p) => p.file)).to.deep.equal([dir]);
    renameSync(`${dir}.away`, dir);
    await clusters.scan();
    expect(clusters.problems()).to.deep.equal([]);
    expect(attached).to.deep.equal(['attach gpu-west']);
  });

  it('watches the clusters found when start() resolves, then follows the folder every interval until stop()', async () => {
    write('west.kubeconfig', kubeconfigFor(closedServer, 'gpu-west'));
    const delay = new ManualDelay();
    const clusters = remoteClusters({ delay });
    await clusters.start();
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    write('east.kubeconfig', kubeconfigFor(closedServer, 'gpu-east'));
    expect(manager.ids()).to.deep.equal(['gpu-west']);
    await delay.elapse();
    expect(manager.ids().sort()).to.deep.equal(['gpu-east', 'gpu-west']);
    // Removed while the loop waits: stop() ends the wait, and no scan runs after it.
    rmSync(join(dir, 'west.kubeconfig'));
    await clusters.stop();
    remote = undefined;
    expect(manager.ids().sort()).to.deep.equal(['gpu-east', 'gpu-west']);
  });
});
