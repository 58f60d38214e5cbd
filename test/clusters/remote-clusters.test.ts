// Several clusters from a folder of kubeconfig files, as a management-cluster deployment runs: one
// cluster down never blocks the others, files added, fixed and removed at runtime are followed, and a
// file that is not a kubeconfig is reported without stopping anything.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { FAST_INFORMERS, aGpuPod, aNamespace, startSimCluster, uidOf, type SimCluster } from '../support/sim-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { makeTempDir } from '../support/temp-dir.js';

async function readyz(t: TestService): Promise<{ status: number; body: JsonBody }> {
  const response = await fetch(`${t.adminUrl}/readyz`);
  return { status: response.status, body: await response.json() };
}

async function metricsText(t: TestService): Promise<string> {
  return (await fetch(`${t.adminUrl}/metrics`)).text();
}

describe('service watching remote clusters from a kubeconfig folder', function () {
  this.timeout(40_000);
  let temp: ReturnType<typeof makeTempDir>;
  let clustersDir: string;
  let west: SimCluster;
  let lab: SimCluster;
  let t: TestService;
  let labBack: Promise<void>;

  before(async () => {
    temp = makeTempDir();
    clustersDir = join(temp.path, 'clusters');
    mkdirSync(clustersDir);
    mkdirSync(join(clustersDir, '..data')); // a Secret volume's own bookkeeping
    west = await startSimCluster(temp.path, 'gpu-west');
    lab = await startSimCluster(temp.path, 'gpu-lab');
    west.api.store.create('namespaces', aNamespace('research'));
    west.api.store.create('pods', aGpuPod('research', 'west-1', { gpus: 8 }));
    lab.api.store.create('namespaces', aNamespace('vision', { 'gpucap.io/organization': 'acme' }));
    lab.api.store.create('pods', aGpuPod('vision', 'lab-1'));
    writeFileSync(join(clustersDir, 'west.kubeconfig'), west.api.kubeconfig());
    writeFileSync(join(clustersDir, 'lab.kubeconfig'), lab.api.kubeconfig());
    writeFileSync(join(clustersDir, 'README'), 'Put one kubeconfig per cluster here.\n');
    // The lab's API server is down for the first seconds of the service's life.
    labBack = lab.api.faults.restart(6_000);
    t = await startTestService({
      clock: 'system',
      informers: FAST_INFORMERS,
      env: {
        GPUCAP_REMOTE_KUBECONFIG_DIR: clustersDir,
        GPUCAP_REMOTE_CLUSTERS: JSON.stringify([{ file: 'west.kubeconfig', organization_id: 'acme' }]),
        GPUCAP_REMOTE_KUBECONFIG_RELOAD_SECONDS: '1',
        GPUCAP_CLUSTER_UNREACHABLE_AFTER_SECONDS: '1',
        GPUCAP_INDEX_FLUSH_INTERVAL_MS: '20',
      },
    });
  });

  after(async () => {
    await t?.stop();
    await labBack;
    await west?.close();
    await lab?.close();
    temp?.remove();
  });

  it('becomes ready with one cluster down, serving the other, and says degraded', async () => {
    const ready = await waitFor(async () => {
      const response = await readyz(t);
      return response.status === 200 ? response.body : undefined;
    }, { what: '/readyz 200 with gpu-lab down', timeoutMs: 10_000 });
    expect(ready.degraded).to.equal(true);
    expect(ready.conditions['cluster/gpu-west/pods']).to.include({ ready: true, failure: null });
    expect(ready.conditions['cluster/gpu-lab/namespaces']).to.include({ ready: false, waived: true });
    expect(ready.conditions['cluster/gpu-lab/namespaces'].failure).to.match(/^cluster "gpu-lab" namespaces: /);
    const health = (await t.get('/v1/health')).body.data;
    expect(health.status).to.equal('healthy'); // it answers from its index: the other clusters serve
    expect(health.checks).to.deep.include.members([
      { name: 'cluster/gpu-west', status: 'ok' },
      { name: 'cluster/gpu-lab', status: 'degraded' },
      { name: 'remote-kubeconfigs', status: 'degraded' },
    ]);
    const westPod = west.api.store.list('pods')[0] as KubeObject;
    const found = await waitFor(async () => (await t.get(`/v1/workloads/${uidOf(westPod)}`)).body?.data, { what: 'the west pod', timeoutMs: 10_000 });
    expect(found).to.include({ cluster_id: 'gpu-west', gpu_count: 8, initiative_id: 'research' });
  });

  it('reports a file that is not a kubeconfig on /readyz and in /metrics, without waiting for it', async () => {
    const { body } = await readyz(t);
    expect(body.conditions['remote-kubeconfig/README']).to.include({ ready: true });
    expect(body.conditions['remote-kubeconfig/README'].failure).to.match(/README" has no current-context$/);
    expect(body.conditions).to.not.have.property('remote-kubeconfig/..data');
    const text = await metricsText(t);
    expect(text).to.match(/gpucap_remote_kubeconfig_invalid\{[^}]*file="README"[^}]*\} 1/);
    expect(text).to.match(/gpucap_cluster_up\{[^}]*cluster="gpu-west"[^}]*\} 1/);
  });

  it('picks the down cluster up once its API server is back, and is healthy again', async () => {
    await labBack;
    const labPod = lab.api.store.list('pods')[0] as KubeObject;
    const found = await waitFor(async () => (await t.get(`/v1/workloads/${uidOf(labPod)}`)).body?.data, { what: 'the lab pod after the lab came back', timeoutMs: 20_000 });
    expect(found).to.include({ cluster_id: 'gpu-lab', name: 'lab-1' });
    rmSync(join(clustersDir, 'README'));
    const everyCheckOk = async () => (await t.get('/v1/health')).body.data.checks.every((c: { status: string }) => c.status === 'ok');
    await waitFor(async () => ((await everyCheckOk()) ? true : undefined), { what: 'every health check ok', timeoutMs: 10_000 });
    expect((await metricsText(t))).to.match(/gpucap_cluster_up\{[^}]*cluster="gpu-lab"[^}]*\} 1/);
  });

  it('starts watching a cluster whose kubeconfig is added at runtime, and follows a fixed token', async () => {
    const extra = await startSimCluster(temp.path, 'gpu-extra');
    try {
      extra.api.store.create('namespaces', aNamespace('batch', { 'gpucap.io/organization': 'acme' }));
      const pod = extra.api.store.create('pods', aGpuPod('batch', 'extra-1', { gpus: 2 }));
      // First with a wrong token: the cluster is watched but refused (401), and reported failing.
      writeFileSync(join(clustersDir, 'extra.kubeconfig'), extra.api.kubeconfig().replace('gpu-extra-token', 'expired-token'));
      await waitFor(async () => {
        const condition = (await readyz(t)).body.conditions['cluster/gpu-extra/namespaces'];
        return condition?.failure?.includes('401') ? true : undefined;
      }, { what: 'gpu-extra failing with 401', timeoutMs: 10_000 });
      writeFileSync(join(clustersDir, 'extra.kubeconfig'), extra.api.kubeconfig());
      const found = await waitFor(async () => (await t.get(`/v1/workloads/${uidOf(pod)}`)).body?.data, { what: 'the extra pod after the token was fixed', timeoutMs: 10_000 });
      expect(found).to.include({ cluster_id: 'gpu-extra', gpu_count: 2 });
    } finally {
      rmSync(join(clustersDir, 'extra.kubeconfig'), { force: true });
      await extra.close();
    }
  });

  it('stops watching a cluster whose kubeconfig is removed, keeping its workloads as history', async () => {
    rmSync(join(clustersDir, 'west.kubeconfig'));
    await waitFor(async () => ((await readyz(t)).body.conditions['cluster/gpu-west/pods'] === undefined ? true : undefined), { what: 'gpu-west gone from /readyz', timeoutMs: 10_000 });
    const westPod = west.api.store.list('pods')[0] as KubeObject;
    expect((await t.get(`/v1/workloads/${uidOf(westPod)}`)).status).to.equal(200);
    expect(await metricsText(t)).to.not.match(/cluster="gpu-west"/);
  });
});
