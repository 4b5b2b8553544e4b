import { describe, expect, it } from 'vitest';
import { escapeXml, formatTick, niceTicks, renderLineChart } from './svg-chart.js';

/** Checks tags nest and close, attributes are quoted, and text has no raw '<' or stray '&'. */
function assertWellFormed(xml: string): void {
  const stack: string[] = [];
  const token = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = token.exec(xml)) !== null) {
    consumed = token.lastIndex;
    const [, closing, name, , selfClosing, text] = match;
    if (text !== undefined) {
      expect(text).not.toMatch(/&(?!(lt|gt|amp|quot|apos);)/);
      continue;
    }
    if (closing) expect(stack.pop()).toBe(name);
    else if (!selfClosing) stack.push(name as string);
  }
  expect(consumed).toBe(xml.length);
  expect(stack).toEqual([]);
}

describe('renderLineChart', () => {
  const svg = renderLineChart({
    title: 'p99 <latency> & throughput',
    xLabel: 'concurrency',
    yLabel: 'ms',
    series: [
      { name: 'grpc', points: [{ x: 1, y: 2 }, { x: 8, y: 5 }, { x: 64, y: Number.NaN }, { x: 128, y: 40 }] },
      { name: "http 'binary'", points: [{ x: 1, y: 3 }, { x: 8, y: 7 }] },
    ],
  });

  it('writes well-formed SVG with escaped text', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    assertWellFormed(svg);
    expect(svg).toContain('p99 &lt;latency&gt; &amp; throughput');
  });

  it('draws each series with its points and a legend entry, skipping unmeasured points', () => {
    expect(svg).toContain('data-name="grpc"');
    expect(svg).toContain('data-name="http &apos;binary&apos;"');
    expect(svg.match(/<circle /g)).toHaveLength(5);
    // grpc is split by its NaN: one two-point run; the lone 128 point gets a marker but no line.
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('>http &apos;binary&apos;</text>');
  });

  it('renders an empty chart without failing', () => {
    const empty = renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [] });
    assertWellFormed(empty);
    expect(empty).toContain('no data');
  });
});

describe('ticks', () => {
  it('covers the range with 1-2-5 steps', () => {
    expect(niceTicks(0, 10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(1, 128)).toEqual([0, 50, 100, 150]);
    expect(niceTicks(5, 5).length).toBeGreaterThan(1);
  });

  it('formats labels compactly', () => {
    expect(formatTick(0.30000000000000004)).toBe('0.3');
    expect(formatTick(25_000)).toBe('25k');
    expect(formatTick(2_500_000)).toBe('2.5M');
    expect(escapeXml(`a<b>&"'`)).toBe('a&lt;b&gt;&amp;&quot;&apos;');
  });
});
