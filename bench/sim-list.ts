// How fast the simulated API serves a big LIST: seeds it with the sync-ingest cluster (100k pods by
// default) and times `listPages` of src/k8s/list-pages.ts (the service's own paginated LIST, pages of
// 500) run in a child process, so that the simulated server and the client each have their own
// thread, as in the benchmark. Reports wall time, and the CPU time of the server and of the client.
// Not part of `npm run bench`: it measures the test tool, not the service.
//   npx tsx bench/sim-list.ts [--pods 100000] [--runs 3]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { listPages } from '../src/k8s/list-pages.js';
import { startKubeApi } from '../sim/kube-api/server.js';
import { KubeStore } from '../sim/kube-api/store.js';
import { FULL_CLUSTER, generateCluster } from './data/generate-cluster.js';
import { isEntryPoint } from './lib/report/format.js';

const cpuSeconds = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1e6;

/** The child: one paginated LIST of every pod; prints {wallSeconds, cpuSeconds, items} as JSON. */
async function client(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(kubeconfigPath, 'utf8'));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await listPages(kc, { path: '/api/v1/pods', pageSize: 500, signal: new AbortController().signal, onPage: () => undefined });
  console.log(JSON.stringify({ wallSeconds: (performance.now() - started) / 1000, cpuSeconds: cpuSeconds(process.cpuUsage(cpu)), items: result.items }));
}

async function main(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
  const pods = arg('--pods', FULL_CLUSTER.pods);
  const runs = arg('--runs', 3);
  const cluster = generateCluster({ ...FULL_CLUSTER, pods, jobs: Math.round(pods / 10) }, { now: Date.parse('2026-11-01T00:00:00Z') });
  const store = new KubeStore();
  let cpu = process.cpuUsage();
  let started = performance.now();
  store.seed('pods', cluster.pods);
  console.log(`seeded ${pods.toLocaleString('en-US')} pods in ${((performance.now() - started) / 1000).toFixed(2)} s (${cpuSeconds(process.cpuUsage(cpu)).toFixed(2)} s CPU)`);
  const sim = await startKubeApi({ store });
  const dir = mkdtempSync(join(tmpdir(), 'sim-list-'));
  const kubeconfigPath = join(dir, 'kubeconfig.json');
  writeFileSync(kubeconfigPath, sim.kubeconfig());
  try {
    for (let run = 0; run < runs; run++) {
      cpu = process.cpuUsage();
      started = performance.now();
      // Asynchronous: this process must keep serving the child's requests while it waits.
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--client', kubeconfigPath]);
      const output = stdout;
      const serverCpu = cpuSeconds(process.cpuUsage(cpu));
      const measured = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { wallSeconds: number; cpuSeconds: number; items: number };
      console.log(`run ${run + 1}: LIST of ${measured.items.toLocaleString('en-US')} pods in pages of 500: ${measured.wallSeconds.toFixed(2)} s wall; ` +
        `CPU ${serverCpu.toFixed(2)} s server, ${measured.cpuSeconds.toFixed(2)} s client (listPages); ${((performance.now() - started) / 1000).toFixed(2)} s with the child's start`);
    }
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly = isEntryPoint(import.meta.url);
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const run = args[0] === '--client' ? client(args[1] ?? '') : main(args);
  run.catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
