// The faults a Kubernetes API inflicts, one per test, against the whole service: while each fault is
// active the cluster keeps changing (pods start, finish, are deleted while running, a Job fails); once
// it is over the index must hold exactly what happened: nothing lost, nothing doubled (GPU-hours are
// exact), every deletion turned into history, and the fault counted in /metrics.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuJob, aGpuNode, aGpuPod, aNamespace, finished, running, startSimCluster, uidOf, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

const HOUR = 3_600_000;

interface Expected {
  status: string;
  gpu_hours_used?: number;
}

/** One Prometheus sample's value, matched by metric name and label subset; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('fault matrix: the index converges after every Kubernetes API fault', function () {
  this.timeout(40_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const expected = new Map<string, Expected>();
  let round = 0;
  const base = Date.now() - 10 * HOUR;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'faulty');
    sim.api.store.create('namespaces', aNamespace('ml', { 'gpucap.io/organization': 'acme' }));
    sim.api.store.create('nodes', aGpuNode('n1', 'a3-highgpu-8g'));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_CLUSTER_ID: 'faulty', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20' },
    });
    await waitFor(async () => ((await fetch(`${t.adminUrl}/readyz`)).status === 200 ? true : undefined), { what: 'ready', timeoutMs: 10_000 });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  /**
   * Changes the cluster the way a busy GPU cluster does: a pod that runs exactly `round` GPU-hours and
   * completes, one left running, one deleted while running, and a Job whose only pod fails. With
   * `blind`, the service cannot see the events (its watch history was compacted away): the pod that
   * lived and died in between can never be known, and must leave no row; returns its uid.
   */
  function churn(options: { blind?: boolean } = {}): string {
    round += 1;
    const store = sim.api.store;
    const start = base + round * HOUR;
    const done = store.create('pods', aGpuPod('ml', `done-${round}`, { gpus: 2, node: 'n1' }));
    store.patchStatus('pods', done.metadata, running(start));
    store.patchStatus('pods', done.metadata, finished(start, start + HOUR / 2, 0));
    expected.set(uidOf(done), { status: 'completed', gpu_hours_used: 1 });
    const busy = store.create('pods', aGpuPod('ml', `busy-${round}`, { node: 'n1' }));
    store.patchStatus('pods', busy.metadata, running(start));
    expected.set(uidOf(busy), { status: 'running' });
    const gone = store.create('pods', aGpuPod('ml', `gone-${round}`, { node: 'n1' }));
    store.patchStatus('pods', gone.metadata, running(start));
    store.delete('pods', gone.metadata);
    if (!options.blind) expected.set(uidOf(gone), { status: 'cancelled' });
    const job = store.create('jobs', aGpuJob('ml', `job-${round}`, 4));
    const pod = store.create('pods', aGpuPod('ml', `job-${round}-x`, { gpus: 4, node: 'n1', job }));
    store.patchStatus('pods', pod.metadata, finished(start, start + HOUR / 4, 3));
    const failedAt = new Date(start + HOUR / 4).toISOString();
    store.patchStatus('jobs', job.metadata, { startTime: new Date(start).toISOString(), failed: 1, conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: failedAt }] });
    expected.set(uidOf(job), { status: 'failed', gpu_hours_used: 1 });
    return uidOf(gone);
  }

  /** Every expected workload reads back as expected, and the organization holds exactly that many. */
  async function converged(): Promise<void> {
    await waitFor(async () => {
      for (const [id, want] of expected) {
        const got = (await t.get(`/v1/workloads/${id}`)).body?.data;
        if (got?.status !== want.status) return undefined;
        if (want.gpu_hours_used !== undefined && got.gpu_hours_used !== want.gpu_hours_used) return undefined;
      }
      return true;
    }, { what: 'the index to converge', timeoutMs: 10_000 });
    const list = await t.get('/v1/workloads?limit=1');
    expect(list.body.metadata.total_count, 'workloads in the index').to.equal(expected.size);
    for (const [id, want] of expected) expect((await t.get(`/v1/workloads/${id}`)).body.data, id).to.include(want);
  }

  async function counters(resource: string): Promise<{ restarts: number; relists: number }> {
    const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
    const labels = { cluster: 'faulty', resource };
    return { restarts: sample(text, 'gpucap_informer_restarts_total', labels), relists: sample(text, 'gpucap_informer_relists_total', labels) };
  }

  it('converges after every watch stream is dropped', async () => {
    const before = await counters('pods');
    sim.api.faults.dropWatches();
    churn();
    await converged();
    expect((await counters('pods')).restarts).to.be.greaterThan(before.restarts);
  });

  for (const status of [500, 401, 429] as const) {
    it(`converges after watches and lists are answered ${status} for a while`, async () => {
      const before = await counters('pods');
      sim.api.faults.failNext(status, { count: 4, path: '/api/v1/pods' });
      sim.api.faults.dropWatches();
      churn();
      await converged();
      expect((await counters('pods')).restarts).to.be.greaterThan(before.restarts + 1);
    });
  }

  it('converges after a watch that hangs without answering is abandoned by the stall watchdog', async () => {
    const before = await counters('pods');
    sim.api.faults.hang({ count: 1, path: '/api/v1/pods', watch: true });
    sim.api.faults.dropWatches();
    churn();
    await converged();
    expect((await counters('pods')).restarts).to.be.greaterThan(before.restarts + 1);
  });

  it('converges after the API server restarts while the cluster changes', async () => {
    const before = await counters('pods');
    const back = sim.api.faults.restart(1_000);
    churn();
    await back;
    await converged();
    expect((await counters('pods')).restarts).to.be.greaterThan(before.restarts);
  });

  it('converges by relisting when its resourceVersion was compacted away (410 Gone)', async () => {
    const before = await counters('pods');
    // The watch is cut and its resumption hangs; meanwhile the cluster changes and etcd compacts,
    // so the resumed watch gets 410 and only a relist can tell what happened.
    sim.api.faults.hang({ count: 1, path: '/api/v1/pods', watch: true });
    sim.api.faults.dropWatches();
    const unseen = churn({ blind: true });
    sim.api.faults.expireVersions();
    await converged();
    expect((await counters('pods')).relists).to.be.greaterThan(before.relists);
    expect((await t.get(`/v1/workloads/${unseen}`)).status).to.equal(404);
  });
});
