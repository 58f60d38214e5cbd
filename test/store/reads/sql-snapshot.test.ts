// The SQLite SQL of every read, byte for byte, against texts recorded from the code before the read
// builders were shared with PostgreSQL. Every statement the SQLite read functions
// prepare and run is recorded with its parameters, over a matrix of filters, pages, groupings, orders
// and windows, so a change of the text, even of whitespace, shows here; the EXPLAIN QUERY PLAN tests
// (list, stats, usage) then say whether a plan would have moved.
//
// The fixture is the reference: regenerate it (UPDATE_SQL_SNAPSHOT=1) only for a change of the SQLite
// SQL that is meant, and say so in the commit.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import { expect } from 'chai';
import type { WorkloadRecord } from '../../../src/domain/workload.js';
import type { Keyset, StatsGroupKey, WorkloadFilter } from '../../../src/query/ports.js';
import { SQLITE } from '../../../src/store/sql/dialect.js';
import { rawStatsQuery } from '../../../src/store/statistics/stats-queries.js';
import { rollupStatsQuery } from '../../../src/store/statistics/stats-rollup.js';
import { countQuery } from '../../../src/store/reads/list-queries.js';
import type { SqlWorkloadIndex } from '../../../src/store/reads/workload-index.js';
import type { SqlQuery } from '../../../src/store/sql/executor.js';
import { sqliteIndex } from '../../../src/store/sqlite/connection-ports.js';
import { rawGpuSecondsSql, whereOf } from '../../../src/store/sql/workload-sql.js';
import { StatementCache } from '../../../src/store/sqlite/statement-cache.js';
import { listUnfinished } from '../../../src/store/sqlite/unfinished.js';
import { at, HOUR_MS, ORG, openTempStore, type TempStore } from '../temp-store.js';
import { sqliteOnly } from '../../support/backend.js';

const FIXTURE = new URL('./fixtures/sql-snapshot.sqlite.json', import.meta.url);
const NOW = at('2026-11-10T14:00:00Z');
const DAY = 24 * HOUR_MS;

/** One statement prepared or run, with what it was run with; `text` indexes Snapshot.texts. */
type Event = [kind: 'prepare', text: number] | [kind: 'run', text: number, method: string, args: unknown[]] | [kind: 'error', message: string];

interface Snapshot {
  texts: string[];
  cases: Record<string, Event[]>;
}

/** A StatementCache that records every text asked for and every run of the statements it gives out. */
class CapturingStatements extends StatementCache {
  readonly events: (['prepare', string] | ['run', string, string, unknown[]])[] = [];

