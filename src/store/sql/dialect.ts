// What differs between SQLite's and PostgreSQL's SQL in the read queries: one object per engine, handed to
// every query builder of the store (sql/, reads/, statistics/, rankings/, usage/, rows/). The SQLite dialect
// renders exactly the texts the SQLite store has always run (test/store/reads/sql-snapshot.test.ts), so its tuned
// plans stay as they are; the PostgreSQL one renders the same queries for the partitioned schema
// (src/store/postgres/migrations/schema.ts).
//
// Numbers: both engines compute in 64-bit integers and doubles, never in PostgreSQL's `numeric`,
// whose exact decimals would round differently from SQLite's doubles (and which our PostgreSQL
// connections refuse to read). In PostgreSQL a literal with a decimal point is numeric, and SUM of a
// bigint is numeric: float literals and sums go through float() and total().

import type { WorkloadFilter } from '../../query/ports.js';

/** A bound value: a list travels as one parameter (inList, eachOf) so that the SQL text does not depend on its length. */
export type SqlValue = string | number | null | readonly string[] | readonly number[];
export type SqlParams = Record<string, SqlValue>;

export interface SqlDialect {
  readonly engine: 'sqlite' | 'postgres';
  /**
   * The engine runs in the process: a statement costs microseconds and no round trip, so a read
   * seeks key by key with short statements (SQLite). Otherwise one statement seeks every key under a
   * join, and a page carries its count (PostgreSQL, a round trip away).
   */
  readonly inProcess: boolean;
  /**
   * The connection has the sorted-waits aggregate (SQLite's application-defined functions,
   * src/store/sqlite/sorted-waits.ts): queue percentiles read each group's waits as one sorted value.
   * Otherwise they rank the waits with window functions.
   */
  readonly sortedWaits: boolean;
  /**
   * Whether a list page of `filter` (with these teams sought one by one, or null) leaves the planner
   * one index to take, so that a plan made once is as good as one made for its values.
   */
  reusableListPlan(filter: WorkloadFilter, soughtTeams: readonly string[] | null): boolean;
  /** The largest of the values: SQLite's scalar MAX, PostgreSQL's GREATEST. */
  greatest(...values: string[]): string;
  /** The smallest of the values: SQLite's scalar MIN, PostgreSQL's LEAST. */
  least(...values: string[]): string;
  /** Sum as a double, 0.0 over no rows: SQLite's TOTAL (exact integer sums stay exact below 2^53). */
  total(value: string): string;
  /** Sum of integers as an integer, 0 over no rows. */
  sumInt(value: string): string;
  /** A condition as 0 or 1; parenthesize it where an operator follows or precedes. */
  asInt(condition: string): string;
  /** `value` is one of the list parameter `param` (its value built by listValue). */
  inList(value: string, param: string): string;
  /** A table of the list parameter `param`, one row per element, its column named `value`. */
  eachOf(param: string, alias: string): string;
  /** The bound value of a list parameter. */
  listValue(values: readonly string[] | readonly number[]): SqlValue;
  /** The index hint after a table and its alias, with its leading space; nothing where the engine has none. */
  indexedBy(index: string): string;
  /** A join that keeps the written order of its tables (SQLite's CROSS JOIN); the planner's choice elsewhere. */
  readonly orderedJoin: string;
  /** The alias a subquery in FROM needs (PostgreSQL), with its leading space; nothing in SQLite. */
  subqueryAlias(alias: string): string;
  /** Whether two values, NULL included, differ. */
  isDistinct(left: string, right: string): string;
  /** A double literal written with a decimal point or exponent, e.g. `1000.0`. */
  float(literal: string): string;
  /** The false condition. */
  readonly falseCondition: string;
  /** A value as a 64-bit integer. */
  int(value: string): string;
  /** A workloads row's own key for a second lookup (SQLite's rowid; PostgreSQL's rows have no stable one). */
  readonly rowId: string;
  /** The GROUP BY that makes every column of workloads `alias` single-valued per workload. */
  workloadGroup(alias: string): string;
  /**
   * The partition key among the columns of a pod (prefix `alias.` if given), with its leading comma:
   * PostgreSQL's pods carry their workload's submitted_at; nothing in SQLite.
   */
  partitionKey(alias?: string): string;
  /** ` AND` the two rows are in the same partition; nothing in SQLite. */
  samePartition(left: string, right: string): string;
  /**
   * ` AND` `column` is at most `value`: the bound that a row-value cursor `(column, …) < (value, …)`
   * implies, spelled out for PostgreSQL, which prunes partitions by simple comparisons only (not by
   * a row value); nothing in SQLite, which takes a single upper bound for an index range.
   */
  cursorBound(column: string, value: string): string;
}

