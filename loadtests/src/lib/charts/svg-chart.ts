/**
 * A small SVG line chart: axes with "nice" ticks, one polyline with point markers per series, and a
 * legend. Enough for the load tool's plots without a plotting dependency; the SVG is self-contained
 * (no CSS, no fonts beyond a generic family) so rsvg-convert and ImageMagick render it the same.
 *
 * Points with a non-finite coordinate are skipped (a figure that was not measured), and a series is
 * drawn as separate runs where it has such gaps. A `reference` series (a ceiling, a configured limit)
 * is drawn dashed and without markers, so it reads as a bound rather than as measured points.
 */

export interface ChartPoint {
  readonly x: number;
  readonly y: number;
}

export interface ChartSeries {
  readonly name: string;
  readonly points: readonly ChartPoint[];
  readonly reference?: boolean;
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  readonly width?: number;
  readonly height?: number;
  /** Start the y axis at zero (counts, rates); otherwise it fits the data. Default true. */
  readonly yFromZero?: boolean;
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const MARGIN = { left: 70, right: 20, top: 40, bottom: 50 };
const DASH = '6 4';

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/** Tick values covering [min, max] at a step of 1, 2 or 5 × 10^k, about `target` of them. */
export function niceTicks(min: number, max: number, target = 6): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    return niceTicks(min - pad, max + pad, target);
  }
  const raw = (max - min) / Math.max(1, target - 1);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude) as number;
  const first = Math.floor(min / step) * step;
  const ticks: number[] = [];
  for (let v = first; v < max + step * 0.5; v += step) ticks.push(Number(v.toPrecision(12)));
  if ((ticks[ticks.length - 1] as number) < max) ticks.push(Number((first + ticks.length * step).toPrecision(12)));
  return ticks;
}

/** A tick label: integers plainly, others with at most 3 significant decimals, large values as k / M. */
export function formatTick(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (abs >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

const fmt = (n: number): string => String(Math.round(n * 10) / 10);

export function renderLineChart(chart: LineChart): string {
  const width = chart.width ?? 720;
  const height = chart.height ?? 440;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const finite = chart.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xs = finite.map((p) => p.x);
  const ys = finite.map((p) => p.y);
  const xTicks = niceTicks(xs.length > 0 ? Math.min(...xs) : 0, xs.length > 0 ? Math.max(...xs) : 1);
  const yFromZero = chart.yFromZero ?? true;
  const yMin = ys.length > 0 ? Math.min(...ys) : 0;
  const yTicks = niceTicks(yFromZero ? Math.min(0, yMin) : yMin, ys.length > 0 ? Math.max(...ys) : 1);
  const x0 = xTicks[0] as number;
  const x1 = xTicks[xTicks.length - 1] as number;
  const y0 = yTicks[0] as number;
  const y1 = yTicks[yTicks.length - 1] as number;
  const px = (x: number): number => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW;
  const py = (y: number): number => MARGIN.top + plotH - ((y - y0) / (y1 - y0)) * plotH;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(chart.title)}</text>`,
  );
  // Grid and ticks.
  out.push('<g stroke="#e0e0e0" stroke-width="1">');
  for (const t of xTicks) out.push(`<line x1="${fmt(px(t))}" y1="${MARGIN.top}" x2="${fmt(px(t))}" y2="${MARGIN.top + plotH}"/>`);
  for (const t of yTicks) out.push(`<line x1="${MARGIN.left}" y1="${fmt(py(t))}" x2="${MARGIN.left + plotW}" y2="${fmt(py(t))}"/>`);
  out.push('</g>');
  out.push(
    `<g stroke="#333333" stroke-width="1"><line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}"/></g>`,
  );
  out.push('<g fill="#333333">');
  for (const t of xTicks) out.push(`<text x="${fmt(px(t))}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${formatTick(t)}</text>`);
  for (const t of yTicks) out.push(`<text x="${MARGIN.left - 6}" y="${fmt(py(t) + 4)}" text-anchor="end">${formatTick(t)}</text>`);
  out.push('</g>');
  out.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">${escapeXml(chart.yLabel)}</text>`,
  );
  // Series: a polyline per run of finite points, and a marker on each point.
  chart.series.forEach((series, i) => {
    const color = PALETTE[i % PALETTE.length] as string;
    out.push(`<g class="series" data-name="${escapeXml(series.name)}" stroke="${color}" fill="${color}">`);
    const dash = series.reference === true ? ` stroke-dasharray="${DASH}"` : '';
    let run: string[] = [];
    const flush = (): void => {
      if (run.length > 1) out.push(`<polyline fill="none" stroke-width="2"${dash} points="${run.join(' ')}"/>`);
      run = [];
    };
    for (const p of series.points) {
      if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) {
        flush();
        continue;
      }
      run.push(`${fmt(px(p.x))},${fmt(py(p.y))}`);
    }
    flush();
    for (const p of series.reference === true ? [] : series.points) {
      if (Number.isFinite(p.x) && Number.isFinite(p.y)) out.push(`<circle cx="${fmt(px(p.x))}" cy="${fmt(py(p.y))}" r="3"/>`);
    }
    out.push('</g>');
  });
  // Legend, top-left inside the plot area, on a translucent box so lines under it stay visible.
  if (chart.series.length > 0) {
    const longest = Math.max(...chart.series.map((s) => s.name.length));
    const boxW = 30 + longest * 7;
    out.push(
      `<g class="legend"><rect x="${MARGIN.left + 8}" y="${MARGIN.top + 6}" width="${boxW}" height="${chart.series.length * 18 + 6}" fill="#ffffff" fill-opacity="0.8" stroke="#cccccc"/>`,
    );
    chart.series.forEach((series, i) => {
      const color = PALETTE[i % PALETTE.length] as string;
      const y = MARGIN.top + 20 + i * 18;
      out.push(
        `<line x1="${MARGIN.left + 14}" y1="${y - 4}" x2="${MARGIN.left + 30}" y2="${y - 4}" stroke="${color}" stroke-width="2"${series.reference === true ? ` stroke-dasharray="${DASH}"` : ''}/>`,
        `<text x="${MARGIN.left + 36}" y="${y}">${escapeXml(series.name)}</text>`,
      );
    });
    out.push('</g>');
  }
  if (finite.length === 0) {
    out.push(`<text x="${MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH / 2}" text-anchor="middle" fill="#999999">no data</text>`);
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
