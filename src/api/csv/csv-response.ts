// Sends a CsvTable: RFC 4180 text (with its header row, RFC 7111's `header=present`) streamed as its
// records are read, offered as a download under the table's file name.
import { Readable } from 'node:stream';
import type { ApiContext } from '../context.js';
import type { CsvTable } from './csv-table.js';
import { csvRecord } from './csv-text.js';

// Whether the caller prefers CSV to JSON, q-values weighed: no Accept header, or any type, is JSON.
export function wantsCsv(ctx: ApiContext): boolean {
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

export function sendCsv(ctx: ApiContext, table: CsvTable): void {
  ctx.status = 200;
  ctx.attachment(table.filename);
  ctx.type = 'text/csv; charset=utf-8; header=present';
  for (const [name, value] of Object.entries(table.headers ?? {})) ctx.set(name, value);
  ctx.body = Readable.from(lines(table, (error) => ctx.state.log.error({ err: error }, 'CSV response cut short')));
}

// Once the header is sent, a failing read can only cut the response short: Koa then destroys the
// response, so the client sees an incomplete body rather than a file that looks whole. The error
// envelope's middleware has returned by then, so the failure is logged here.
async function* lines(table: CsvTable, logFailure: (error: unknown) => void): AsyncGenerator<string> {
  try {
    yield csvRecord(table.columns);
    for await (const batch of table.records) if (batch.length > 0) yield batch.map(csvRecord).join('');
  } catch (error) {
    logFailure(error);
    throw error;
  }
}
