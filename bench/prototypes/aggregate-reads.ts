// Times the aggregate reads of the store on an existing index file, in-process: statistics over
// last_30_days (each group_by), the GPU-hours ranking, the list's total_count and capacity usage of
// period `total`, as ORG_ADMIN and as a TEAM_LEAD. Used to compare the store before and after the
// statistics rollups (docs/performance.md). The file is opened read-write (it may be migrated).
//   npx tsx bench/prototypes/aggregate-reads.ts <index.db> [--budget-ms 1500] [--only name,name]
import type { Scope } from '../../src/domain/principal.js';
import type { StatsGroupKey, WorkloadFilter } from '../../src/query/ports.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteWorkloadStore } from '../../src/store/sqlite/workload-store.js';
import { BENCH_NOW } from '../data/generate-workloads.js';
import { timeIt } from '../lib/measure/sql-profile.js';

/** CPU time of this process so far (user + system), ms: less disturbed than wall time on a busy machine. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const DAY_MS = 86_400_000;
const ADMIN: Scope = { organizationId: 'acme', initiatives: null };
const LEAD: Scope = { organizationId: 'acme', initiatives: ['llm-finetune', 'speech', 'multimodal'] };

function scenarios(store: SqliteWorkloadStore): [string, () => Promise<unknown>][] {
  // The benchmark's time (midnight, the end of the generated history), and 13:00 that day: a
  // last_30_days whose first day is partial. The generated rows end at BENCH_NOW, so no later time
  // of that day has rows after `now` (none would, in a real index).
  const now = BENCH_NOW;
  const afternoon = BENCH_NOW + 13 * 3_600_000;
  const window = (scope: Scope, at: number): WorkloadFilter => ({ scope, submittedFrom: at - 30 * DAY_MS, submittedBefore: at + 1 });
  const stats = (scope: Scope, groupBy: StatsGroupKey | null, at = now) => () => store.stats(window(scope, at), groupBy, at);
  return [
    ['stats_30d', stats(ADMIN, null)],
    ['stats_30d_by_submitted_by', stats(ADMIN, 'submitted_by')],
    ['stats_30d_by_initiative_id', stats(ADMIN, 'initiative_id')],
    ['stats_30d_by_instance_type', stats(ADMIN, 'instance_type')],
    ['stats_30d_13h', stats(ADMIN, null, afternoon)],
    ['stats_30d_13h_by_submitted_by', stats(ADMIN, 'submitted_by', afternoon)],
    ['stats_30d_13h_by_initiative_id', stats(ADMIN, 'initiative_id', afternoon)],
    ['stats_30d_13h_by_instance_type', stats(ADMIN, 'instance_type', afternoon)],
    ['stats_30d_lead_by_submitted_by', stats(LEAD, 'submitted_by')],
    ['ranking_gpu_hours', () => store.rankByGpuHours({ scope: ADMIN }, { order: 'desc', limit: 10, now })],
    ['ranking_gpu_hours_asc', () => store.rankByGpuHours({ scope: ADMIN }, { order: 'asc', limit: 10, now })],
    ['ranking_gpu_hours_lead_running', () => store.rankByGpuHours({ scope: LEAD, status: 'running' }, { order: 'desc', limit: 10, now })],
    ['list_default', () => store.list({ scope: ADMIN }, { limit: 20, after: null })],
    ['list_lead', () => store.list({ scope: LEAD }, { limit: 20, after: null })],
    ['usage_total', () => store.usage({ scope: ADMIN }, { from: null, to: now })],
    ['usage_total_lead', () => store.usage({ scope: LEAD }, { from: null, to: now })],
  ];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const path = args[0];
  if (path === undefined) throw new Error('Usage: aggregate-reads.ts <index.db> [--budget-ms N] [--only a,b]');
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const budgetMs = Number(option('--budget-ms') ?? 1500);
  const only = option('--only')?.split(',');
  const opened = performance.now();
  const db = openDatabase(path);
  console.log(`opened (and migrated) in ${(performance.now() - opened).toFixed(0)} ms, schema v${String(db.pragma('user_version', { simple: true }))}`);
  try {
    const store = new SqliteWorkloadStore(db);
    for (const [name, run] of scenarios(store)) {
      if (only !== undefined && !only.includes(name)) continue;
      const cpuBefore = cpuMs();
      const { medianMs, runs } = await timeIt(run, { budgetMs, minRuns: 5 });
      const cpuPerRun = (cpuMs() - cpuBefore) / (runs + 1);
      console.log(`${name.padEnd(32)} wall median ${medianMs.toFixed(2).padStart(9)} ms, cpu mean ${cpuPerRun.toFixed(2).padStart(9)} ms  (${runs} runs)`);
    }
  } finally {
    db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