  override get(sql: string): Statement {
    const statement = super.get(sql);
    this.events.push(['prepare', sql]);
    const events = this.events;
    return new Proxy(statement, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        if (property === 'all' || property === 'get' || property === 'run' || property === 'iterate') {
          return (...args: unknown[]) => {
            events.push(['run', sql, property, args]);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  }
}

const scope = (initiatives: string[] | null, organizationId = ORG) => ({ organizationId, initiatives });
const manyTeams = Array.from({ length: 40 }, (_, i) => `team-${String(i).padStart(2, '0')}`);

const FILTERS: Record<string, WorkloadFilter> = {
  'scope all': { scope: scope(null) },
  'scope two teams': { scope: scope(['llm', 'vision']) },
  'scope one team': { scope: scope(['vision']) },
  'scope no teams': { scope: scope([]) },
  'scope beyond the team seeks': { scope: scope(['llm', ...manyTeams]) },
  'other organization': { scope: scope(null, 'globex') },
  initiative: { scope: scope(null), initiativeId: 'llm' },
  'teams and initiative': { scope: scope(['llm', 'vision']), initiativeId: 'vision' },
  status: { scope: scope(null), status: 'running' },
  'status and initiative': { scope: scope(null), status: 'completed', initiativeId: 'llm' },
  submitter: { scope: scope(null), submittedBy: 'bob' },
  'managed false': { scope: scope(null), isManaged: false },
  'managed true and submitter': { scope: scope(null), isManaged: true, submittedBy: 'alice' },
  'from': { scope: scope(null), submittedFrom: NOW - 30 * DAY },
  'before': { scope: scope(null), submittedBefore: NOW + 1 },
  'from and before': { scope: scope(null), submittedFrom: NOW - 7 * DAY - 12_345, submittedBefore: NOW - 2 * DAY + 6789 },
  'from and before at midnight': { scope: scope(null), submittedFrom: at('2026-11-01T00:00:00Z'), submittedBefore: at('2026-11-09T00:00:00Z') },
  'within one day': { scope: scope(null), submittedFrom: at('2026-11-05T03:00:00Z'), submittedBefore: at('2026-11-05T09:00:00Z') },
  'teams and dates': { scope: scope(['llm', 'audio']), submittedFrom: NOW - 10 * DAY, submittedBefore: NOW },
  'status and from': { scope: scope(null), status: 'failed', submittedFrom: NOW - 20 * DAY },
  'everything': {
    scope: scope(['llm', 'vision']), initiativeId: 'llm', status: 'completed', submittedBy: 'alice', isManaged: true,
    submittedFrom: NOW - 20 * DAY, submittedBefore: NOW,
  },
};

const CURSORS: Record<string, Keyset | null> = {
  'first page': null,
  'after a cursor': { submittedAt: at('2026-11-05T00:00:00Z'), workloadId: 'w-05' },
  'after a cursor past the end date': { submittedAt: NOW + 5 * DAY, workloadId: 'w-zz' },
};

const GROUPS: (StatsGroupKey | null)[] = [null, 'submitted_by', 'initiative_id', 'instance_type', 'failure_reason'];

/** Enough rows for every read to run every statement: teams, statuses, running workloads, pods open past completion. */
function seedRows(): { workloads: WorkloadRecord[]; pods: { podUid: string; workloadId: string; gpus: number; startedAt: number | null; finishedAt: number | null }[] } {
  const initiatives = ['llm', 'vision', 'audio'];
  const statuses = ['completed', 'failed', 'running', 'completed', 'pending', 'cancelled'] as const;
  const workloads: WorkloadRecord[] = [];
  for (let i = 0; i < 18; i += 1) {
    const status = statuses[i % statuses.length] ?? 'completed';
    const submittedAt = NOW - (i + 1) * 2 * DAY + i * 997;
    const startedAt = status === 'pending' || (status === 'cancelled' && i % 2 === 0) ? null : submittedAt + 60_000;
    const finished = status === 'completed' || status === 'failed' || status === 'cancelled';
    workloads.push({
      workloadId: `w-${String(i).padStart(2, '0')}`,
      organizationId: i === 17 ? 'globex' : ORG,
      clusterId: 'local',
      namespace: 'ns',
      name: `name-${i}`,
      kind: 'Job',
      status,
      submittedBy: i % 3 === 0 ? 'bob' : 'alice',
      initiativeId: initiatives[i % 3] ?? 'llm',
      instanceType: i % 2 === 0 ? 'p5' : 'a3',
      gpuCount: 1 + (i % 4),
      submittedAt,
      startedAt,
      completedAt: finished ? (startedAt ?? submittedAt) + (i + 1) * HOUR_MS : null,
      exitCode: finished ? (status === 'failed' ? 1 : 0) : null,
      failureReason: status === 'failed' ? 'oom_killed' : status === 'cancelled' ? 'deleted' : null,
      isManaged: i % 4 !== 1,
      resourceVersion: '1',
    });
  }
  const pods = workloads.filter((w) => w.startedAt !== null).flatMap((w, k) => [
    { podUid: `${w.workloadId}-p0`, workloadId: w.workloadId, gpus: w.gpuCount, startedAt: w.startedAt, finishedAt: k % 5 === 0 ? null : w.completedAt },
    ...(k % 3 === 0 ? [{ podUid: `${w.workloadId}-p1`, workloadId: w.workloadId, gpus: 1, startedAt: (w.startedAt ?? 0) + HOUR_MS, finishedAt: null }] : []),
  ]);
  return { workloads, pods };
}

/** What a case runs on: the store's read port and writes over one connection's recorded statements. */
interface Reads {
  index: SqlWorkloadIndex;
  statements: StatementCache;
  /** One of the builders' queries, run as the store runs it. */
  rows(query: SqlQuery): unknown[];
  row(query: SqlQuery): unknown;
}

/** Every read of the SQLite store, each case run on fresh CapturingStatements. */
function cases(): Record<string, (reads: Reads) => unknown> {
  const all: Record<string, (reads: Reads) => unknown> = {};
  for (const [name, filter] of Object.entries(FILTERS)) {
    const timed = filter.submittedFrom !== undefined || filter.submittedBefore !== undefined;
    const rollupScope = filter.scope.initiatives?.length !== 0;
    const statsOnRollups = rollupScope && filter.submittedBy === undefined && filter.isManaged === undefined && filter.status === undefined;
    const rankingOnRollups = statsOnRollups && !timed;
    for (const [cursorName, after] of Object.entries(CURSORS)) {
      all[`list ${name}, ${cursorName}`] = (s) => s.index.list(filter, { limit: 2, after });
    }
    all[`countMatches ${name}`] = (s) => s.row(countQuery(SQLITE, filter));
    all[`describe ${name}`] = (s) => s.index.describe(['w-00', 'w-01', 'w-04', 'w-17', 'unknown'], filter);
    all[`activeGpus ${name}`] = (s) => s.index.activeGpus(filter);
    for (const alias of ['w', 'c', 't'] as const) all[`whereOf ${name} as ${alias}`] = () => whereOf(SQLITE, filter, alias);
    for (const groupBy of GROUPS) {
      all[`stats ${name} by ${groupBy}`] = (s) => s.index.stats(filter, groupBy, NOW);
      all[`rawStatsRows ${name} by ${groupBy}`] = (s) => s.rows(rawStatsQuery(SQLITE, filter, { groupBy, now: NOW }));
      if (statsOnRollups) all[`rollupStatsRows ${name} by ${groupBy}`] = (s) => s.rows(rollupStatsQuery(SQLITE, filter, { groupBy, now: NOW }));
    }
    for (const order of ['asc', 'desc'] as const) {
      const options = { order, limit: 3, now: NOW };
      all[`rankByGpuHours ${name} ${order}`] = (s) => s.index.rankByGpuHours(filter, options);
      all[`rankingOf rows ${name} ${order}`] = (s) => s.index.rankingOf(filter, options, 'rows');
      if (rankingOnRollups) all[`rankingOf rollups ${name} ${order}`] = (s) => s.index.rankingOf(filter, options, 'rollups');
    }
    const windows = { 'since ever': { from: null, to: NOW }, 'a month': { from: NOW - 30 * DAY, to: NOW - 3 * HOUR_MS } };
    for (const [windowName, window] of Object.entries(windows)) {
      all[`usage ${name}, ${windowName}`] = (s) => s.index.usage(filter, window);
      all[`usage rows ${name}, ${windowName}`] = (s) => s.index.usageFrom(filter, window, 'rows');
    }
  }
  all['get a workload'] = (s) => s.index.get('w-02', NOW);
  all['get no workload'] = (s) => s.index.get('unknown', NOW);
  all['describe no ids'] = (s) => s.index.describe([], FILTERS['scope all'] ?? { scope: scope(null) });
  all['listUnfinished'] = (s) => listUnfinished(s.statements, 'local');
  all['rawGpuSecondsSql'] = () => rawGpuSecondsSql(SQLITE, '@now');
  return all;
}

/** What a case did, its texts replaced by their index in `texts` (added when new). */
async function record(run: (reads: Reads) => unknown, t: TempStore, texts: string[]): Promise<Event[]> {
  const statements = new CapturingStatements(t.db);
  const reads: Reads = {
    index: sqliteIndex(t.db, statements),
    statements,
    rows: (query) => statements.get(query.sql).all(query.params),
    row: (query) => statements.get(query.sql).get(query.params),
  };
  const index = (sql: string) => {
    const found = texts.indexOf(sql);
    if (found >= 0) return found;
    texts.push(sql);
    return texts.length - 1;
  };
  const events: Event[] = [];
  let returned: unknown;
  try {
    returned = await run(reads);
  } catch (error) {
    returned = { error: (error as Error).message };
  }
  for (const event of statements.events) {
    if (event[0] === 'prepare') events.push(['prepare', index(event[1])]);
    else events.push(['run', index(event[1]), event[2], event[3]]);
  }
  // A pure builder's output (SQL and parameters) is recorded as a run of method "returned".
  if (statements.events.length === 0) {
    if (typeof returned === 'object' && returned !== null && 'error' in returned) events.push(['error', String(returned.error)]);
    else events.push(['run', index(JSON.stringify(returned)), 'returned', []]);
  } else if (typeof returned === 'object' && returned !== null && 'error' in returned) {
    events.push(['error', String(returned.error)]);
  }
  return events;
}

/** One text, and one case, per line: a diff of the fixture then shows which ones changed. */
function serialize(snapshot: Snapshot): string {
  const texts = snapshot.texts.map((text) => `  ${JSON.stringify(text)}`).join(',\n');
  const cases = Object.entries(snapshot.cases).map(([name, events]) => `  ${JSON.stringify(name)}: ${JSON.stringify(events)}`).join(',\n');
  return `{\n"texts": [\n${texts}\n],\n"cases": {\n${cases}\n}\n}\n`;
}

sqliteOnly.describe('store SQL snapshot (SQLite)', () => {
  let t: TempStore;
  before(async () => {
    t = openTempStore();
    const { workloads, pods } = seedRows();
    await t.store.upsertWorkloads(workloads);
    await t.store.upsertPodIntervals(pods);
  });
  after(() => t.close());

  it('renders every read byte for byte as before the builders were shared', async () => {
    const texts: string[] = [];
    const recorded: Snapshot['cases'] = {};
    for (const [name, run] of Object.entries(cases())) recorded[name] = await record(run, t, texts);
    const current: Snapshot = { texts, cases: recorded };
    if (process.env.UPDATE_SQL_SNAPSHOT === '1') writeFileSync(FIXTURE, serialize(current));
    const expected = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Snapshot;
    // Texts by case, so that a failure names the read whose SQL moved.
    const resolve = (snapshot: Snapshot, name: string) =>
      (snapshot.cases[name] ?? []).map((event) => (event[0] === 'error' ? event : [event[0], snapshot.texts[event[1]], ...event.slice(2)]));
    expect(Object.keys(current.cases)).to.deep.equal(Object.keys(expected.cases));
    for (const name of Object.keys(expected.cases)) expect(resolve(current, name), name).to.deep.equal(resolve(expected, name));
  });
});
