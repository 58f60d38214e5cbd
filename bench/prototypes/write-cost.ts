// Per-workload write cost of the index, as the indexer pays it: each generated workload goes through
// its life in three flushes, like watch events would bring it (pending with an unscheduled pod;
// running with its pods open; finished with its pods closed), then retention deletes the finished
// ones. Batches of --batch workloads per flush, into a real file in a temporary folder. Prints µs per
// workload for each step, in CPU time of this process (user + system), which other processes on a
// busy machine disturb less than wall time. Compare schema changes (indexes, rollups) on the same
// machine, repeated. For a stable comparison, count the instructions SQLite executes under
// callgrind, with and without the lives (the difference divided by their number). Since schema v4
// the rollups are computed in JS (src/store/rollups/) and only applied in SQL, so that count leaves
// their JS part out: compare CPU time as well, with the variants run alternately.
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=sqlite3_step \
//     node --import tsx bench/prototypes/write-cost.ts --prefill 20000 --workloads 4000 [--no-delete]
//   npx tsx bench/prototypes/write-cost.ts [--workloads 20000] [--batch 500] [--prefill 100000] [--no-delete]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PodGpuInterval, WorkloadRecord } from '../../src/domain/workload.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteWorkloadStore } from '../../src/store/sqlite/workload-store.js';
import { BENCH_NOW, generateWorkloads } from '../data/generate-workloads.js';

/** CPU time of this process so far, ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

interface Life {
  final: WorkloadRecord;
  pods: PodGpuInterval[];
}

function option(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  return args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
}

async function main(): Promise<void> {
  const workloads = option('--workloads', 20_000);
  const batch = option('--batch', 500);
  const prefill = option('--prefill', 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'gpucap-write-cost-'));
  const db = openDatabase(join(dir, 'index.db'));
  const store = new SqliteWorkloadStore(db, { clock: { now: () => BENCH_NOW } });
  try {
    // A populated file first, so that indexes and rollups have the depth of a real one.
    const lives: Life[] = [];
    let filled = 0;
    let records: WorkloadRecord[] = [];
    let pods: PodGpuInterval[] = [];
    for (const { record, pods: recordPods } of generateWorkloads(prefill + workloads)) {
      if (filled < prefill) {
        records.push(record);
        pods.push(...recordPods);
        filled += 1;
        if (records.length >= 10_000) {
          await store.upsertWorkloads(records);
          await store.upsertPodIntervals(pods);
          records = [];
          pods = [];
        }
      } else if (record.startedAt !== null && record.completedAt !== null) {
        lives.push({ final: record, pods: recordPods });
      }
    }
    await store.upsertWorkloads(records);
    await store.upsertPodIntervals(pods);
    const timings = { pending: 0, running: 0, finished: 0, deleted: 0 };
    for (let i = 0; i < lives.length; i += batch) {
      const slice = lives.slice(i, i + batch);
      let started = cpuMs();
      await store.upsertWorkloads(slice.map(({ final }) => ({ ...final, status: 'pending', startedAt: null, completedAt: null, exitCode: null, resourceVersion: '1' })));
      await store.upsertPodIntervals(slice.flatMap(({ pods: p }) => p.slice(0, 1).map((pod) => ({ ...pod, startedAt: null, finishedAt: null }))));
      timings.pending += cpuMs() - started;
      started = cpuMs();
      await store.upsertWorkloads(slice.map(({ final }) => ({ ...final, status: 'running', completedAt: null, exitCode: null, resourceVersion: '2' })));
      await store.upsertPodIntervals(slice.flatMap(({ pods: p }) => p.map((pod) => ({ ...pod, finishedAt: null }))));
      timings.running += cpuMs() - started;
      started = cpuMs();
      await store.upsertWorkloads(slice.map(({ final }) => ({ ...final, resourceVersion: '3' })));
      await store.upsertPodIntervals(slice.flatMap(({ pods: p }) => p));
      timings.finished += cpuMs() - started;
    }
    const deleteStarted = cpuMs();
    let deleted = 0;
    for (; !process.argv.includes('--no-delete') && lives.length > 0;) {
      const n = await store.deleteFinishedBatch(BENCH_NOW + 30 * 86_400_000, batch);
      deleted += n;
      if (n < batch || deleted >= lives.length) break;
    }
    timings.deleted = cpuMs() - deleteStarted;
    const perWorkload = (ms: number, n: number) => ((ms * 1000) / n).toFixed(1).padStart(7);
    console.log(`${lives.length} workloads after ${prefill} prefilled, batches of ${batch}: µs per workload`);
    console.log(`  pending ${perWorkload(timings.pending, lives.length)}   running ${perWorkload(timings.running, lives.length)}   finished ${perWorkload(timings.finished, lives.length)}   ` +
      `life ${perWorkload(timings.pending + timings.running + timings.finished, lives.length)}   retention delete ${perWorkload(timings.deleted, deleted)} (${deleted} rows)`);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
