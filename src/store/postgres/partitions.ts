// Monthly partitions of workloads and workload_pods: workloads_pYYYYMM and workload_pods_pYYYYMM, each
// the UTC month [start, next start) of submitted_at in epoch ms. There is no DEFAULT partition: every
// later ATTACH would have to scan it under lock, and it forbids DETACH CONCURRENTLY. So a row whose
// month has no partition fails to insert ("no partition of relation … found for row"): writers call
// ensurePartitions with their batch's submitted_at values first.
//
// A partition is created as a plain table (LIKE the parent) and then attached. ATTACH PARTITION takes
// SHARE UPDATE EXCLUSIVE on the parent (PostgreSQL 12 and later: the ALTER TABLE reference and the
// "Partition Maintenance" section of the partitioning chapter), which does not conflict with the ROW
// EXCLUSIVE of writers nor the ACCESS SHARE of readers, whereas CREATE TABLE … PARTITION OF takes
// ACCESS EXCLUSIVE on the parent and queues every reader behind it. The ACCESS EXCLUSIVE lock that
// ATTACH takes on the new table, and its scan to validate the bounds, cost nothing on an empty table.
import { SCHEMA_LOCK_SQL } from './locks.js';
import { inTransaction, type Queryable } from './transaction.js';

const PARENTS = ['workloads', 'workload_pods'] as const;
type Parent = (typeof PARENTS)[number];

export interface MonthPartition {
  /** `YYYYMM`, the partitions' name suffix after `_p`. */
  month: string;
  /** First epoch ms of the month (UTC), inclusive. */
  start: number;
  /** First epoch ms of the next month, exclusive. */
  end: number;
  /** Whether each parent has this month attached; both are created and dropped together. */
  workloads: boolean;
  pods: boolean;
}

/** The UTC month that `time` (epoch ms) falls in, as its first millisecond. */
export function monthStart(time: number): number {
  const date = new Date(time);
  if (!Number.isFinite(time) || Number.isNaN(date.getTime())) {
    throw new Error(`Cannot find the month of time ${time}: it is not a valid epoch ms`);
  }
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The first millisecond of the month after the one `time` falls in. */
export function nextMonthStart(time: number): number {
  const date = new Date(monthStart(time));
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** `YYYYMM` of the UTC month `time` falls in. */
export function monthSuffix(time: number): string {
  const date = new Date(monthStart(time));
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new Error(`Cannot name a partition for time ${time}: its year ${year} is outside 0000-9999`);
  return `${String(year).padStart(4, '0')}${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

const partitionName = (parent: Parent, suffix: string) => `${parent}_p${suffix}`;
const NAME = /^(workloads|workload_pods)_p(\d{4})(\d{2})$/;

/** The months that have a partition of workloads or of workload_pods, oldest first. */
export async function listPartitions(client: Queryable): Promise<MonthPartition[]> {
  const { rows } = await client.query<{ parent: string; child: string }>(
    `SELECT parent.relname AS parent, child.relname AS child
       FROM pg_inherits i
       JOIN pg_class parent ON parent.oid = i.inhparent
       JOIN pg_class child ON child.oid = i.inhrelid
      WHERE i.inhparent IN ('workloads'::regclass, 'workload_pods'::regclass)`,
  );
  const months = new Map<string, MonthPartition>();
  for (const { parent, child } of rows) {
    const match = NAME.exec(child);
    if (match === null || match[1] !== parent) continue; // not one of ours: left alone
    const [, , year, month] = match;
    const suffix = `${year}${month}`;
    const start = Date.UTC(Number(year), Number(month) - 1, 1);
    const entry = months.get(suffix) ?? { month: suffix, start, end: nextMonthStart(start), workloads: false, pods: false };
    if (parent === 'workloads') entry.workloads = true;
    else entry.pods = true;
    months.set(suffix, entry);
  }
  return [...months.values()].sort((a, b) => a.start - b.start);
}

export interface EnsureOptions {
  /**
   * Month starts known to have both partitions, kept by the caller across calls (a writer's session):
   * months in it cost no round trip, and the months found or created are added to it.
   */
  known?: Set<number>;
}

/**
 * Makes sure the months of `times` (epoch ms, any time within each month: a batch's submitted_at
 * values will do) have their partitions of workloads and workload_pods. Idempotent, and safe when
 * replicas race: creation runs under the schema lock and re-reads what exists once it holds it.
 * Runs its own transaction when something is missing, so `client` must not be in one. Returns the
 * month starts it created.
 */
export async function ensurePartitions(client: Queryable, times: readonly number[], options: EnsureOptions = {}): Promise<number[]> {
  const known = options.known ?? new Set<number>();
  const wanted = [...new Set(times.map(monthStart))].filter((start) => !known.has(start)).sort((a, b) => a - b);
  if (wanted.length === 0) return [];
  const complete = async (): Promise<Set<number>> =>
    new Set((await listPartitions(client)).filter((p) => p.workloads && p.pods).map((p) => p.start));
  let existing = await complete();
  let missing = wanted.filter((start) => !existing.has(start));
  const created: number[] = [];
  if (missing.length > 0) {
    await inTransaction(client, async () => {
      await client.query(SCHEMA_LOCK_SQL);
      // Another replica may have created them while this one waited for the lock.
      existing = await complete();
      missing = missing.filter((start) => !existing.has(start));
      for (const start of missing) {
        await createMonth(client, start);
        created.push(start);
      }
    });
  }
  for (const start of wanted) known.add(start);
  return created;
}

/** Creates and attaches what is missing of one month; the caller holds the schema lock. */
async function createMonth(client: Queryable, start: number): Promise<void> {
  const suffix = monthSuffix(start);
  const end = nextMonthStart(start);
  for (const parent of PARENTS) {
    const name = partitionName(parent, suffix);
    const { rows } = await client.query<{ exists: boolean; attached: boolean }>(
      `SELECT to_regclass($1) IS NOT NULL AS exists,
              EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass($1) AND inhparent = $2::regclass) AS attached`,
      [name, parent],
    );
    const [state] = rows;
    if (state?.attached === true) continue;
    // A table left unattached (by hand: ensure and drop never leave one) is attached as it is;
    // ATTACH refuses it if its columns or rows do not fit.
    if (state?.exists !== true) {
      await client.query(`CREATE TABLE "${name}" (LIKE "${parent}" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    }
    await client.query(`ALTER TABLE "${parent}" ATTACH PARTITION "${name}" FOR VALUES FROM (${start}) TO (${end})`);
  }
}
