/**
 * What the dynamic batcher needs to know about one inference request. The payload is opaque: the
 * batcher only hands it to an instance, so the same batcher serves backend ExecutionRequests and test
 * doubles alike.
 */
import type { Parameters, ParameterValue } from '../../../../shared/src/tensors/index.js';
import type { Cancellable } from '../call-cancellation.js';

export interface InputShape {
  readonly name: string;
  /** Full shape, batch dimension included when the model batches. */
  readonly shape: readonly number[];
}

export interface BatcherRequest<P> {
  /** Client request id; used in error messages ("[request id: <id>] ..."). May be empty. */
  readonly id: string;
  readonly payload: P;
  /** Leading (batch) dimension; 1 for a model with max_batch_size 0. */
  readonly batchSize: number;
  /** Only requests whose inputs agree (see `batchSignature`) share a batch. */
  readonly inputs: readonly InputShape[];
  /** The `priority` request parameter; 0 or absent = the default level. */
  readonly priority?: number;
  /** The `timeout` request parameter, in microseconds; 0 or absent = the policy's default. */
  readonly timeoutUs?: number;
  /** Aborting cancels the request: dropped from the queue, or its result discarded if already running. */
  readonly signal?: Cancellable;
}

/**
 * A key that is equal for two requests exactly when Triton would let them share a batch: the same input
 * set (optional inputs may be missing) and equal shapes beyond the batch dimension, except for inputs
 * with `allow_ragged_batch`. Triton only compares when a variable dimension makes a difference possible;
 * fixed dimensions always agree after validation, so comparing everything gives the same result.
 */
export function batchSignature(
  inputs: readonly InputShape[],
  raggedInputs: ReadonlySet<string>,
  hasBatchDim: boolean,
): string {
  // One input (most models): its key alone, without the list, sort and joins below.
  if (inputs.length === 1) return inputKey(inputs[0]!, raggedInputs, hasBatchDim);
  return inputs
    .map((input) => inputKey(input, raggedInputs, hasBatchDim))
    .sort()
    .join(';');
}

/**
 * batchSignature for a run of one-input requests: the key of the last shape seen, made again only when
 * the name or a dimension differs. Clients send the same shape request after request, and each key
 * otherwise cost a slice, a join and a template string per request.
 */
export class SignatureMemo {
  private name: string | undefined = undefined;
  private shape: number[] = [];
  private key = '';

  constructor(
    private readonly raggedInputs: ReadonlySet<string>,
    private readonly hasBatchDim: boolean,
  ) {}

  of(inputs: readonly InputShape[]): string {
    if (inputs.length !== 1) return batchSignature(inputs, this.raggedInputs, this.hasBatchDim);
    const input = inputs[0]!;
    if (input.name === this.name && sameDims(input.shape, this.shape, this.hasBatchDim ? 1 : 0)) return this.key;
    this.key = inputKey(input, this.raggedInputs, this.hasBatchDim);
    this.name = input.name;
    this.shape = [...input.shape];
    return this.key;
  }
}

/** Equal from dimension `from` on (the batch dimension does not enter the key). */
function sameDims(shape: readonly number[], known: readonly number[], from: number): boolean {
  if (shape.length !== known.length) return false;
  for (let i = from; i < shape.length; i++) if (shape[i] !== known[i]) return false;
  return true;
}

function inputKey(input: InputShape, raggedInputs: ReadonlySet<string>, hasBatchDim: boolean): string {
  if (raggedInputs.has(input.name)) return `${input.name}:*`;
  const dims = hasBatchDim ? input.shape.slice(1) : input.shape;
  return `${input.name}:${dims.join(',')}`;
}

function nonNegativeNumber(value: ParameterValue | undefined): number {
  if (value === undefined || typeof value === 'boolean') return 0;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * The schedule-policy extension's parameters (`priority`, `timeout` in µs) read leniently: the protocol
 * frontends reject malformed values (e.g. negative gRPC int64) before a request gets here.
 */
export function schedulingParameters(parameters: Parameters): { priority: number; timeoutUs: number } {
  return { priority: schedulingParameter(parameters, 'priority'), timeoutUs: schedulingParameter(parameters, 'timeout') };
}

/** One of them, without the pair object (read once per request on the hot path). */
export function schedulingParameter(parameters: Parameters, name: 'priority' | 'timeout'): number {
  return nonNegativeNumber(parameters[name]);
}
