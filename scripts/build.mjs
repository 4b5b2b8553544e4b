#!/usr/bin/env node
// `npm run build`: the production bundle. esbuild bundles each command and each worker-thread entry
// into dist/ (ESM, Node 20), so nothing runs through tsx at run time and no keepNames wrappers are
// paid per call. onnxruntime-node stays external (native binding and its libraries); so does tsx,
// which only a TypeScript model file needs. Files the code reads beside itself at run time (Lua
// scripts, example model modules) are copied next to the bundles, where import.meta.url points.
//
//   node scripts/build.mjs [--outdir DIR]   (default dist/; DIR relative to the repository root)
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { ENTRIES, RUNTIME_FILES } from './bundle-entries/entries.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
const outdir = resolve(root, values.outdir);

// CommonJS dependencies call require() and read __dirname; an ESM bundle has neither unless given them.
const BANNER = [
  "import { createRequire as __tesseraRequire } from 'node:module';",
  "import { fileURLToPath as __tesseraPath } from 'node:url';",
  "import { dirname as __tesseraDir } from 'node:path';",
  'const require = __tesseraRequire(import.meta.url);',
  'const __filename = __tesseraPath(import.meta.url);',
  'const __dirname = __tesseraDir(__filename);',
].join('\n');

// A fresh bundle, but dist/edge (npm run build:edge, the Workers bundle) is another build's and stays.
await mkdir(outdir, { recursive: true });
for (const entry of await readdir(outdir)) if (entry !== 'edge') await rm(join(outdir, entry), { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, source]) => [name, join(root, source)])),
  outdir,
  bundle: true,
  splitting: true,
  // Chunks sit beside the entries: shared code that computes sibling paths from import.meta.url
  // (worker entries, Lua scripts) then finds them whichever chunk it lands in.
  chunkNames: 'chunk-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  keepNames: false,
  sourcemap: 'linked',
  legalComments: 'linked',
  banner: { js: BANNER },
  // Native or optional pieces resolved at run time from node_modules (msgpackr falls back to JS without its extractor).
  external: ['onnxruntime-node', 'tsx', 'tsx/*', 'msgpackr-extract', '@ricky0123/vad-web'],
  logLevel: 'warning',
  metafile: true,
});
for (const { from, to } of RUNTIME_FILES) await cp(join(root, from), join(outdir, to), { recursive: true });
await writeFile(join(outdir, 'package.json'), `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`);
// The project's own inputs, so bin/launch.js can tell a bundle older than the sources it was built from.
const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules/'));
await writeFile(join(outdir, 'build-info.json'), `${JSON.stringify({ builtAtMs: Date.now(), sources }, null, 1)}\n`);

const files = (await readdir(outdir)).filter((f) => f.endsWith('.js'));
process.stdout.write(`bundled ${Object.keys(ENTRIES).length} entries into ${outdir} (${files.length} .js files)\n`);
