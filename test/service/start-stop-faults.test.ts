// A start that fails at any step, and a stop() in which any step fails, leave nothing behind: both
// ports can be bound again, the index is closed (SQLite: its WAL checkpointed away, no other
// connection holds the file; PostgreSQL: no session of the service left on its database), no watch
// stays open on either cluster, and the lifetime totals are written. The service
// runs with every part it can have: the home cluster and a remote one (simulated API servers),
// capacity ConfigMaps, a read worker, the sampler against a simulated dcgm-exporter.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { pino } from 'pino';
import sinon from 'sinon';
import { SimDcgmFleet } from '../../sim/dcgm-exporter/fleet.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { loadConfig } from '../../src/config/load.js';
import { ClusterManager } from '../../src/k8s/cluster-manager.js';
import { RemoteClusters } from '../../src/k8s/remote-clusters.js';
import { startService, type RunningService } from '../../src/service/start-service.js';
import { Disposables, type Dispose } from '../../src/runtime/disposables.js';
import { ReadPool } from '../../src/store/sqlite/threads/read-pool.js';
import { Sampler } from '../../src/telemetry/scrape/sampler.js';
import { otherSessions, sqliteOnly, TEST_BACKEND, testIndexLocation, type TestIndexLocation } from '../support/backend.js';
import { freePorts } from '../support/free-port.js';
import { FAST_INFORMERS, aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, running, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

/** The parts of a service with everything on, in the order stop() undoes them. */
const STOP_ORDER = [
  'API listener',
  'authenticator',
  'writer holders loop',
  'readiness loop',
  'remote kubeconfigs',
  'fleet history loop',
  'index flush loop',
  'prices watch',
  'capacity watch',
  'clusters',
  'sampler',
  ...(TEST_BACKEND === 'sqlite' ? ['lifetime flush loop', 'retention', 'lifetime totals'] : ['telemetry summaries loop', 'telemetry summaries', 'retention']),
  'admin listener',
  'event loop monitor',
  'index',
  'metrics registry',
];

const silent = pino({ level: 'silent' });

/**
 * The service's own undo list, with one injected fault: at start, the step right after `step`
 * fails (so everything up to `step` was started); at stop, `step` does its work, then throws.
 */
class FaultyParts extends Disposables {
  readonly #fault: { at: 'start' | 'stop'; step: string } | undefined;
  constructor(fault?: { at: 'start' | 'stop'; step: string }) {
    super(silent);
    this.#fault = fault;
  }
  override add(name: string, dispose: Dispose): void {
    if (this.#fault?.at === 'stop' && this.#fault.step === name) {
      super.add(name, async () => {
        await dispose();
        throw new Error(`injected: ${name} failed to stop`);
      });
      return;
    }
    super.add(name, dispose);
    if (this.#fault?.at === 'start' && this.#fault.step === name) throw new Error(`injected: the start step after ${name} failed`);
  }
}

/** True when 127.0.0.1:port can be bound: nothing of the service still listens there. */
async function canBind(port: number): Promise<boolean> {
  const server: Server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * No connection holds the index: SQLite removed the WAL file when the last one closed, and the file
 * can leave WAL mode, which needs every other connection gone.
 */
function indexClosed(dbPath: string): { walLeft: boolean; journalMode: string } {
  const walLeft = existsSync(`${dbPath}-wal`);
  const db = new BetterSqlite3(dbPath, { timeout: 0 });
  try {
    return { walLeft, journalMode: String(db.pragma('journal_mode = DELETE', { simple: true })) };
  } catch (error) {
    return { walLeft, journalMode: (error as Error).message };
  } finally {
    db.close();
  }
}

function sqlitePath(index: TestIndexLocation): string {
  if (index.kind !== 'sqlite') throw new Error(`Cannot read the lifetime totals: the index is on ${index.kind}, not SQLite`);
  return index.path;
}

/** The lifetime totals in the index (read-only: check indexClosed first, a reader leaves the WAL file behind). */
function lifetimeRows(dbPath: string): { workload_id: string; metric: string; sample_count: number }[] {
  const db = new BetterSqlite3(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT workload_id, metric, sample_count FROM workload_gpu_lifetime ORDER BY metric').all() as { workload_id: string; metric: string; sample_count: number }[];
  } finally {
    db.close();
  }
}

describe('start and stop never leak', function () {
  this.timeout(60_000);
  let temp: ReturnType<typeof makeTempDir>;
  let east: SimCluster;
  let west: SimCluster;
  let fleet: SimDcgmFleet;
  let job: KubeObject;
  const token = generateApiToken();
  let cases = 0;

  before(async () => {
    temp = makeTempDir();
    east = await startSimCluster(temp.path, 'gpu-east');
    west = await startSimCluster(temp.path, 'gpu-west');
    mkdirSync(join(temp.path, 'remote'));
    writeFileSync(join(temp.path, 'remote', 'gpu-west.kubeconfig'), west.api.kubeconfig());
    writeFileSync(join(temp.path, 'tokens.json'), JSON.stringify({ tokens: [{ id: 'admin', sha256: hashApiToken(token), organization_id: 'acme', role: 'ORG_ADMIN', initiatives: [] }] }));
    fleet = await SimDcgmFleet.start();
    const store = east.api.store;
    store.create('namespaces', aNamespace('llm', { 'gpucap.io/organization': 'acme' }));
    store.create('namespaces', aNamespace('gpu-operator'));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    const started = Date.now() - 600_000;
    job = store.create('jobs', aGpuJob('llm', 'train', 1));
    store.patchStatus('jobs', job.metadata, { startTime: new Date(started).toISOString(), active: 1 });
    const pod = store.create('pods', aGpuPod('llm', 'train-0', { gpus: 1, node: 'h100-1', job }));
    store.patchStatus('pods', pod.metadata, running(started));
    const exporter = await fleet.add({
      hostname: 'h100-1',
      gpus: [{ index: 0, uuid: 'GPU-a', pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: { DCGM_FI_DEV_GPU_UTIL: 40, DCGM_FI_DEV_POWER_USAGE: 300 } }],
    });
    store.create('pods', anExporterPod('h100-1', exporter.ip));
  });

  after(async () => {
    await fleet?.close();
    await east?.close();
    await west?.close();
    temp?.remove();
  });

  const indexes: TestIndexLocation[] = [];
  afterEach(async () => {
    sinon.restore();
    for (const index of indexes.splice(0)) await index.remove();
  });

  /** A fresh index and two free ports per case; everything else shared. */
  async function aConfig() {
    cases += 1;
    const [apiPort, adminPort] = await freePorts(2);
    const index = await testIndexLocation(join(temp.path, `case-${cases}`));
    indexes.push(index);
    const config = loadConfig({
      ...index.env,
      GPUCAP_LISTEN: `127.0.0.1:${apiPort}`,
      GPUCAP_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      GPUCAP_API_TOKENS_FILE: join(temp.path, 'tokens.json'),
      GPUCAP_KUBECONFIG: east.kubeconfigPath,
      GPUCAP_CLUSTER_ID: 'gpu-east',
      GPUCAP_REMOTE_KUBECONFIG_DIR: join(temp.path, 'remote'),
      GPUCAP_READ_WORKERS: '1',
      GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      GPUCAP_EXPORTER_PORT: String(fleet.port),
      GPUCAP_SCRAPE_INTERVAL_SECONDS: '2',
      GPUCAP_SCRAPE_TIMEOUT_SECONDS: '1',
      GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
      GPUCAP_SHUTDOWN_GRACE_SECONDS: '2',
      GPUCAP_RATE_LIMIT_PER_SECOND: '0',
      // The simulated API server answers no TokenReview.
      GPUCAP_ADMIN_AUTH: 'none',
    });
    return { config, apiPort, adminPort, index };
  }

  const start = (config: ReturnType<typeof loadConfig>, parts?: Disposables) => startService(config, { logger: silent, informers: FAST_INFORMERS, parts });

  async function expectNothingLeft(setup: { apiPort: number; adminPort: number; index: TestIndexLocation }, options: { watches?: boolean } = {}): Promise<void> {
    expect(await canBind(setup.apiPort), 'the API port can be bound again').to.equal(true);
    expect(await canBind(setup.adminPort), 'the admin port can be bound again').to.equal(true);
    const { index } = setup;
    if (index.kind === 'sqlite' && existsSync(index.path)) expect(indexClosed(index.path), 'the index file is closed').to.deep.equal({ walLeft: false, journalMode: 'delete' });
    // A closed connection leaves pg_stat_activity as its backend exits, just after the client has gone.
    if (index.kind === 'postgres') await waitFor(async () => (await otherSessions(index.url)) === 0, { what: 'no session of the service left on its database', timeoutMs: 5_000 });
    if (options.watches !== false) {
      await waitFor(() => east.api.watchStats().open + west.api.watchStats().open === 0, { what: 'every watch on both clusters closed', timeoutMs: 5_000 });
    }
  }

  async function rejection(promise: Promise<unknown>): Promise<Error> {
    return promise.then(
      () => expect.fail('expected a rejection'),
      (error: unknown) => error as Error,
    );
  }

  /** Waits until the job's lifetime totals are in memory (the sampler scraped it), not yet in the index. */
  async function lifetimeInMemory(service: RunningService, dbPath: string): Promise<void> {
    await waitFor(async () => {
      const response = await fetch(`http://${service.apiAddress}/v1/workloads/${job.metadata.uid}/metrics?time_range=job_lifetime&metrics=gpu_utilization`, {
        headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' },
      });
      const body = (await response.json()) as { data?: { metrics?: { gpu_utilization?: { avg: number | null } } } };
      return body.data?.metrics?.gpu_utilization?.avg === 40;
    }, { what: 'the job\'s lifetime utilization from the sampler', timeoutMs: 15_000 });
    expect(lifetimeRows(dbPath), 'nothing written before stop (lifetime_flush_seconds is 60)').to.deep.equal([]);
  }

  it('registers every part, undone in this order: requests first, loops, clusters, telemetry, the index last', async () => {
    const setup = await aConfig();
    const parts = new FaultyParts();
    const service = await start(setup.config, parts);
    try {
      expect(parts.names()).to.deep.equal(STOP_ORDER);
      // Both clusters really watched: the cases below would prove nothing if no watch were opened.
      await waitFor(() => east.api.watchStats().open > 0 && west.api.watchStats().open > 0, { what: 'watches on both clusters', timeoutMs: 10_000 });
    } finally {
      await service.stop();
    }
    await expectNothingLeft(setup);
  });

  describe('a start that fails', () => {
    for (const step of STOP_ORDER.slice().reverse()) {
      it(`right after "${step}" started undoes everything started so far and throws the step's error`, async () => {
        const setup = await aConfig();
        const error = await rejection(start(setup.config, new FaultyParts({ at: 'start', step })));
        expect(error.message).to.equal(`injected: the start step after ${step} failed`);
        await expectNothingLeft(setup);
      });
    }

    it('because the admin port is taken closes the API port it had bound and the index', async () => {
      const setup = await aConfig();
      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(setup.adminPort, '127.0.0.1', resolve));
      try {
        const error = await rejection(start(setup.config));
        expect((error as NodeJS.ErrnoException).code).to.equal('EADDRINUSE');
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
      await expectNothingLeft(setup);
    });

    sqliteOnly.it('because the read workers cannot start closes the index it had opened', async () => {
      const setup = await aConfig();
      sinon.stub(ReadPool, 'open').rejects(new Error('worker exited with code 1'));
      const error = await rejection(start(setup.config));
      expect(error.message).to.equal('worker exited with code 1');
      await expectNothingLeft(setup);
    });

    it('because the remote kubeconfig folder cannot be scanned stops the home cluster\'s informers', async () => {
      const setup = await aConfig();
      sinon.stub(RemoteClusters.prototype, 'start').callsFake(async () => {
        // Long enough for the home cluster's informers to open their watches.
        await waitFor(() => east.api.watchStats().open > 0, { what: 'the home cluster watched', timeoutMs: 10_000 });
        throw new Error('EACCES: permission denied, scandir');
      });
      const error = await rejection(start(setup.config));
      expect(error.message).to.equal('EACCES: permission denied, scandir');
      await expectNothingLeft(setup);
    });
  });

  describe('a stop in which a step fails', () => {
    for (const step of STOP_ORDER) {
      it(`at "${step}" still undoes every other part, then rejects naming it`, async () => {
        const setup = await aConfig();
        const service = await start(setup.config, new FaultyParts({ at: 'stop', step }));
        const error = await rejection(service.stop());
        expect(error).to.be.instanceOf(AggregateError);
        expect((error as AggregateError).errors.map((e: Error) => e.message)).to.deep.equal([`injected: ${step} failed to stop`]);
        expect(error.message).to.contain(step);
        expect(await rejection(service.stop()), 'a second stop() gets the same outcome').to.equal(error);
        await expectNothingLeft(setup);
      });
    }

    sqliteOnly.it('because the clusters will not stop still writes the lifetime totals and closes the index and both ports', async () => {
      const setup = await aConfig();
      const dbPath = sqlitePath(setup.index);
      const service = await start(setup.config);
      await lifetimeInMemory(service, dbPath);
      const stopClusters = sinon.stub(ClusterManager.prototype, 'stop').rejects(new Error('informer would not stop'));
      const error = await rejection(service.stop());
      expect((error as AggregateError).errors.map((e: Error) => e.message)).to.deep.equal(['informer would not stop']);
      await expectNothingLeft(setup, { watches: false });
      expect(lifetimeRows(dbPath).map((row) => [row.workload_id, row.metric])).to.deep.include([job.metadata.uid, 'gpu_utilization']);
      // The fault left the informers running, as a stuck stop would: they are the only thing left.
      expect(east.api.watchStats().open).to.be.greaterThan(0);
      stopClusters.restore();
      await service.clusters.stop();
      await expectNothingLeft(setup);
    });

    sqliteOnly.it('because the sampler fails to stop still writes the lifetime totals it gathered', async () => {
      const setup = await aConfig();
      const dbPath = sqlitePath(setup.index);
      const service = await start(setup.config);
      await lifetimeInMemory(service, dbPath);
      const stop = Sampler.prototype.stop;
      sinon.stub(Sampler.prototype, 'stop').callsFake(async function (this: Sampler) {
        await stop.call(this);
        throw new Error('a scrape did not settle');
      });
      const error = await rejection(service.stop());
      expect((error as AggregateError).errors.map((e: Error) => e.message)).to.deep.equal(['a scrape did not settle']);
      await expectNothingLeft(setup);
      const rows = lifetimeRows(dbPath).filter((row) => row.metric === 'gpu_utilization');
      expect(rows).to.have.length(1);
      expect(rows[0]?.sample_count).to.be.greaterThan(0);
    });
  });
});
