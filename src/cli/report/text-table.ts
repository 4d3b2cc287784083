/** Plain-text tables and counts for the command line's reports: columns padded to their widest cell. */

/** A whole number with thousands separators: `12,345`. */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Pads the cells of each column to the column's widest cell; the columns in `right` line up on the right. */
export function table(rows: string[][], right: ReadonlySet<number>): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, Array.from(cell).length);
  }
  return rows.map((row) =>
    row
      .map((cell, index) => {
        const pad = ' '.repeat((widths[index] ?? 0) - Array.from(cell).length);
        return right.has(index) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}
