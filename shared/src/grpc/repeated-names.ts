/**
 * A tensor name given twice in one request. A few inputs are compared in a loop (no Set per request); past
 * FEW_NAMES the caller passes a Set, so a hostile request with many thousands of inputs stays linear: the
 * loop alone is quadratic (40,000 inputs in an 0.9 MB message cost 2.4 s of the event loop).
 */
export const FEW_NAMES = 8;

/** A Set for `count` names when a loop would be too slow, else undefined (the loop). */
export function namesSeenFor(count: number): Set<string> | undefined {
  return count > FEW_NAMES ? new Set<string>() : undefined;
}

/** Whether `items[at]`'s name came earlier in `items`; with `seen`, it is looked up and then added. */
export function repeatsEarlierName(items: readonly { readonly name: string }[], at: number, seen: Set<string> | undefined): boolean {
  const name = items[at]!.name;
  if (seen !== undefined) {
    if (seen.has(name)) return true;
    seen.add(name);
    return false;
  }
  for (let j = 0; j < at; j++) if (items[j]!.name === name) return true;
  return false;
}
