// GET /v1/workloads as CSV (docs/api.md "CSV"): every matching workload in list order, read a page
// of the index at a time while the response streams; or, with an explicit limit, one page of them as
// JSON would give it. The first page is read before anything is sent, so a bad filter or token, or a
// result over the cap, is an ordinary error response.
import { validationError } from '../domain/errors.js';
import type { Scope } from '../access/principal.js';
import type { WorkloadRecord } from '../domain/workload.js';
import { listWorkloads, type ListWorkloadsRequest } from './list-workloads.js';
import type { WorkloadIndex } from './ports.js';

/** The most rows one CSV answer holds: about 15 MB, a few seconds of reads at 1M rows. */
export const CSV_MAX_ROWS = 100_000;
/** Rows read per page of the index while an export streams. */
const EXPORT_PAGE_ROWS = 1_000;

export interface WorkloadExport {
  /** Every match of the filters, as total_count counts them. */
  totalCount: number;
  /** The position after the exported rows when a limit stopped before the last match, as next_token. */
  nextToken: string | null;
  /** The rows, page by page; the first is already read. */
  pages: AsyncIterable<readonly WorkloadRecord[]>;
}

/** `limit` undefined: every match, which must be at most `maxRows`; else one page of that many. */
export async function exportWorkloads(
  index: WorkloadIndex,
  scope: Scope,
  request: Omit<ListWorkloadsRequest, 'limit'> & { limit: number | undefined },
  { maxRows = CSV_MAX_ROWS }: { maxRows?: number } = {},
): Promise<WorkloadExport> {
  if (request.limit !== undefined) {
    const page = await listWorkloads(index, scope, { ...request, limit: request.limit });
    return { totalCount: page.totalCount, nextToken: page.nextToken, pages: once(page.workloads) };
  }
  const first = await listWorkloads(index, scope, { ...request, limit: EXPORT_PAGE_ROWS });
  if (first.totalCount > maxRows) {
    throw validationError([{
      location: 'header',
      field: 'Accept',
      message: `text/csv holds at most ${maxRows.toLocaleString('en-US')} ` +
        `workloads and ${first.totalCount.toLocaleString('en-US')} match: ` +
        'narrow start_date and end_date or the other filters, or page with limit and X-Next-Token',
    }]);
  }
  async function* pages(): AsyncGenerator<readonly WorkloadRecord[]> {
    let page = first;
    yield page.workloads;
    while (page.nextToken !== null) {
      page = await listWorkloads(index, scope, { ...request, nextToken: page.nextToken, limit: EXPORT_PAGE_ROWS });
      yield page.workloads;
    }
  }
  return { totalCount: first.totalCount, nextToken: null, pages: pages() };
}

async function* once<T>(value: T): AsyncGenerator<T> {
  yield value;
}
