// The plans PostgreSQL chooses for the reads of src/store/reads/workload-index.ts, at a realistic size
// (50k workloads over five months, with their pods), from the SQL the index really runs: recorded from
// its pool and explained with the same values (EXPLAIN (FORMAT JSON)). The twin of SQLite's EXPLAIN
// QUERY PLAN checks in list.test.ts, stats.test.ts and usage.test.ts.
import { expect } from 'chai';
import pg from 'pg';
import type { WorkloadFilter } from '../../../src/query/ports.js';
import { TYPES } from '../../../src/store/postgres/connection.js';
import { MIGRATIONS } from '../../../src/store/postgres/migrations/schema.js';
import { postgresIndex } from '../../../src/store/postgres/read-index.js';
import type { SqlWorkloadIndex } from '../../../src/store/reads/workload-index.js';
import { POSTGRES } from '../../../src/store/sql/dialect.js';
import { finishedGpuHoursSql } from '../../../src/store/rankings/gpu-hours-ranking.js';
import { horizonSql } from '../../../src/store/sql/rollup-sql.js';
import { freshDatabase, type TestDatabase } from '../../support/postgres-database.js';
import { generate, GENERATED_NOW, seedPostgres } from '../postgres-reads-seed.js';
import { at, HOUR_MS } from '../temp-store.js';

const NOW = GENERATED_NOW;
const DAY = 24 * HOUR_MS;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** One line per node, indented, for failure messages. */
function describePlan(node: PlanNode, depth = 0): string {
  const on = [node['Relation Name'], node['Index Name']].filter((s) => s !== undefined).join(' using ');
  return [`${'  '.repeat(depth)}${node['Node Type']}${on === '' ? '' : ` on ${on}`}`, ...(node.Plans ?? []).map((n) => describePlan(n, depth + 1))].join('\n');
}

/** A list's one statement (workload-index.ts withCount): its page, and its count run once as an InitPlan. */
function pageAndCount(plan: PlanNode | undefined): { page: PlanNode; count: PlanNode } {
  const count = plan?.Plans?.find((n) => n['Parent Relationship'] === 'InitPlan');
  if (plan === undefined || count === undefined) throw new Error(`Expected a page with its count:\n${plan === undefined ? 'no plan' : describePlan(plan)}`);
  return { page: { ...plan, Plans: (plan.Plans ?? []).filter((n) => n !== count) }, count };
}

interface Recorded {
  text: string;
  values: unknown[];
  /** Run as a named statement: on its generic plan, where the read asks for it (workload-index.ts). */
  named: boolean;
}

/** A pool that remembers the statements run through it and through the clients it lends. */
function recording(pool: pg.Pool): { pool: pg.Pool; statements: Recorded[] } {
  const statements: Recorded[] = [];
  // A read's statement comes as text and values, or as pg's query config (a named statement).
  const record = (target: pg.Pool | pg.PoolClient) => (query: string | pg.QueryConfig, values?: unknown[]) => {
    const text = typeof query === 'string' ? query : query.text;
    const named = typeof query !== 'string' && query.name !== undefined;
    if (!/^(BEGIN|COMMIT|ROLLBACK)\b/.test(text)) statements.push({ text, values: (typeof query === 'string' ? values : query.values) ?? [], named });
    return target.query(query, values);
  };
  const lend = async () => {
    const client = await pool.connect();
    return new Proxy(client, { get: (target, property) => (property === 'query' ? record(target) : Reflect.get(target, property, target)) });
  };
  const proxy = new Proxy(pool, {
    get: (target, property) => (property === 'query' ? record(target) : property === 'connect' ? lend : Reflect.get(target, property, target)),
  });
  return { pool: proxy, statements };
}

