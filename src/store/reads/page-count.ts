// A list page and its count as one statement, for an engine a round trip away (PostgreSQL): the
// page's rows each carry the count, where a transaction took four round trips (BEGIN, page, count,
// COMMIT). The row count a page reads is written into its text.
import type { SqlQuery } from '../sql/executor.js';

// A `LIMIT $n` would leave plan_cache_mode = auto estimating a tenth of the rows for the generic plan,
// so it would plan every page afresh (2.3-5 ms). A few fixed counts (the API's limit is 1-100) keep
// the statements a connection holds to a few per filter shape.
const ROWS_TO_READ = [21, 51, 101];

/** The rows to read for `wanted`: the next fixed count at or above it. */
export function rowsToRead(wanted: number): number {
  return ROWS_TO_READ.find((rows) => rows >= wanted) ?? wanted;
}

/** The list's order (LIST_ORDER of list-queries.ts) over the page's columns. */
const PAGE_ORDER = 'ORDER BY page.submitted_at DESC, page.workload_id DESC';

/**
 * A page and its count as one statement, each row carrying the count: one round trip and one
 * snapshot. The count is an uncorrelated subquery, run once. The two builders name their parameters
 * after the same filter; a name used twice must hold the same value.
 */
export function withCount(page: SqlQuery, count: SqlQuery, rows: number): SqlQuery {
  for (const [name, value] of Object.entries(count.params)) {
    if (name in page.params && JSON.stringify(page.params[name]) !== JSON.stringify(value)) {
      throw new Error(`The page and its count bind @${name} to different values`);
    }
  }
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`Not a row count: ${rows}`);
  const limited = page.sql.replaceAll('@limit', String(rows));
  return {
    sql: `SELECT page.*, (${count.sql}) AS list_total_count FROM (${limited}) AS page ${PAGE_ORDER}`,
    params: { ...page.params, ...count.params },
  };
}
