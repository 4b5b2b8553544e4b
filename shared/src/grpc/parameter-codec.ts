/**
 * `InferParameter` (a protobuf oneof) <-> our `ParameterValue`.
 *
 * Decision on int64: an `int64_param` becomes a plain `number` when it is a safe integer, and a `bigint`
 * only beyond 2^53. HTTP JSON gives numbers for the same reserved keys (priority, timeout, sequence_id),
 * so the core sees one type whichever protocol the request came in on. The cost: re-encoding turns an
 * integral `double_param` into an `int64_param`, exactly what Triton's HTTP frontend does with JSON.
 */
import { create } from '@bufbuild/protobuf';
import { TesseraError } from '../errors/index.js';
import { InferParameterSchema } from '../gen/grpc_service_pb.js';
import type { InferParameter } from '../gen/grpc_service_pb.js';
import type { ParameterValue, Parameters } from '../tensors/index.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// Triton accepts uint64 only for `priority`; any other uint64 parameter is rejected (section 2.4).
const UINT64_ALLOWED = new Set(['priority']);

/** Own-property assignment that stays safe for a key like "__proto__" arriving from the wire. */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Made once: two BigInts per int64 parameter (sequence_id, priority) of every request otherwise. */
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function fromBigint(value: bigint): number | bigint {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
}

/** One parameter value; `where` names it in errors ("parameter 'x'", "parameter 'x' of input 'y'"). */
export function parameterValueFromProto(param: InferParameter, key: string, where: string): ParameterValue {
  const choice = param.parameterChoice;
  switch (choice.case) {
    case 'boolParam':
    case 'stringParam':
    case 'doubleParam':
      return choice.value;
    case 'int64Param':
      return fromBigint(choice.value);
    case 'uint64Param':
      if (!UINT64_ALLOWED.has(key)) {
        throw TesseraError.invalidArg(`${where} has unsupported type uint64; use int64, bool, string or double`);
      }
      return fromBigint(choice.value);
    default:
      throw TesseraError.invalidArg(`${where} has no value set`);
  }
}

/** A whole map; `owner` is appended to the names in errors (e.g. " of input 'x'"). */
export function parametersFromProto(map: { readonly [key: string]: InferParameter }, owner = ''): Parameters {
  const result: Parameters = {};
  for (const [key, param] of Object.entries(map)) {
    setOwn(result, key, parameterValueFromProto(param, key, `parameter '${key}'${owner}`));
  }
  return result;
}

export function parameterValueToProto(value: ParameterValue, key: string): InferParameter {
  switch (typeof value) {
    case 'boolean':
      return create(InferParameterSchema, { parameterChoice: { case: 'boolParam', value } });
    case 'string':
      return create(InferParameterSchema, { parameterChoice: { case: 'stringParam', value } });
    case 'number':
      return Number.isSafeInteger(value)
        ? create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value: BigInt(value) } })
        : create(InferParameterSchema, { parameterChoice: { case: 'doubleParam', value } });
    case 'bigint':
      if (value >= INT64_MIN && value <= INT64_MAX) {
        return create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value } });
      }
      if (value > INT64_MAX && value <= UINT64_MAX) {
        return create(InferParameterSchema, { parameterChoice: { case: 'uint64Param', value } });
      }
      throw TesseraError.invalidArg(`parameter '${key}' value ${value} does not fit in 64 bits`);
  }
}

export function parametersToProto(params: Parameters | undefined): { [key: string]: InferParameter } {
  const result: { [key: string]: InferParameter } = {};
  if (!params) return result;
  for (const [key, value] of Object.entries(params)) setOwn(result, key, parameterValueToProto(value, key));
  return result;
}
