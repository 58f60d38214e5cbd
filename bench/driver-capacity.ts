// How many pod events per second one simulated cluster's driver (bench/lib/kube-sim/kube-sim.ts) can offer on its
// own: the sync-ingest home cluster at full size in its child process, one pod watch read and dropped
// by this process (a reader that costs next to nothing, where the service would parse), and churn at
// each rate for a few seconds. Prints what the driver offered, its CPU and the watch backlog, which
// tells whether a benchmark's step is limited by its driver or by the service.
// Not part of `npm run bench`: it measures the test tool, not the service.
//   npx tsx bench/driver-capacity.ts [--rates 5000,10000,15000] [--seconds 5] [--clusters 4] [--profile DIR]
import { request } from 'node:http';
import { CLUSTER_SEED, REFERENCE_FLEET, shareOf } from './data/generate-cluster.js';
import { startKubeSim, type KubeSim } from './lib/kube-sim/kube-sim.js';
import { isEntryPoint } from './lib/report/format.js';

/** Opens a watch of every pod from the current version and counts the bytes it receives. */
async function drainPods(sim: KubeSim): Promise<{ bytes: () => number; close: () => void }> {
  const { token } = (JSON.parse(sim.kubeconfig) as { users: { user: { token: string } }[] }).users[0]?.user ?? { token: '' };
  const headers = { authorization: `Bearer ${token}` };
  const list = (await (await fetch(`${sim.url}/api/v1/pods?limit=1`, { headers })).json()) as { metadata: { resourceVersion: string } };
  let bytes = 0;
  return new Promise((resolve, reject) => {
    const req = request(`${sim.url}/api/v1/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}`, { headers }, (res) => {
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      resolve({ bytes: () => bytes, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(args: string[]): Promise<void> {
  const arg = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const rates = (arg('--rates') ?? '5000,10000,15000').split(',').map(Number);
  const seconds = Number(arg('--seconds') ?? 5);
  const clusters = Number(arg('--clusters') ?? REFERENCE_FLEET.clusters);
  const profileDir = arg('--profile');
  const sim = await startKubeSim(
    {
      clusterName: 'gpu-a',
      shape: shareOf(REFERENCE_FLEET.total, clusters, 0),
      seed: 0,
      now: Math.floor(Date.now() / 60_000) * 60_000,
      clockOffsetMs: 0,
      churnSeed: CLUSTER_SEED,
      historyLimit: 100_000,
      bookmarkIntervalMs: 5_000,
      organization: 'acme',
      spotChecksPerKind: 0,
    },
    { nodeArgs: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] },
  );
  console.log(`driver pid ${sim.pid}: ${sim.counts.pods.toLocaleString('en-US')} pods, ready after ${(sim.startupMs / 1000).toFixed(1)} s`);
  const watch = await drainPods(sim);
  try {
    for (const rate of rates) {
      const bytesBefore = watch.bytes();
      const report = await sim.churn({ rate, seconds, sampleEveryMs: 100 });
      console.log(
        `${String(rate).padStart(6)} ev/s asked: offered ${Math.round(report.offeredRate)} ev/s with ${Math.round((report.cpuSeconds / report.windowSeconds) * 100)} % of a core ` +
          `(${((report.cpuSeconds / report.emitted) * 1e6).toFixed(0)} µs per event), watch backlog ≤ ${(report.maxWatchBufferedBytes / 1024).toFixed(0)} KiB, ` +
          `${((watch.bytes() - bytesBefore) / 1024 ** 2).toFixed(0)} MiB read`,
      );
    }
  } finally {
    watch.close();
    await sim.stop();
  }
}

if (isEntryPoint(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
