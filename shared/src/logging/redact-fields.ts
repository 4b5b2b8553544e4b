/**
 * Replaces the values of secret fields (API keys, bearer tokens) before a line is written: at the top
 * level of the fields, or one level down (e.g. `headers.authorization`). The caller's objects are
 * never changed: a copy is made only when something must be censored, so the common line (no secret,
 * no nested object) costs one pass over its keys.
 *
 * Why not pino's own `redact` option: its wildcard paths (`*.authorization`, needed for "one level
 * down") made it about 4% of the gateway's CPU per cache hit, for lines that almost never hold a secret.
 */

export type Fields = Record<string, unknown>;

export function createRedactor(names: readonly string[], censor: string): (fields: Fields) => Fields {
  const secret = new Set(names);
  const censorNested = (value: object): object | undefined => {
    let copy: Fields | undefined;
    for (const key in value) {
      if (secret.has(key) && Object.hasOwn(value, key)) (copy ??= { ...(value as Fields) })[key] = censor;
    }
    return copy;
  };
  return (fields) => {
    let copy: Fields | undefined;
    for (const key in fields) {
      if (!Object.hasOwn(fields, key)) continue;
      if (secret.has(key)) {
        (copy ??= { ...fields })[key] = censor;
        continue;
      }
      const value = fields[key];
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const nested = censorNested(value);
        if (nested !== undefined) (copy ??= { ...fields })[key] = nested;
      }
    }
    return copy ?? fields;
  };
}
