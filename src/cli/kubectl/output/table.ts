// kubectl-style tables: upper-case headers, columns apart by three spaces, numbers right-aligned.
// A table fits `width` columns (100 by default): the columns marked `shrink` give up characters,
// ending in "…", widest first, down to their header's width; `-o wide` adds the `wide` columns and
// never shrinks.
export interface Column<Row> {
  header: string;
  /** What the cell shows, units included. */
  cell: (row: Row) => string;
  align?: 'left' | 'right';
  /** Shown only with -o wide. */
  wide?: boolean;
  /** May be cut to fit the width (names, ids). */
  shrink?: boolean;
}

const GAP = '   ';
export const TABLE_WIDTH = 100;

export function renderTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  options: { wide: boolean; width?: number },
): string {
  const shown = columns.filter((c) => options.wide || !c.wide);
  const cells = rows.map((row) => shown.map((c) => c.cell(row)));
  const widths = shown.map((c, i) => Math.max(c.header.length, ...cells.map((r) => length(r[i] ?? ''))));
  if (!options.wide) fit(widths, shown, options.width ?? TABLE_WIDTH);
  const line = (values: readonly string[]) =>
    values.map((v, i) => pad(cut(v, widths[i] ?? 0), widths[i] ?? 0, shown[i]?.align ?? 'left')).join(GAP).trimEnd();
  return [line(shown.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** Narrows the shrinkable columns, the widest first, until the line fits or none can give more. */
function fit<Row>(widths: number[], columns: readonly Column<Row>[], width: number): void {
  const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP.length * (widths.length - 1);
  while (total() > width) {
    let widest = -1;
    columns.forEach((c, i) => {
      const floor = Math.max(c.header.length, 4);
      if (c.shrink && (widths[i] ?? 0) > floor && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0))) widest = i;
    });
    if (widest < 0) return;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
}

// Cells are plain text; units such as °C are one code point each.
const length = (text: string) => [...text].length;

function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}

function pad(text: string, width: number, align: 'left' | 'right'): string {
  const space = ' '.repeat(Math.max(0, width - length(text)));
  return align === 'right' ? space + text : text + space;
}
