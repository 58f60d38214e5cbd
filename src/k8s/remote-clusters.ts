// Remote clusters from a folder of kubeconfig files (one mounted Secret each): scanned at start and
// then every few seconds, so a file added starts a cluster, a file removed stops it, and a file changed
// (rotated credentials) restarts it. Polling rather than fs.watch: Secret volumes are updated by
// swapping a `..data` symlink, which inotify reports unreliably, and a scan of a few small files is cheap.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterConfigProblem } from '../domain/cluster-status.js';
import type { ClusterManager } from './cluster-manager.js';
import type { K8sLogger } from './kube-object.js';
import { KubeconfigError, kubeconfigFromText } from './kubeconfig.js';

/** Per-file settings (GPUCAP_REMOTE_CLUSTERS). */
export interface RemoteClusterSetting {
  file: string;
  cluster_id?: string;
  organization_id?: string;
}

export interface DirectoryReader {
  /** Entry names of the folder. */
  list(dir: string): string[];
  /** Size in bytes of a regular file (symlinks followed), or null for anything else. */
  fileSize(path: string): number | null;
  read(path: string): string;
}

export interface RemoteClustersOptions {
  dir: string;
  settings: readonly RemoteClusterSetting[];
  /** Ids no remote file may take (the home cluster's). */
  reservedIds: readonly string[];
  intervalMs: number;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: K8sLogger;
  reader?: DirectoryReader;
}

// A kubeconfig is a few KiB; anything this large is a mistake (a wrong mount), not a kubeconfig.
const MAX_FILE_BYTES = 1024 * 1024;
const CLUSTER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const fsDirectoryReader: DirectoryReader = {
  list: (dir) => readdirSync(dir),
  fileSize: (path) => {
    const stat = statSync(path);
    return stat.isFile() ? stat.size : null;
  },
  read: (path) => readFileSync(path, 'utf8'),
};

interface Known {
  text: string;
  clusterId?: string;
}

export class RemoteClusters {
  readonly #manager: ClusterManager;
  readonly #options: RemoteClustersOptions;
  readonly #reader: DirectoryReader;
  readonly #known = new Map<string, Known>();
  readonly #problems = new Map<string, string>();
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(manager: ClusterManager, options: RemoteClustersOptions) {
    this.#manager = manager;
    this.#options = options;
    this.#reader = options.reader ?? fsDirectoryReader;
  }

  /** Scans once (clusters found are watched when this resolves), then keeps scanning until stop(). */
  async start(): Promise<void> {
    await this.scan();
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** Files that could not be turned into a cluster, and why; the folder itself when it cannot be read. */
  problems(): ClusterConfigProblem[] {
    return [...this.#problems].map(([file, message]) => ({ file, message }));
  }

  /** One pass over the folder: apply what was added, changed and removed. */
  async scan(): Promise<void> {
    const { dir, logger } = this.#options;
    let files: Map<string, string>;
    const rejected = new Map<string, string>();
    try {
      files = this.#readFiles(rejected);
      this.#setProblem(dir, null);
    } catch (error) {
      // A folder that cannot be read keeps the clusters already watched: a transient mount problem
      // must not stop every remote cluster.
      this.#setProblem(dir, `Cannot read remote kubeconfig folder "${dir}": ${(error as Error).message}`);
      return;
    }
    for (const [file, known] of [...this.#known]) {
      if (files.has(file) || rejected.has(file)) continue;
      await this.#forget(file);
      if (known.clusterId !== undefined) {
        logger.info({ file, cluster: known.clusterId }, 'Remote kubeconfig removed: cluster no longer watched');
      }
    }
    for (const [file, text] of files) {
      const known = this.#known.get(file);
      // An unchanged file that was rejected is tried again: the id it wanted may have been freed.
      if (known !== undefined && known.text === text && known.clusterId !== undefined) continue;
      if (known?.clusterId !== undefined) await this.#forget(file);
      this.#known.set(file, { text });
      this.#adopt(file, text);
    }
    for (const file of this.#problems.keys()) if (file !== dir && !files.has(file)) this.#problems.delete(file);
    for (const [file, message] of rejected) this.#setProblem(file, message);
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await this.#options.delay(this.#options.intervalMs, signal).catch(() => undefined);
      if (signal.aborted) return;
      try {
        await this.scan();
      } catch (error) {
        this.#options.logger.error({ err: error }, 'Remote kubeconfig scan failed');
      }
    }
  }

  /** Readable files by name; files refused unread (too large) go to `rejected` with the reason. */
  #readFiles(rejected: Map<string, string>): Map<string, string> {
    const { dir } = this.#options;
    const files = new Map<string, string>();
    for (const name of this.#reader.list(dir).sort()) {
      // `..data` and `..2026_…` are the Secret volume's own bookkeeping; hidden files are never clusters.
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      let size: number | null;
      try {
        size = this.#reader.fileSize(path);
      } catch {
        continue; // removed between list and stat: the next scan sees it gone
      }
      if (size === null) continue;
      if (size > MAX_FILE_BYTES) {
        rejected.set(name, `Remote kubeconfig "${path}" is ${size} bytes, more than ` +
          `the ${MAX_FILE_BYTES} a kubeconfig can reasonably be: ignored`);
        continue;
      }
      try {
        files.set(name, this.#reader.read(path));
      } catch (error) {
        // One unreadable file (permissions, removed meanwhile) must not hide the rest of the folder.
        rejected.set(name, `Cannot read remote kubeconfig "${path}": ${(error as Error).message}`);
      }
    }
    return files;
  }

  #adopt(file: string, text: string): void {
    const { dir, settings, reservedIds, logger } = this.#options;
    const setting = settings.find((s) => s.file === file);
    try {
      const loaded = kubeconfigFromText(text, join(dir, file));
      const id = setting?.cluster_id ?? loaded.contextName;
      if (!CLUSTER_ID.test(id)) {
        throw new KubeconfigError(
          `Remote kubeconfig "${file}": its context name "${id}" is not a valid cluster id ` +
            `(letters, digits, ".", "_", "-", at most 63): set cluster_id for it in GPUCAP_REMOTE_CLUSTERS`,
        );
      }
      if (reservedIds.includes(id) || this.#manager.has(id)) {
        throw new KubeconfigError(`Remote kubeconfig "${file}": cluster id "${id}" is already ` +
          `watched: set another cluster_id for it in GPUCAP_REMOTE_CLUSTERS`);
      }
      this.#manager.add({ id, kubeConfig: loaded.kubeConfig, origin: loaded.origin, organizationId: setting?.organization_id });
      this.#known.set(file, { text, clusterId: id });
      this.#setProblem(file, null);
    } catch (error) {
      if (!(error instanceof KubeconfigError)) throw error;
      const repeated = this.#problems.get(file) === error.message;
      this.#setProblem(file, error.message);
      if (!repeated) {
        logger.error({ file, err: { message: error.message, code: error.code } }, 'Remote kubeconfig rejected: its cluster is not watched');
      }
    }
  }

  async #forget(file: string): Promise<void> {
    const known = this.#known.get(file);
    this.#known.delete(file);
    this.#problems.delete(file);
    if (known?.clusterId !== undefined) await this.#manager.remove(known.clusterId);
  }

  #setProblem(file: string, message: string | null): void {
    if (message === null) this.#problems.delete(file);
    else this.#problems.set(file, message);
  }
}
