// The service's Reflector against a real kube-apiserver (envtest, v1.20) as the restricted user
// gpucap-reader: refused without RBAC, enough with exactly the ClusterRole rules the Helm chart ships,
// and still exact (nothing lost, nothing doubled) after the API server restarts under an open watch.
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { AdminClient, sendJson } from '../support/envtest/admin-client.js';
import { startEnvtestOrSkip, type Envtest } from '../support/envtest/envtest.js';
import { objectKey, snapshotOf } from '../support/object-map.js';
import { gpuJob, gpuPod, INSTANCE_TYPE_LABEL, jobPod, runningStatus, terminatedStatus } from '../support/envtest/objects.js';
import { ReflectorSet, WATCHED_PATHS, type RunningReflector } from '../support/envtest/reflectors.js';
import { waitFor } from '../support/wait-for.js';

describe('Reflector as gpucap-reader against a real kube-apiserver (envtest v1.20)', function () {
  this.timeout(90_000);
  let envtest: Envtest | undefined;
  let admin: AdminClient;
  const reflectors = new ReflectorSet();

  before(async function () {
    this.timeout(120_000);
    envtest = await startEnvtestOrSkip(this);
    admin = new AdminClient(envtest.adminKubeconfig);
  });
  afterEach(async () => {
    await reflectors.stopAll();
  });
  after(async () => {
    await reflectors.stopAll();
    await envtest?.stop();
  });

  function readerKubeconfig(): string {
    if (envtest === undefined) throw new Error('envtest is not running');
    return envtest.readerKubeconfig;
  }

  function startAll(): RunningReflector[] {
    return WATCHED_PATHS.map((path) => reflectors.start(readerKubeconfig(), path));
  }

  async function watching(running: RunningReflector[]): Promise<void> {
    await waitFor(() => running.every(({ reflector }) => reflector.synced && reflector.status().watchAgeMs !== undefined), {
      timeoutMs: 20_000,
      what: 'every reflector to sync and open its watch',
    });
  }

  /** Polls until each reflector's objects equal what the admin lists at the same path. */
  async function convergedWithServer(running: RunningReflector[], timeoutMs = 20_000): Promise<void> {
    for (const { path, objects } of running) {
      await waitFor(
        async () => {
          expect(objects.snapshot(), `objects held for ${path} vs. the admin's LIST`).to.deep.equal(snapshotOf(await admin.list(path)));
          return true;
        },
        { timeoutMs, what: `the reflector on ${path} to hold exactly what the server lists` },
      );
      expect(objects.doubles, `events applied twice on ${path}`).to.deep.equal([]);
    }
  }

  describe('before the chart ClusterRole is bound', () => {
    it('is refused with 403 on every LIST, reports it in status().lastError, and syncs once the chart rules are bound', async () => {
      const running = startAll();
      for (const { path, reflector } of running) {
        const error = await waitFor(() => reflector.status().lastError, { timeoutMs: 10_000, what: `a failed LIST of ${path} as gpucap-reader` });
        expect(error, path).to.include({ code: 'KUBE_HTTP_STATUS', statusCode: 403 });
        expect(error.message, path).to.include('User "gpucap-reader" cannot list resource');
        expect(reflector.synced, path).to.equal(false);
      }

      await admin.bindChartRulesToReader();

      await watching(running);
      for (const { path, reflector, objects } of running) {
        expect(objects.events[0]?.type, path).to.equal('SYNC');
        expect(reflector.status().restarts, `${path}: the refused LISTs count as restarts`).to.be.greaterThan(0);
      }
    });
  });

  describe('with the chart ClusterRole bound', () => {
    before(async () => {
      await admin.bindChartRulesToReader();
    });

    it('grants only list and watch: the reader cannot get one pod, list secrets or create a pod', async () => {
      await admin.createNamespace('rbac-limits');
      await admin.createPod('rbac-limits', gpuPod('p', { node: 'n', gpus: 0 }));
      const reader = new KubeConfig();
      reader.loadFromFile(readerKubeconfig());

      expect((await sendJson(reader, 'GET', '/api/v1/pods')).status).to.equal(200);
      expect((await sendJson(reader, 'GET', '/api/v1/namespaces/rbac-limits/pods/p')).status).to.equal(403);
      expect((await sendJson(reader, 'GET', '/api/v1/secrets')).status).to.equal(403);
      expect((await sendJson(reader, 'POST', '/api/v1/namespaces/rbac-limits/pods', gpuPod('q', { node: 'n', gpus: 0 }))).status).to.equal(403);
    });

    it('syncs pods, nodes, namespaces and jobs and delivers their ADDED, MODIFIED and DELETED events', async () => {
      const running = startAll();
      await watching(running);

      const started = Date.now();
      await admin.createNamespace('rbac-events', { 'gpucap.io/initiative': 'llm' });
      await admin.createNode('gpu-node-events', { [INSTANCE_TYPE_LABEL]: 'p4d.24xlarge' });
      const job = await admin.createJob('rbac-events', gpuJob('train', { gpus: 2 }));
      await admin.createPod('rbac-events', jobPod(job, 0, { node: 'gpu-node-events', gpus: 2 }));
      await admin.patchPodStatus('rbac-events', 'train-0', runningStatus(started));
      await admin.patchJobStatus('rbac-events', 'train', { startTime: new Date(started), active: 1 });
      await admin.labelNode('gpu-node-events', { 'gpucap.io/pool': 'a100' });
      await admin.patchPodStatus('rbac-events', 'train-0', terminatedStatus(started, Date.now(), 0));
      await admin.deletePod('rbac-events', 'train-0', { gracePeriodSeconds: 0 });
      await admin.deleteJob('rbac-events', 'train');
      await admin.deleteNode('gpu-node-events');
      await admin.deleteNamespace('rbac-events');

      const expected: Record<string, string> = {
        '/api/v1/pods': 'rbac-events/train-0',
        '/api/v1/nodes': 'gpu-node-events',
        '/api/v1/namespaces': 'rbac-events',
        '/apis/batch/v1/jobs': 'rbac-events/train',
      };
      for (const { path, objects } of running) {
        const key = expected[path] ?? '';
        const seen = await waitFor(
          () => {
            const events = objects.eventsFor((k) => k === key);
            return events.at(-1) === `DELETED ${key}` ? events : undefined;
          },
          { timeoutMs: 10_000, what: `the watch of ${path} to deliver DELETED ${key}` },
        );
        expect(seen[0], path).to.equal(`ADDED ${key}`);
        expect(seen.slice(1, -1), `${path}: the changes between create and delete`).to.include(`MODIFIED ${key}`);
        expect(seen.slice(1, -1).every((e) => e === `MODIFIED ${key}`), `${path}: ${seen.join(', ')}`).to.equal(true);
      }
      const pod = running[0]?.objects.events.find((e) => e.type === 'MODIFIED' && objectKey(e.object) === 'rbac-events/train-0');
      expect(pod?.type === 'MODIFIED' && 'managedFields' in pod.object.metadata, 'managedFields delivered').to.equal(false);
      await convergedWithServer(running);
    });

    it('resumes after the API server restarts under its watches and then holds exactly what the server lists, nothing doubled', async () => {
      if (envtest === undefined) throw new Error('envtest is not running');
      const running = startAll();
      await watching(running);
      await admin.createNamespace('rbac-restart');
      await admin.createPod('rbac-restart', gpuPod('before-a', { node: 'n1', gpus: 1 }));
      await admin.createPod('rbac-restart', gpuPod('before-b', { node: 'n1', gpus: 1 }));
      await admin.patchPodStatus('rbac-restart', 'before-a', runningStatus(Date.now()));
      await convergedWithServer(running);
      const restartsBefore = running.map(({ reflector }) => reflector.status().restarts);

      const restartedAt = Date.now();
      await envtest.restartApiServer();
      const restartMs = Date.now() - restartedAt;

      // Made after the restart: a missed event would leave these out of (or stale in) the reflectors' maps.
      await admin.createPod('rbac-restart', gpuPod('after-c', { node: 'n1', gpus: 1 }));
      await admin.patchPodStatus('rbac-restart', 'before-b', runningStatus(Date.now()));
      await admin.deletePod('rbac-restart', 'before-a', { gracePeriodSeconds: 0 });
      await admin.createNode('gpu-node-after-restart', { [INSTANCE_TYPE_LABEL]: 'a2-highgpu-8g' });
      const job = await admin.createJob('rbac-restart', gpuJob('after-job', { gpus: 8 }));
      await admin.patchJobStatus('rbac-restart', 'after-job', { startTime: new Date(), active: 1 });
      await admin.createNamespace('rbac-after-restart');

      await convergedWithServer(running);
      const pods = running[0]?.objects;
      expect(Object.keys(pods?.snapshot() ?? {}).filter((k) => k.startsWith('rbac-restart/'))).to.deep.equal(['rbac-restart/after-c', 'rbac-restart/before-b']);
      expect(running[3]?.objects.objects.get('rbac-restart/after-job')?.metadata.uid).to.equal(job.metadata.uid);
      running.forEach(({ path, reflector }, i) => {
        expect(reflector.status().restarts, `${path}: the broken watch counts as a restart`).to.be.greaterThan(restartsBefore[i] ?? 0);
      });
      console.log(
        `      API server restart took ${restartMs} ms; relists after it: ${running.map(({ path, reflector }) => `${path} ${reflector.status().relists}`).join(', ')}`,
      );
    });
  });
});
