// The whole service watching one (simulated) cluster: what a user sees through /v1 and the admin port
// as Pods and Jobs are created, run, finish and are deleted.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuJob, aGpuNode, aGpuPod, aNamespace, finished, running, startSimCluster, uidOf, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('service watching its home cluster', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let t: TestService;
  const startedAt = Date.now() - 3_600_000;

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'gpu-east');
    const store = sim.api.store;
    store.create('namespaces', aNamespace('llm-train', { 'gpucap.io/initiative': 'llm', 'gpucap.io/organization': 'acme' }));
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_CLUSTER_ID: 'gpu-east', GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20', GPUCAP_INSTANCE_ID: 'replica-a', GPUCAP_HA_RETRY_SECONDS: '1' },
    });
  });

  after(async () => {
    await t?.stop();
    await sim?.close();
    temp?.remove();
  });

  const workload = async (id: string) => (await t.get(`/v1/workloads/${id}`)).body?.data;
  const until = (what: string, id: string, test: (w: Record<string, unknown>) => boolean) =>
    waitFor(
      async () => {
        const found = await workload(id);
        return found !== undefined && test(found) ? found : undefined;
      },
      { what, timeoutMs: 10_000 },
    );

  it('becomes ready once every informer of the cluster has synced, and reports them on /readyz', async () => {
    const ready = await waitFor(async () => {
      const response = await fetch(`${t.adminUrl}/readyz`);
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    }, { what: '/readyz 200', timeoutMs: 10_000 });
    expect(Object.keys(ready.conditions as object)).to.include.members(['cluster/gpu-east/namespaces', 'cluster/gpu-east/nodes', 'cluster/gpu-east/jobs', 'cluster/gpu-east/pods']);
    const health = (await t.get('/v1/health')).body.data;
    expect(health).to.include({ status: 'healthy' });
    expect(health.checks).to.deep.include({ name: 'cluster/gpu-east', status: 'ok' });
  });

  it('says on /readyz and /metrics that this replica writes the cluster, as the index records it', async () => {
    const writer = await waitFor(async () => {
      const body = (await (await fetch(`${t.adminUrl}/readyz`)).json()) as { components: { writers: Record<string, unknown>[] } };
      const found = body.components.writers.find((w) => w.clusterId === 'gpu-east');
      return (found?.holder as { snapshotWritten?: boolean } | null)?.snapshotWritten === true ? found : undefined;
    }, { what: 'the writer of gpu-east, with its snapshot written, read back from the index', timeoutMs: 10_000 });
    expect(writer).to.deep.include({ clusterId: 'gpu-east', role: 'writer', epoch: 1, takeovers: 1, lastError: null });
    expect(writer.holder).to.deep.include({ clusterId: 'gpu-east', holder: 'replica-a', epoch: 1, snapshotWritten: true });
    const metrics = await (await fetch(`${t.adminUrl}/metrics`)).text();
    expect(metrics).to.match(/^gpucap_cluster_writer\{cluster="gpu-east",service="gpu-capacity-api"\} 1$/m);
    expect(metrics).to.match(/^gpucap_cluster_writer_epoch\{cluster="gpu-east",holder="replica-a",service="gpu-capacity-api"\} 1$/m);
  });

  it('shows a GPU pod created in the cluster, attributed from its namespace and node', async () => {
    const pod = sim.api.store.create('pods', aGpuPod('llm-train', 'probe', { gpus: 2, node: 'h100-1' }));
    const found = await until('the pod in the index', uidOf(pod), () => true);
    expect(found).to.include({
      workload_id: uidOf(pod),
      name: 'probe',
      status: 'pending',
      initiative_id: 'llm',
      instance_type: 'p5.48xlarge',
      gpu_count: 2,
      cluster_id: 'gpu-east',
      namespace: 'llm-train',
    });
  });

  it('follows a pod from pending to running to completed, with its times and exit code', async () => {
    // An hour before this test, not before the file loaded: GPU-hours of a running pod grow with the
    // time the suite took to get here.
    const startedAt = Date.now() - 3_600_000;
    const pod = sim.api.store.create('pods', aGpuPod('llm-train', 'train-1', { node: 'h100-1' }));
    await until('the pending pod', uidOf(pod), (w) => w.status === 'pending');
    sim.api.store.patchStatus('pods', pod.metadata, running(startedAt));
    const run = await until('the pod running', uidOf(pod), (w) => w.status === 'running');
    expect(run.started_at).to.equal(new Date(startedAt).toISOString());
    expect(run.gpu_hours_used as number).to.be.closeTo(1, 0.05);
    sim.api.store.patchStatus('pods', pod.metadata, finished(startedAt, startedAt + 1_800_000, 0));
    const done = await until('the pod completed', uidOf(pod), (w) => w.status === 'completed');
    expect(done).to.include({ exit_code: 0, completed_at: new Date(startedAt + 1_800_000).toISOString(), gpu_hours_used: 0.5 });
  });

  it('folds a Job\'s pods into one workload that fails with the pod\'s exit code', async () => {
    const job = sim.api.store.create('jobs', aGpuJob('llm-train', 'sweep', 4));
    const pod = sim.api.store.create('pods', aGpuPod('llm-train', 'sweep-abc', { gpus: 4, node: 'h100-1', job }));
    sim.api.store.patchStatus('pods', pod.metadata, running(startedAt));
    sim.api.store.patchStatus('jobs', job.metadata, { startTime: new Date(startedAt).toISOString(), active: 1 });
    const run = await until('the Job running', uidOf(job), (w) => w.status === 'running');
    expect(run).to.include({ name: 'sweep', gpu_count: 4, instance_type: 'p5.48xlarge' });
    sim.api.store.patchStatus('pods', pod.metadata, finished(startedAt, startedAt + 900_000, 137));
    const failedAt = new Date(startedAt + 900_000).toISOString();
    sim.api.store.patchStatus('jobs', job.metadata, { active: 0, failed: 1, conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: failedAt }] });
    const failed = await until('the Job failed', uidOf(job), (w) => w.status === 'failed');
    expect(failed).to.include({ exit_code: 137, completed_at: failedAt, gpu_hours_used: 1 });
    const list = await t.get('/v1/workloads?status=failed');
    expect(list.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).to.include(uidOf(job));
    expect(list.body.data.workloads.map((w: { workload_id: string }) => w.workload_id)).not.to.include(uidOf(pod));
  });

  it('keeps a finished pod after Kubernetes deletes it, and cancels one deleted while running', async () => {
    const done = sim.api.store.create('pods', aGpuPod('llm-train', 'done', { node: 'h100-1' }));
    sim.api.store.patchStatus('pods', done.metadata, finished(startedAt, startedAt + 600_000, 0));
    await until('the finished pod', uidOf(done), (w) => w.status === 'completed');
    const busy = sim.api.store.create('pods', aGpuPod('llm-train', 'busy', { node: 'h100-1' }));
    sim.api.store.patchStatus('pods', busy.metadata, running(startedAt));
    await until('the running pod', uidOf(busy), (w) => w.status === 'running');

    sim.api.store.delete('pods', done.metadata);
    sim.api.store.delete('pods', busy.metadata);
    const cancelled = await until('the deleted running pod cancelled', uidOf(busy), (w) => w.status === 'cancelled');
    expect(cancelled.completed_at).to.be.a('string');
    expect(await workload(uidOf(done))).to.include({ status: 'completed', completed_at: new Date(startedAt + 600_000).toISOString() });
  });

  it('exposes informer and indexer metrics on the admin port', async () => {
    const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
    expect(text).to.match(/gpucap_informer_events_total\{[^}]*cluster="gpu-east"[^}]*resource="pods"[^}]*type="MODIFIED"[^}]*\} [1-9]/);
    expect(text).to.match(/gpucap_informer_synced\{[^}]*cluster="gpu-east"[^}]*resource="jobs"[^}]*\} 1/);
    expect(text).to.match(/gpucap_cluster_up\{[^}]*cluster="gpu-east"[^}]*\} 1/);
    expect(text).to.match(/gpucap_informer_watch_age_seconds\{[^}]*resource="namespaces"/);
    expect(text).to.match(/gpucap_indexer_rows_written_total\{[^}]*cluster="gpu-east"[^}]*\} [1-9]/);
  });
});
