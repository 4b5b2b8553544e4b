/**
 * Triton's restricted APIs: `--http-restricted-api=<categories>:<header>=<value>` and
 * `--grpc-restricted-protocol=<categories>:<key>=<value>` (each repeatable). A request to an API of a
 * restricted category must carry the header (HTTP: `<header>`; gRPC metadata:
 * `triton-grpc-protocol-<key>`) with exactly that value, or it is refused before anything else runs,
 * with tritonserver's answers:
 * - HTTP 403 `{"error":"This API is restricted, expecting header '<header>'"}`;
 * - gRPC UNAVAILABLE "This protocol is restricted, expecting header 'triton-grpc-protocol-<key>'".
 *
 * This is what keeps the model-repository API (which, with the TypeScript backend, uploads code that
 * the node runs) away from anyone who can reach the port.
 */
import { HTTP_TOKEN } from '../../../shared/src/http/index.js';

/** Triton's API categories, in its order. */
export const RESTRICTED_CATEGORIES = [
  'health',
  'metadata',
  'inference',
  'shared-memory',
  'model-config',
  'model-repository',
  'statistics',
  'trace',
  'logging',
] as const;

export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The header (HTTP) or metadata key (gRPC, prefix included) a category needs, and its value. */
export interface Restriction {
  readonly header: string;
  readonly value: string;
}

export type Restrictions = ReadonlyMap<RestrictedCategory, Restriction>;

export const NO_RESTRICTIONS: Restrictions = new Map();

/** gRPC metadata keys of restricted protocols: tritonserver's fixed prefix, lower case as HTTP/2 needs. */
export const GRPC_RESTRICTED_PREFIX = 'triton-grpc-protocol-';


/**
 * Parses the values of one repeatable flag. Each is `<category>[,<category>...]:<key>=<value>`; a
 * category may be restricted once only (across all values of the flag). `protocol` 'grpc' turns the key
 * into its metadata key `triton-grpc-protocol-<key>` (lower case).
 */
export function parseRestrictions(
  flag: string,
  values: readonly string[],
  protocol: 'http' | 'grpc',
): { restrictions: Restrictions; problems: string[] } {
  const restrictions = new Map<RestrictedCategory, Restriction>();
  const problems: string[] = [];
  for (const text of values) {
    const colon = text.indexOf(':');
    const equals = colon < 0 ? -1 : text.indexOf('=', colon + 1);
    if (colon < 0 || equals < 0) {
      problems.push(`${flag} must be <category>[,<category>...]:<key>=<value>, got '${text}'`);
      continue;
    }
    const categories = text.slice(0, colon).split(',').map((c) => c.trim());
    const key = text.slice(colon + 1, equals).trim();
    const value = text.slice(equals + 1);
    if (!HTTP_TOKEN.test(key)) problems.push(`${flag}: '${key}' is not a valid header name, in '${text}'`);
    if (value === '') problems.push(`${flag}: the value of '${key}' must not be empty, in '${text}'`);
    const header = protocol === 'grpc' ? `${GRPC_RESTRICTED_PREFIX}${key}`.toLowerCase() : key;
    for (const category of categories) {
      if (!(RESTRICTED_CATEGORIES as readonly string[]).includes(category)) {
        problems.push(`${flag}: unknown category '${category}' (known: ${RESTRICTED_CATEGORIES.join(', ')})`);
      } else if (restrictions.has(category as RestrictedCategory)) {
        problems.push(`${flag}: category '${category}' is restricted more than once`);
      } else {
        restrictions.set(category as RestrictedCategory, { header, value });
      }
    }
  }
  return { restrictions, problems };
}

/** True when `values` (a header's values as the server received them) satisfy the restriction. */
export function allowedBy(restriction: Restriction | undefined, values: string | readonly string[] | undefined): boolean {
  if (restriction === undefined) return true;
  if (values === undefined) return false;
  return typeof values === 'string' ? values === restriction.value : values.length === 1 && values[0] === restriction.value;
}

/** tritonserver's HTTP refusal text (status 403). */
export function httpRestrictedMessage(restriction: Restriction): string {
  return `This API is restricted, expecting header '${restriction.header}'`;
}

/** tritonserver's gRPC refusal text (status UNAVAILABLE). */
export function grpcRestrictedMessage(restriction: Restriction): string {
  return `This protocol is restricted, expecting header '${restriction.header}'`;
}
