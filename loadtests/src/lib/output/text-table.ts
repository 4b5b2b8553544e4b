/**
 * A plain-text table for the terminal: columns padded to their widest cell; a column whose cells are all
 * numbers (or "-" for none) is right-aligned, header included, so digits line up.
 */

const NUMERIC = /^[-+]?[\d.,]+[x%]?$|^-$/;

export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const right = headers.map((_, c) => {
    const cells = rows.map((r) => r[c] ?? '').filter((cell) => cell !== '');
    return cells.length > 0 && cells.every((cell) => NUMERIC.test(cell));
  });
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, c) => (right[c] ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
