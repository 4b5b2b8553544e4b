#!/usr/bin/env node
// Generates TypeScript from shared/proto/*.proto into shared/src/gen/ with buf and the locally
// installed protoc-gen-es (configuration: buf.gen.yaml at the repository root). Works offline.
//
//   node scripts/gen-proto.js           regenerate shared/src/gen/
//   node scripts/gen-proto.js --check   generate into a temp dir and fail (exit 1) listing every file
//                                       of shared/src/gen/ that differs, is missing or is stale
//
// Both modes generate into a temp dir first, so a failed buf run never leaves a half-written gen dir.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const genDirRel = join('shared', 'src', 'gen');
const genDir = join(repoRoot, genDirRel);
// Only files the plugin writes are ours to compare or delete; anything else in gen/ is left alone.
const isGenerated = (name) => name.endsWith('_pb.ts');

function bufBinary() {
  const bin = join(repoRoot, 'node_modules', '.bin', process.platform === 'win32' ? 'buf.cmd' : 'buf');
  if (!existsSync(bin)) {
    console.error(`gen-proto: ${relative(repoRoot, bin)} not found; run npm install first`);
    process.exit(2);
  }
  return bin;
}

/** Runs `buf generate` with its output rooted at `outRoot`; returns the directory holding the new files. */
function generateInto(outRoot) {
  const result = spawnSync(bufBinary(), ['generate', '--template', 'buf.gen.yaml', '--output', outRoot], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`buf generate failed with exit code ${result.status}`);
  }
  return join(outRoot, genDirRel);
}

function listGenerated(dir) {
  return existsSync(dir) ? readdirSync(dir).filter(isGenerated).sort() : [];
}

function check(freshDir) {
  const fresh = listGenerated(freshDir);
  const current = new Set(listGenerated(genDir));
  const problems = [];
  for (const name of fresh) {
    const path = join(genDirRel, name);
    if (!current.has(name)) problems.push(`missing: ${path}`);
    else if (!readFileSync(join(freshDir, name)).equals(readFileSync(join(genDir, name)))) {
      problems.push(`differs: ${path}`);
    }
    current.delete(name);
  }
  for (const name of current) problems.push(`stale (no .proto generates it): ${join(genDirRel, name)}`);
  if (problems.length > 0) {
    console.error('gen-proto --check: generated code is out of date with shared/proto; run `npm run gen`.');
    for (const line of problems) console.error(`  ${line}`);
    return 1;
  }
  console.log(`gen-proto --check: ${fresh.length} generated files are up to date`);
  return 0;
}

function write(freshDir) {
  mkdirSync(genDir, { recursive: true });
  const fresh = listGenerated(freshDir);
  for (const name of listGenerated(genDir)) {
    if (!fresh.includes(name)) rmSync(join(genDir, name));
  }
  for (const name of fresh) copyFileSync(join(freshDir, name), join(genDir, name));
  console.log(`gen-proto: wrote ${fresh.map((name) => join(genDirRel, name)).join(', ')}`);
  return 0;
}

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== '--check');
if (unknown.length > 0) {
  console.error(`gen-proto: unknown argument(s) ${unknown.join(' ')}; usage: gen-proto.js [--check]`);
  process.exit(2);
}

const tempRoot = mkdtempSync(join(tmpdir(), 'tessera-gen-proto-'));
let exitCode;
try {
  const freshDir = generateInto(tempRoot);
  exitCode = args.includes('--check') ? check(freshDir) : write(freshDir);
} catch (error) {
  console.error(`gen-proto: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = 2;
} finally {
  rmSync(tempRoot, { recursive: true, force: true });
}
process.exit(exitCode);
