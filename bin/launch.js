// How a bin/ command starts: from the production bundle (dist/, `npm run build`) when it is there and
// no source it was built from has changed since, else from the TypeScript sources through tsx.
// TESSERA_FROM_SOURCE=1 forces the sources (the test suite sets it, so tests never run a stale build);
// TESSERA_BUNDLE_DIR names another bundle folder (an absolute path).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const DIST = process.env.TESSERA_BUNDLE_DIR ? pathToFileURL(`${process.env.TESSERA_BUNDLE_DIR}/`) : new URL('../dist/', import.meta.url);
const ROOT = new URL('../', import.meta.url);

function newerSource(sources, builtAtMs) {
  for (const source of sources) {
    try {
      if (statSync(new URL(source, ROOT)).mtimeMs > builtAtMs) return source;
    } catch {
      // A source absent here (an image that ships dist/ alone) cannot be newer than the build.
    }
  }
  return undefined;
}

/** Imports dist/<name>.js and resolves true when the bundle should run; false means run from source. */
export async function runBundle(name) {
  const bundle = new URL(`${name}.js`, DIST);
  if (process.env.TESSERA_FROM_SOURCE === '1' || !existsSync(bundle)) return false;
  try {
    const { builtAtMs, sources } = JSON.parse(readFileSync(new URL('build-info.json', DIST), 'utf8'));
    const changed = newerSource(sources, builtAtMs);
    if (changed !== undefined) {
      process.stderr.write(`${name}: ${changed} changed after the last build; running from source (npm run build refreshes dist/)\n`);
      return false;
    }
  } catch {
    return false;
  }
  await import(bundle.href);
  return true;
}
