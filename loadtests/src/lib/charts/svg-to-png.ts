/**
 * PNG copies of the SVG plots, through whichever converter the machine has: rsvg-convert (Debian
 * package librsvg2-bin) first, as it renders SVG faithfully and fast, else ImageMagick's `convert`.
 * Neither is an npm dependency; without one, PNGs are skipped and the caller says so.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PngConverter {
  readonly name: 'rsvg-convert' | 'convert';
  readonly path: string;
}

function onPath(command: string, pathEnv: string): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export function findPngConverter(pathEnv = process.env.PATH ?? ''): PngConverter | undefined {
  for (const name of ['rsvg-convert', 'convert'] as const) {
    const path = onPath(name, pathEnv);
    if (path !== undefined) return { name, path };
  }
  return undefined;
}

export async function svgToPng(converter: PngConverter, svgPath: string, pngPath: string): Promise<void> {
  const args = converter.name === 'rsvg-convert' ? ['--format', 'png', '--output', pngPath, svgPath] : [svgPath, pngPath];
  await run(converter.path, args, { timeout: 30_000 });
}