export const SQLITE: SqlDialect = {
  engine: 'sqlite',
  inProcess: true,
  sortedWaits: true,
  // Every statement is prepared once per connection anyway (StatementCache).
  reusableListPlan: () => true,
  greatest: (...values) => `MAX(${values.join(', ')})`,
  least: (...values) => `MIN(${values.join(', ')})`,
  total: (value) => `TOTAL(${value})`,
  sumInt: (value) => `COALESCE(SUM(${value}), 0)`,
  // A comparison already is 0 or 1.
  asInt: (condition) => condition,
  // One bound JSON array instead of N placeholders keeps the SQL text independent of the list length.
  inList: (value, param) => `${value} IN (SELECT value FROM json_each(@${param}))`,
  eachOf: (param, alias) => `json_each(@${param}) AS ${alias}`,
  listValue: (values) => JSON.stringify(values),
  indexedBy: (index) => ` INDEXED BY ${index}`,
  orderedJoin: 'CROSS JOIN',
  subqueryAlias: () => '',
  isDistinct: (left, right) => `${left} IS NOT ${right}`,
  float: (literal) => literal,
  // A constant false term is decided once, before any scan.
  falseCondition: '0',
  int: (value) => `CAST(${value} AS INTEGER)`,
  rowId: 'rowid',
  // SQLite takes the other columns from the group's one row.
  workloadGroup: (alias) => `${alias}.workload_id`,
  partitionKey: () => '',
  samePartition: () => '',
  cursorBound: () => '',
};

export const POSTGRES: SqlDialect = {
  engine: 'postgres',
  inProcess: false,
  sortedWaits: false,
  reusableListPlan: hasOneIndex,
  greatest: (...values) => `GREATEST(${values.join(', ')})`,
  least: (...values) => `LEAST(${values.join(', ')})`,
  // SUM of an integer is numeric, of a double a double; either way the result is read as a double.
  total: (value) => `COALESCE(SUM(${value}), 0)::float8`,
  sumInt: (value) => `COALESCE(SUM(${value}), 0)::bigint`,
  asInt: (condition) => `(${condition})::int`,
  inList: (value, param) => `${value} = ANY(@${param})`,
  eachOf: (param, alias) => `unnest(@${param}) AS ${alias}(value)`,
  listValue: (values) => values,
  indexedBy: () => '',
  orderedJoin: 'JOIN',
  subqueryAlias: (alias) => ` AS ${alias}`,
  isDistinct: (left, right) => `${left} IS DISTINCT FROM ${right}`,
  float: (literal) => `${literal}::float8`,
  falseCondition: 'false',
  int: (value) => `(${value})::bigint`,
  // A row's key is (workload_id, submitted_at), and a workload_id is in one month only (its
  // submitted_at never changes), so the id alone finds it.
  rowId: 'workload_id',
  // The primary key: PostgreSQL then knows every other column is single-valued per group.
  workloadGroup: (alias) => `${alias}.workload_id, ${alias}.submitted_at`,
  // A pod lives in its workload's month: with the key, a join from pods probes one month's partition
  // of workloads (pruned at run time), not every month's.
  partitionKey: (alias) => `, ${alias === undefined ? '' : `${alias}.`}submitted_at`,
  samePartition: (left, right) => ` AND ${left}.submitted_at = ${right}.submitted_at`,
  cursorBound: (column, value) => ` AND ${column} <= ${value}`,
};

/**
 * Whether the list of `filter` leaves PostgreSQL's planner one index to take, so that a generic plan is
 * the custom one: no dates, and at most one of a team (an initiative, or a TEAM_LEAD's teams, each
 * sought on its own index), a status, a submitter and is_managed, or a team and a status together.
 * EXPLAIN ANALYZE on the 1M-row bench index (17 monthly partitions): a list page without dates plans
 * in 2.3-5 ms and runs in 0.15-0.4 ms on either plan; where two indexes fit, the values decide: before
 * the team-and-status index (postgres migration v4), a team's pending workloads where the team had
 * none ran 297 ms on the generic plan, 20 ms on a custom one.
 */
function hasOneIndex(filter: WorkloadFilter, soughtTeams: readonly string[] | null): boolean {
  if (filter.submittedFrom !== undefined || filter.submittedBefore !== undefined) return false;
  // A scope not sought team by team is an `= ANY(list)` term beside the rest.
  if (filter.scope.initiatives !== null && soughtTeams === null) return false;
  const team = soughtTeams !== null || filter.initiativeId !== undefined;
  const others = [filter.submittedBy !== undefined, filter.isManaged !== undefined];
  // A team and a status have an index of their own (postgres migration v4).
  if (team && filter.status !== undefined) return !others.some((named) => named);
  return [team, filter.status !== undefined, ...others].filter((named) => named).length <= 1;
}
