// CSV as RFC 4180 writes it: CRLF after every record, a field quoted when it holds a comma, a quote,
// CR or LF, quotes inside doubled. Numbers go as JavaScript prints them (no grouping, no units), null
// as an empty field.
//
// Text a spreadsheet would run as a formula (=, +, -, @, or a tab or CR first, as OWASP's CSV
// injection guidance has it; a NUL too, which ASVS 1.2.10 adds) gets a leading apostrophe: names and
// labels come from whoever can create a Job in the cluster, and a finance user opening the file must
// not run what they typed. Every text column goes through here; numbers never do, so -12.5 stays a number.

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r\0]/;

function field(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated. */
export function csvRecord(values: readonly CsvValue[]): string {
  return `${values.map(field).join(',')}\r\n`;
}
