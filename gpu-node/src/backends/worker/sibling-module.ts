/**
 * Where a backend's worker module is: next to the backend's own module, with the same extension. Under
 * vitest or tsx the backend runs from `.ts` source, so its worker is `.ts` too (and gets tsx); a
 * compiled build pairs `.js` with `.js`.
 */
export function siblingModule(importMetaUrl: string, basename: string): URL {
  const extension = new URL(importMetaUrl).pathname.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${basename}${extension}`, importMetaUrl);
}
