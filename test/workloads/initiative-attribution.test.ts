// Who decides a workload's team, through the whole service on the simulated API: with
// initiative_source `namespace` a Job author cannot charge another team by labelling the Job, unless
// the Namespace's allowed-initiatives annotation lets its objects name that team; with the default
// (`labels`) the Job's own label decides, as before.
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startTestService, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuJob, aGpuNode, aGpuPod, aNamespace, running, startSimCluster, uidOf, type SimCluster } from '../support/sim-cluster.js';
import { makeTempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

const ALLOWED = 'gpucap.io/allowed-initiatives';
const team = (initiative: string): Record<string, string> => ({ 'gpucap.io/organization': 'acme', 'gpucap.io/initiative': initiative });

describe('workloads: initiative attribution that admins control (initiative_source)', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof makeTempDir>;
  let sim: SimCluster;
  let byNamespace: TestService;
  let byLabels: TestService;
  let visionNamespace: KubeObject;
  /** A running Job in team-vision's namespace whose author labelled it for the llm team. */
  let claimsLlm: KubeObject;
  /** The same in a namespace that allows its objects to name llm. */
  let allowedLlm: KubeObject;
  /** The llm team's own Job. */
  let ownLlm: KubeObject;

  /** A Job labelled `initiative`, with one GPU pod running for an hour. */
  function aRunningJob(namespace: string, name: string, initiative?: string): KubeObject {
    const store = sim.api.store;
    const job = aGpuJob(namespace, name);
    const created = store.create('jobs', { ...job, metadata: { ...job.metadata, ...(initiative === undefined ? {} : { labels: { 'gpucap.io/initiative': initiative } }) } });
    const startedAt = Date.now() - 3_600_000;
    store.patchStatus('jobs', created.metadata, { startTime: new Date(startedAt).toISOString() });
    const pod = store.create('pods', aGpuPod(namespace, `${name}-0`, { job: created, node: 'h100-1' }));
    store.patchStatus('pods', pod.metadata, running(startedAt));
    return created;
  }

  const start = (env: Record<string, string>): Promise<TestService> =>
    startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: { GPUCAP_HOME_CLUSTER_ENABLED: 'true', GPUCAP_KUBECONFIG: sim.kubeconfigPath, GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20', ...env },
    });

  const initiativeOf = async (t: TestService, job: KubeObject): Promise<string | undefined> =>
    (await t.get(`/v1/workloads/${uidOf(job)}`)).body.data?.initiative_id;

  const until = (t: TestService, job: KubeObject, initiative: string): Promise<true> =>
    waitFor(async () => ((await initiativeOf(t, job)) === initiative ? true : undefined), { what: `${job.metadata.name} charged to ${initiative}`, timeoutMs: 10_000 });

  /** The llm team's statistics: its workloads and GPU-hours. */
  async function llmStats(t: TestService): Promise<{ workload_count: number; gpu_hours: number } | undefined> {
    const grouped = (await t.get('/v1/workloads/stats?time_range=last_7_days&group_by=initiative_id')).body.data.grouped as { initiative_id: string; workload_count: number; gpu_hours: number }[];
    return grouped.find((group) => group.initiative_id === 'llm');
  }

  before(async () => {
    temp = makeTempDir();
    sim = await startSimCluster(temp.path, 'shared');
    const store = sim.api.store;
    store.create('nodes', aGpuNode('h100-1', 'p5.48xlarge'));
    visionNamespace = store.create('namespaces', aNamespace('team-vision', team('vision')));
    store.create('namespaces', { ...aNamespace('research', team('research')), metadata: { name: 'research', labels: team('research'), annotations: { [ALLOWED]: 'speech, llm' } } });
    store.create('namespaces', aNamespace('team-llm', team('llm')));
    claimsLlm = aRunningJob('team-vision', 'borrowed-budget', 'llm');
    allowedLlm = aRunningJob('research', 'joint-project', 'llm');
    ownLlm = aRunningJob('team-llm', 'pretrain');
    [byNamespace, byLabels] = await Promise.all([start({ GPUCAP_INITIATIVE_SOURCE: 'namespace' }), start({})]);
    for (const t of [byNamespace, byLabels]) {
      await waitFor(async () => ((await fetch(`${t.adminUrl}/readyz`)).status === 200 ? true : undefined), { what: 'ready', timeoutMs: 10_000 });
    }
  });

  after(async () => {
    await byNamespace?.stop();
    await byLabels?.stop();
    await sim?.close();
    temp?.remove();
  });

  it('namespace: charges a Job labelled for another team to its namespace\'s team, and not to the team it names', async () => {
    expect(await initiativeOf(byNamespace, claimsLlm)).to.equal('vision');
    expect(await initiativeOf(byNamespace, ownLlm)).to.equal('llm');
    const llm = await llmStats(byNamespace);
    // The llm team's own Job, and the one of the namespace that allows llm: an hour of one GPU each.
    expect(llm?.workload_count).to.equal(2);
    expect(llm?.gpu_hours).to.be.closeTo(2, 0.05);
  });

  it('namespace: charges it to the team it names where the namespace\'s annotation allows that team', async () => {
    expect(await initiativeOf(byNamespace, allowedLlm)).to.equal('llm');
  });

  it('labels (the default): the Job\'s own label decides, as before', async () => {
    expect(await initiativeOf(byLabels, claimsLlm)).to.equal('llm');
    expect(await initiativeOf(byLabels, allowedLlm)).to.equal('llm');
    const llm = await llmStats(byLabels);
    expect(llm?.workload_count).to.equal(3);
    expect(llm?.gpu_hours).to.be.closeTo(3, 0.05);
  });

  it('namespace: re-attributes the running Job when the namespace\'s annotation is edited, both ways', async () => {
    const annotate = (annotations: Record<string, string>): void => {
      visionNamespace = sim.api.store.update('namespaces', { ...visionNamespace, metadata: { ...visionNamespace.metadata, annotations } });
    };
    annotate({ [ALLOWED]: 'llm' });
    await until(byNamespace, claimsLlm, 'llm');
    expect((await llmStats(byNamespace))?.workload_count).to.equal(3);
    annotate({ [ALLOWED]: 'speech' });
    await until(byNamespace, claimsLlm, 'vision');
    expect((await llmStats(byNamespace))?.workload_count).to.equal(2);
    // The default mode ignored both edits.
    expect(await initiativeOf(byLabels, claimsLlm)).to.equal('llm');
  });
});