/** A bound value as an SQL literal, for EXECUTE: text, whole numbers and lists of text. */
function literal(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]::text[]`;
  throw new Error(`Cannot write ${String(value)} as a literal`);
}

describe('PostgreSQL read plans at 50k workloads', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let pool: pg.Pool;
  /** Each partition's index → the index of the parent it was attached to (workloads_org_submitted …). */
  const parentIndex = new Map<string, string>();
  const emptyPartitions = new Set<string>();

  before(async function () {
    db = await freshDatabase(this);
    const client = new pg.Client({ connectionString: db.url, types: TYPES });
    await client.connect();
    try {
      // Pods left open past their workload's completion are rare in a real cluster (a kubelet that
      // never reported the end); the differential test has many of them, these plans a few.
      await seedPostgres(client, generate(2, 50_000, { openAfterCompletion: 0.002 }));
      await client.query('VACUUM ANALYZE');
      const { rows } = await client.query<{ child: string; parent: string }>(
        `SELECT c.relname AS child, p.relname AS parent FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE c.relkind = 'i'`,
      );
      for (const row of rows) parentIndex.set(row.child, row.parent);
      const partitions = await client.query<{ name: string }>("SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relname ~ '^workload(s|_pods)_p[0-9]{6}$'");
      for (const { name } of partitions.rows) {
        const { rows: [found] } = await client.query<{ any: boolean }>(`SELECT EXISTS (SELECT FROM "${name}") AS any`);
        if (found?.any !== true) emptyPartitions.add(name);
      }
    } finally {
      await client.end();
    }
    pool = new pg.Pool({ connectionString: db.url, types: TYPES, max: 2 });
  });
  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** The plans of the statements `read` runs on a SqlWorkloadIndex. */
  async function plansOf(read: (index: SqlWorkloadIndex) => Promise<unknown>): Promise<PlanNode[]> {
    const recorded = recording(pool);
    await read(postgresIndex(recorded.pool));
    const plans: PlanNode[] = [];
    for (const { text, values } of recorded.statements) {
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
      const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (plan === undefined) throw new Error(`No plan for ${text}`);
      plans.push(plan);
    }
    return plans;
  }

  /**
   * The generic plans of the statements `read` runs as named ones, with the values of that run (PG 15
   * has no EXPLAIN (GENERIC_PLAN): an SQL PREPARE, then EXPLAIN EXECUTE under force_generic_plan).
   * Partitions pruned when the plan starts, by its values, are not in it.
   */
  async function genericPlansOf(read: (index: SqlWorkloadIndex) => Promise<unknown>): Promise<PlanNode[]> {
    const recorded = recording(pool);
    await read(postgresIndex(recorded.pool));
    const client = await pool.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      const plans: PlanNode[] = [];
      for (const { text, values } of recorded.statements.filter((s) => s.named)) {
        await client.query(`PREPARE generic AS ${text}`);
        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) EXECUTE generic(${values.map(literal).join(', ')})`);
        await client.query('DEALLOCATE generic');
        const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
        if (plan === undefined) throw new Error(`No generic plan for ${text}`);
        plans.push(plan);
      }
      return plans;
    } finally {
      await client.query('RESET plan_cache_mode');
      client.release();
    }
  }

  const indexOf = (node: PlanNode) => parentIndex.get(node['Index Name'] ?? '') ?? node['Index Name'];
  /**
   * Sequential scans of partitions of workloads or workload_pods that hold rows. The months ahead that
   * the migrator creates are empty: scanning one reads no page, and the planner prefers it to an index.
   */
  const seqScansOfWorkloads = (plan: PlanNode) =>
    nodesOf(plan).filter((n) => n['Node Type'] === 'Seq Scan' && /^workload(s|_pods)_p\d{6}$/.test(n['Relation Name'] ?? '') && !emptyPartitions.has(n['Relation Name'] ?? ''));

  const lists: Record<string, WorkloadFilter> = {
    'the organization': { scope: { organizationId: 'acme', initiatives: null } },
    'a status': { scope: { organizationId: 'acme', initiatives: null }, status: 'failed' },
    'an initiative': { scope: { organizationId: 'acme', initiatives: null }, initiativeId: 'vision' },
    'a submitter': { scope: { organizationId: 'acme', initiatives: null }, submittedBy: 'bob' },
    'is_managed': { scope: { organizationId: 'acme', initiatives: null }, isManaged: false },
    'a status of an initiative': { scope: { organizationId: 'acme', initiatives: null }, initiativeId: 'vision', status: 'failed' },
    'a date range': { scope: { organizationId: 'acme', initiatives: null }, submittedFrom: NOW - 30 * DAY, submittedBefore: NOW },
  };

  for (const [name, filter] of Object.entries(lists)) {
    const dated = filter.submittedFrom !== undefined;
    for (const after of [null, { submittedAt: dated ? NOW - 10 * DAY : at('2026-09-15T00:00:00Z'), workloadId: 'w-5' }]) {
      it(`lists ${name}${after === null ? '' : ' after a cursor'} from an index of each month, in order, without a sort or a scan`, async () => {
        const statements = await plansOf((index) => index.list(filter, { limit: 20, after }));
        expect(statements, 'one statement: the page with its count').to.have.length(1);
        const { page, count } = pageAndCount(statements[0]);
        // Lists without dates run on their generic plans, which must read the same way.
        const generic = (await genericPlansOf((index) => index.list(filter, { limit: 20, after }))).map(pageAndCount);
        expect(generic.length, 'generic plans').to.equal(dated ? 0 : 1);
        for (const plan of [page, ...generic.map((g) => g.page)]) {
          const text = describePlan(plan);
          const nodes = nodesOf(plan);
          expect(nodes.filter((n) => n['Node Type'] === 'Merge Append' || n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort'), text).to.deep.equal([]);
          const scans = nodes.filter((n) => n['Relation Name']?.startsWith('workloads_p'));
          expect(scans.length, text).to.be.greaterThan(0);
          // Several months: one Append of their scans, newest month first (no Merge Append: it sorts).
          if (scans.length > 1) expect(nodes.some((n) => n['Node Type'] === 'Append'), text).to.equal(true);
          for (const scan of scans) {
            expect(scan['Node Type'], text).to.match(/^Index (Only )?Scan$/);
            expect(indexOf(scan), text).to.match(/^workloads_org_/);
          }
          // A cursor bounds the months too: none after the cursor's is read.
          if (after !== null) expect(scans.map((n) => n['Relation Name']), text).not.to.include('workloads_p202612');
        }
        for (const { count: plan } of generic) expect(nodesOf(plan).filter((n) => n['Relation Name']?.startsWith('workloads')), describePlan(plan)).to.deep.equal([]);
        if (!dated) {
          // Without dates, the count comes from a rollup.
          expect(nodesOf(count).filter((n) => n['Relation Name']?.startsWith('workloads')), describePlan(count)).to.deep.equal([]);
        } else {
          // With dates it counts the rows of the months in range, and no other month (see the report's
          // open point: most of those months match, so PostgreSQL may rightly scan them whole).
          const months = nodesOf(count).filter((n) => n['Relation Name']?.startsWith('workloads_p')).map((n) => n['Relation Name']);
          expect(months, describePlan(count)).to.have.members(['workloads_p202610', 'workloads_p202611']);
        }
      });
    }
  }

  it('lists a team scope by seeking each team\'s index, without a scan, on its custom and its generic plan', async () => {
    const read = (index: SqlWorkloadIndex) => index.list({ scope: { organizationId: 'acme', initiatives: ['llm', 'audio'] } }, { limit: 20, after: null });
    const [statement, ...others] = await plansOf(read);
    expect(others, 'one statement: the page with its count').to.deep.equal([]);
    const { page } = pageAndCount(statement);
    const [generic] = (await genericPlansOf(read)).map(pageAndCount);
    if (generic === undefined) throw new Error('Expected a generic plan of the page');
    for (const plan of [page, generic.page]) {
      const text = describePlan(plan);
      expect(seqScansOfWorkloads(plan), text).to.deep.equal([]);
      expect(nodesOf(plan).some((n) => n['Node Type'] === 'Function Scan'), text).to.equal(true);
      expect(nodesOf(plan).filter((n) => n['Relation Name']?.startsWith('workloads_p')).map(indexOf), text).to.satisfy((names: string[]) =>
        names.length > 0 && names.every((name) => name === 'workloads_org_initiative'));
      expect(nodesOf(plan).filter((n) => n['Node Type'] === 'Merge Append'), text).to.deep.equal([]);
    }
  });

  const last30Days: WorkloadFilter = { scope: { organizationId: 'acme', initiatives: null }, submittedFrom: NOW - 30 * DAY - 12_345, submittedBefore: NOW + 1 };

  for (const groupBy of [null, 'submitted_by', 'initiative_id', 'instance_type'] as const) {
    it(`reads statistics of the last 30 days by ${groupBy} from a daily rollup and indexes, without a scan of the rows`, async () => {
      const [plan] = await plansOf((index) => index.stats(last30Days, groupBy, NOW));
      if (plan === undefined) throw new Error('Expected a plan');
      const text = describePlan(plan);
      const table = { submitted_by: 'stats_daily_submitter', instance_type: 'stats_daily_instance_type', initiative_id: 'stats_daily_initiative', none: 'stats_daily_initiative' }[groupBy ?? 'none'];
      expect(nodesOf(plan).some((n) => n['Relation Name'] === table), text).to.equal(true);
      // By submitter, whole weeks from the weekly rollup (schema v11), by its primary key. (The usage
      // rollups are empty here: the planner rightly scans them.)
      if (groupBy === 'submitted_by') {
        expect(nodesOf(plan).some((n) => n['Index Name'] === 'stats_weekly_submitter_pkey'), text).to.equal(true);
        expect(nodesOf(plan).filter((n) => n['Relation Name'] === 'stats_weekly_submitter' && n['Node Type'] === 'Seq Scan'), text).to.deep.equal([]);
      }
      expect(seqScansOfWorkloads(plan), text).to.deep.equal([]);
      expect(nodesOf(plan).filter((n) => n['Relation Name']?.startsWith('workloads_p')).map(indexOf), text).to.include('workloads_unfinished_horizon');
    });
  }

  it('ranks finished workloads from the GPU-hours expression index and unfinished ones from the horizon index', async () => {
    const [finished, unfinished, count] = await plansOf((index) => index.rankByGpuHours({ scope: { organizationId: 'acme', initiatives: null } }, { order: 'desc', limit: 10, now: NOW }));
    if (finished === undefined || unfinished === undefined || count === undefined) throw new Error('Expected three plans');
    for (const plan of [finished, unfinished, count]) expect(seqScansOfWorkloads(plan), describePlan(plan)).to.deep.equal([]);
    const indexes = (plan: PlanNode) => nodesOf(plan).filter((n) => n['Relation Name']?.startsWith('workloads_p')).map(indexOf);
    expect(indexes(finished), describePlan(finished)).to.include('workloads_finished_gpu_hours');
    expect(indexes(unfinished), describePlan(unfinished)).to.include('workloads_unfinished_horizon');
    expect(nodesOf(count).some((n) => n['Relation Name'] === 'workload_totals'), describePlan(count)).to.equal(true);
  });

  it('ranks the waits that ended from their expression index and the waiting ones from the horizon index', async () => {
    const [ended, waiting, count] = await plansOf((index) => index.rankByQueue({ scope: { organizationId: 'acme', initiatives: null } }, { order: 'desc', limit: 10, now: NOW }));
    if (ended === undefined || waiting === undefined || count === undefined) throw new Error('Expected three plans');
    for (const plan of [ended, waiting, count]) expect(seqScansOfWorkloads(plan), describePlan(plan)).to.deep.equal([]);
    const indexes = (plan: PlanNode) => nodesOf(plan).filter((n) => n['Relation Name']?.startsWith('workloads_p')).map(indexOf);
    expect(indexes(ended), describePlan(ended)).to.include('workloads_queue_ended');
    expect(indexes(waiting), describePlan(waiting)).to.include('workloads_unfinished_horizon');
    expect(nodesOf(count).some((n) => n['Relation Name'] === 'workload_totals'), describePlan(count)).to.equal(true);
  });

  it('reads usage since ever from the rollups and the few pods past the end, without a scan of the rows or the pods', async () => {
    // A bounded window reads every pod that ran in it: at this size a month is a third of the pods,
    // and PostgreSQL rightly hashes them against the workloads rather than look each one up.
    const plans = await plansOf((index) => index.usage({ scope: { organizationId: 'acme', initiatives: null } }, { from: null, to: NOW }));
    expect(plans.length).to.equal(3);
    for (const plan of plans) expect(seqScansOfWorkloads(plan), describePlan(plan)).to.deep.equal([]);
    expect(nodesOf(plans[0] ?? { 'Node Type': '' }).some((n) => n['Relation Name'] === 'workload_totals'), describePlan(plans[0] ?? { 'Node Type': '' })).to.equal(true);
  });

  it('renders the expressions of the two expression indexes as the schema declares them, word for word', () => {
    const schema = MIGRATIONS.map((m) => m.sql).join('\n');
    expect(schema).to.include(horizonSql(POSTGRES).replaceAll('w.', ''));
    expect(schema).to.include(finishedGpuHoursSql(POSTGRES).replaceAll('w.', ''));
  });
});
