// -o table|wide|json|yaml|csv. json and yaml print the API's data as it came; csv prints one record
// per table row with the API's field names and unformatted values; table and wide, the table.
import { stringify } from 'yaml';
import { csvRecord, type CsvValue } from '../../../api/csv/csv-text.js';
import { usageError } from '../cli-error.js';
import { renderTable, type Column } from './table.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function outputFormat(value: string | undefined): OutputFormat {
  const format = value ?? 'table';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw usageError(`--output must be one of ${OUTPUT_FORMATS.join(', ')}, not "${format}"`);
  }
  return format as OutputFormat;
}

/** What a command shows: the API's data, and the rows of its table. */
export interface View<Row> {
  data: unknown;
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  /** The csv fields: a name (the API's) and the raw value of a row. */
  fields: readonly (readonly [string, (row: Row) => CsvValue])[];
  /** A file of the service's own (chargeback --csv), printed as it came instead of any format. */
  text?: string;
}

export function render<Row>(view: View<Row>, format: OutputFormat, width?: number): string {
  if (view.text !== undefined) return view.text;
  switch (format) {
    case 'json':
      return `${JSON.stringify(view.data, null, 2)}\n`;
    case 'yaml':
      return stringify(view.data);
    case 'csv': {
      const record = (row: Row): string => csvRecord(view.fields.map(([, value]) => value(row)));
      return csvRecord(view.fields.map(([name]) => name)) + view.rows.map(record).join('');
    }
    default:
      return renderTable(view.rows, view.columns, { wide: format === 'wide', width });
  }
}
