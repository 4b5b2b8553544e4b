/**
 * A one-entry memo for a request target's parse: a client sends the same target request after request,
 * so the raw readers' handlers (node and gateway) parse it once and `accepts` and `serve` share the result.
 */
export function rememberLastTarget<T>(parse: (target: string) => T): (target: string) => T {
  let lastTarget: string | undefined;
  let lastResult: T;
  return (target) => {
    if (target !== lastTarget) {
      lastResult = parse(target);
      lastTarget = target;
    }
    return lastResult;
  };
}
