// The write-path benchmarks' simulated cluster in its child process (bench/lib/kube-sim/kube-sim.ts): it serves
// the cluster it generated, churns at the rate it is asked for, streams its lag samples with times
// comparable to this process's clock, and reports what it offered.
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { startKubeSim, type KubeSim } from '../../bench/lib/kube-sim/kube-sim.js';
import { epochNow, type ChurnSample, type KubeSimSettings } from '../../bench/lib/kube-sim/kube-sim-protocol.js';
import { getJson, openWatch, type WatchStream } from '../sim/sim-client.js';

const SETTINGS: KubeSimSettings = {
  clusterName: 'gpu-test',
  shape: { pods: 50, jobs: 5, namespaces: 4, nodes: 4 },
  seed: 0,
  now: Date.parse('2026-11-01T00:00:00Z'),
  clockOffsetMs: 0,
  churnSeed: 1,
  historyLimit: 10_000,
  bookmarkIntervalMs: 60_000,
  organization: 'acme',
  spotChecksPerKind: 2,
};

describe('bench/lib/kube-sim/kube-sim.ts: a simulated cluster and its churn driver in a child process', function () {
  this.timeout(60_000);
  let sim: KubeSim;
  let watch: WatchStream | undefined;

  before(async () => {
    sim = await startKubeSim(SETTINGS);
  });

  after(async () => {
    watch?.close();
    await sim?.stop();
  });

  it('serves the cluster it generated, with a kubeconfig that reaches it', async () => {
    const kubeconfig = JSON.parse(sim.kubeconfig) as { clusters: { cluster: { server: string } }[]; users: { user: { token: string } }[] };
    expect(kubeconfig.clusters[0]?.cluster.server).to.equal(sim.url);
    const pods = await getJson(`${sim.url}/api/v1/pods?limit=20`, kubeconfig.users[0]?.user.token);
    expect(pods.status).to.equal(200);
    expect(pods.body['items']).to.have.length(20);
    const all = await getJson(`${sim.url}/api/v1/pods`, kubeconfig.users[0]?.user.token);
    expect(all.body['items']).to.have.length(sim.counts.pods);
    expect(sim.counts).to.include({ pods: 50, jobs: 5, nodes: 4, namespaces: 4 });
    expect(sim.counts.expectedWorkloads).to.equal(sim.counts.jobs + sim.counts.pods - sim.counts.jobPods);
    expect(sim.spotChecks.length).to.be.within(1, 4);
    const status = await sim.status();
    expect(status.listRequests.pods).to.equal(2);
  });

  it('churns at the rate asked, streams its samples as they are made and reports what it offered', async () => {
    // Watching from the LIST's version: the stream then holds the churn's events and nothing else.
    const list = await getJson(`${sim.url}/api/v1/pods?limit=1`);
    watch = await openWatch(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${(list.body['metadata'] as { resourceVersion: string }).resourceVersion}`);
    const samples: ChurnSample[] = [];
    const before = epochNow();
    const report = await sim.churn({ rate: 200, seconds: 1, sampleEveryMs: 100 }, (sample) => samples.push(sample));
    const after = epochNow();

    expect(report.windowSeconds).to.be.within(1, 2);
    expect(report.emitted).to.be.within(180, 200);
    expect(report.offeredRate).to.be.closeTo(report.emitted / report.windowSeconds, 0.001);
    expect(Object.values(report.byKind).reduce((a, b) => a + b, 0)).to.equal(report.emitted);
    expect(report.byKind).to.have.keys('create', 'start', 'finish', 'delete');
    expect(report.cpuSeconds).to.be.above(0);
    expect(report.maxWatchBufferedBytes).to.be.at.least(0);

    // About one sample per 100 ms of changes in the organization's namespaces, each with a time of this clock.
    expect(samples.length).to.be.within(3, 11);
    for (const sample of samples) {
      expect(sample.at).to.be.within(before, after);
      expect(sample.kind).to.not.equal('delete');
      expect(sample.visibleAs).to.not.be.empty;
    }
    const events = await watch.until((seen) => seen.length >= report.emitted, 10_000);
    expect(events.slice(0, report.emitted).map((e) => e.type)).to.include.members(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events.map((e) => e.object.metadata.uid)).to.include.members(samples.map((s) => s.uid));
  });

  it('refuses a second churn while one runs, and churns again after it', async () => {
    const first = sim.churn({ rate: 100, seconds: 0.3, sampleEveryMs: 0 });
    let refused: Error | undefined;
    await sim.churn({ rate: 100, seconds: 0.3, sampleEveryMs: 0 }).catch((error: Error) => (refused = error));
    expect(refused?.message).to.match(/already churning/);
    expect((await first).emitted).to.be.above(0);
    expect((await sim.churn({ rate: 100, seconds: 0.3, sampleEveryMs: 0 })).emitted).to.be.above(0);
  });

  it('reports its CPU and exits on stop', async () => {
    expect(sim.cpuSeconds()).to.be.above(0);
    await sim.stop();
    expect(sim.cpuSeconds()).to.equal(null);
  });

  it('runs at the nice value it is given, every thread of it, and still answers over IPC', async function () {
    if (process.platform !== 'linux') this.skip();
    const niced = await startKubeSim({ ...SETTINGS, clusterName: 'gpu-niced' }, { niceness: 10 });
    try {
      // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value.
      const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const threads = readdirSync(`/proc/${niced.pid}/task`).map((tid) => niceOf(readFileSync(`/proc/${niced.pid}/task/${tid}/stat`, 'utf8')));
      expect(threads.length).to.be.above(1);
      expect(new Set(threads)).to.deep.equal(new Set([10]));
      expect((await niced.churn({ rate: 100, seconds: 0.2, sampleEveryMs: 0 })).emitted).to.be.above(0);
    } finally {
      await niced.stop();
    }
  });
});
