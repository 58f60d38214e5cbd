// What an endpoint answers for `Accept: text/csv`: a file name and a header, then records, which may
// be read page by page while the response streams.
import type { CsvValue } from './csv-text.js';

export interface CsvTable {
  /** The file name offered in Content-Disposition, `.csv` included. */
  filename: string;
  columns: readonly string[];
  /** Records, each with a value per column, in batches (a page of the index at a time). */
  records: AsyncIterable<readonly (readonly CsvValue[])[]> | Iterable<readonly (readonly CsvValue[])[]>;
  /** Response headers besides the content type and disposition. */
  headers?: Record<string, string>;
}

/** Rows of one shape as records: each row's values in `columns` order. */
export function recordsOf(columns: readonly string[], rows: readonly Record<string, unknown>[]): CsvValue[][] {
  return rows.map((row) => columns.map((column) => row[column] as CsvValue));
}

/** `<what>-<organization>-<UTC time, to the second>.csv`, from characters safe in any file system. */
export function csvFilename(what: string, organizationId: string, now: number): string {
  const time = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z').replaceAll(':', '').replaceAll('-', '');
  const org = organizationId.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${what}-${org}-${time}.csv`;
}
