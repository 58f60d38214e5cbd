// The csv fields of a row type: the API's own field names, their values as the API gave them.
import type { CsvValue } from '../../../api/csv/csv-text.js';

export function fieldsOf<Row>(names: readonly (keyof Row & string)[]): [string, (row: Row) => CsvValue][] {
  return names.map((name) => [name, (row: Row) => row[name] as CsvValue]);
}
