/**
 * Turning a list of requests into session runs and the runs' outputs back into per-request results.
 *
 * A batching model (max_batch_size > 0) gets one run: each input is the requests' tensors gathered along
 * dim 0 (one copy, into a fresh buffer that is then transferred to the worker), and each output is
 * cut back into the requests' rows (views, no copy). A non-batching model gets one run per request. A run
 * of one request lends the request's own tensors (no copy): a session on the main thread reads them in
 * place, and the backend copies them once before a run crosses to a thread (wire-tensor.ts `forThread`).
 * Requests that cannot join the batch (unknown or missing inputs, wrong datatype, bytes that do not
 * match the shape, non-batch dimensions that differ from the batch's) fail alone with INVALID_ARG;
 * the scheduler should never send them, so this is a safety net, not the main validation.
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import {
  decodeBytesElements,
  formatShape,
  splitBatch,
  validateTensorData,
  type Datatype,
  type Tensor,
} from '../../../../shared/src/tensors/index.js';
import type { ExecutionRequest, ExecutionResult } from '../backend.js';
import type { WireTensor } from '../worker/protocol.js';
import { wireToTensor, type RunInput } from '../worker/wire-tensor.js';
import { datatypeOfOrt } from './element-types.js';
import { inputsWereValidated } from '../validated-inputs.js';
import type { OrtIoInfo, OrtRun } from './protocol.js';

export interface ModelIo {
  readonly modelName: string;
  /** max_batch_size > 0: requests are concatenated along dim 0. */
  readonly batching: boolean;
  readonly inputs: readonly OrtIoInfo[];
  readonly outputs: readonly OrtIoInfo[];
}

export interface PlannedRun {
  /** Indexes (into the execute() list) of the requests this run serves, in order. */
  readonly requestIndexes: readonly number[];
  /** Each request's rows along dim 0 (batching runs only). */
  readonly batchSizes: readonly number[];
  readonly body: OrtRun;
}

export interface BatchPlan {
  readonly runs: readonly PlannedRun[];
  /** Requests refused before any run, by index. */
  readonly rejected: ReadonlyMap<number, TesseraError>;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * onnxruntime's string tensors hold JS strings passed on as C strings: an element with a NUL byte would
 * be cut at it, and one that is not valid UTF-8 would be altered (U+FFFD). Refuse both, naming the
 * element, rather than run the model on other data than the client sent.
 */
export function assertOrtStrings(input: Tensor, what: string): void {
  decodeBytesElements(input.data, undefined, what).forEach((element, i) => {
    if (element.includes(0)) {
      throw TesseraError.invalidArg(`${what}: element ${i} holds a NUL byte, which onnxruntime string tensors cannot carry`);
    }
    try {
      strictUtf8.decode(element);
    } catch {
      throw TesseraError.invalidArg(`${what}: element ${i} is not valid UTF-8, which onnxruntime string tensors cannot carry`);
    }
  });
}

/** What checkRequest looks up for every request, computed once per model. */
interface IoLookup {
  readonly inputs: ReadonlyMap<string, { readonly datatype: Datatype | undefined; readonly typeError: string }>;
  readonly outputs: ReadonlySet<string>;
  /** Every output name in model order: the fetch list of a run whose requests want all outputs. */
  readonly outputNames: readonly string[];
}

const lookups = new WeakMap<ModelIo, IoLookup>();

function lookupOf(io: ModelIo): IoLookup {
  let lookup = lookups.get(io);
  if (lookup === undefined) {
    const inputs = new Map<string, { datatype: Datatype | undefined; typeError: string }>();
    for (const info of io.inputs) {
      try {
        inputs.set(info.name, { datatype: datatypeOfOrt(info.type, `input '${info.name}' for model '${io.modelName}'`), typeError: '' });
      } catch (error) {
        inputs.set(info.name, { datatype: undefined, typeError: error instanceof Error ? error.message : String(error) });
      }
    }
    const outputNames = io.outputs.map((o) => o.name);
    lookup = { inputs, outputs: new Set(outputNames), outputNames };
    lookups.set(io, lookup);
  }
  return lookup;
}

/**
 * Checks one request on its own; returns its batch size (1 for non-batching models). A request whose
 * inputs the request validator checked skips what it already did (duplicates, byte sizes); the
 * checks against the session itself (names, onnxruntime's datatypes, strings, batch rows) always run.
 */
/** Made only where needed (an error, an unchecked tensor): not one string per input per request. */
function inputLabel(input: Tensor, io: ModelIo): string {
  return `input '${input.name}' for model '${io.modelName}'`;
}

function checkRequest(request: ExecutionRequest, io: ModelIo, lookup: IoLookup): number {
  const validated = inputsWereValidated(request.inputs);
  const seen = validated ? undefined : new Set<string>();
  let batchSize: number | undefined;
  for (const input of request.inputs) {
    const info = lookup.inputs.get(input.name);
    if (info === undefined) throw TesseraError.invalidArg(`unexpected inference input '${input.name}' for model '${io.modelName}'`);
    if (seen !== undefined) {
      if (seen.has(input.name)) throw TesseraError.invalidArg(`input '${input.name}' appears twice in a request for model '${io.modelName}'`);
      seen.add(input.name);
    }
    if (info.datatype === undefined) throw TesseraError.unsupported(info.typeError);
    if (input.datatype !== info.datatype) {
      throw TesseraError.invalidArg(`${inputLabel(input, io)} has datatype ${input.datatype}, the model expects ${info.datatype}`);
    }
    if (!validated) validateTensorData(input, inputLabel(input, io));
    if (input.datatype === 'BYTES') assertOrtStrings(input, inputLabel(input, io));
    if (!io.batching) continue;
    const rows = input.shape[0];
    if (rows === undefined || rows < 1) {
      throw TesseraError.invalidArg(`${inputLabel(input, io)} has shape ${formatShape(input.shape)}, which has no batch dimension`);
    }
    if (batchSize !== undefined && rows !== batchSize) {
      throw TesseraError.invalidArg(`inputs for model '${io.modelName}' disagree on the batch size (${batchSize} and ${rows})`);
    }
    batchSize = rows;
  }
  // Names are known and (validated or checked above) distinct, so a count short of the model's is a missing one.
  if (request.inputs.length !== lookup.inputs.size) {
    const given = new Set(request.inputs.map((t) => t.name));
    for (const name of lookup.inputs.keys()) {
      if (!given.has(name)) throw TesseraError.invalidArg(`model '${io.modelName}' needs input '${name}', which the request does not have`);
    }
  }
  for (const name of request.requestedOutputs) {
    if (!lookup.outputs.has(name)) throw TesseraError.invalidArg(`unexpected inference output '${name}' for model '${io.modelName}'`);
  }
  return batchSize ?? 1;
}

/** Outputs a run must fetch: every output when some request wants all, else the union, in model order. */
function outputsFor(requests: readonly ExecutionRequest[], io: ModelIo): readonly string[] {
  const all = lookupOf(io).outputNames;
  if (requests.some(wantsAllOutputs)) return all;
  const wanted = new Set<string>();
  for (const request of requests) {
    for (const name of request.requestedOutputs) wanted.add(name);
    // Names were checked against the model's: once every output is wanted, the rest of the batch changes nothing.
    if (wanted.size === all.length) return all;
  }
  return all.filter((n) => wanted.has(n));
}

const wantsAllOutputs = (request: ExecutionRequest): boolean => request.requestedOutputs.length === 0;

const NONE_REJECTED: ReadonlyMap<number, TesseraError> = new Map();

/** The plan of a batch of one request (the default scheduler's every batch): no maps, lists or closures of a batch. */
function planOne(request: ExecutionRequest, io: ModelIo): BatchPlan {
  let rows: number;
  try {
    rows = checkRequest(request, io, lookupOf(io));
  } catch (error) {
    return { runs: [], rejected: new Map([[0, toTesseraError(error)]]) };
  }
  // Input order: the model's for a batching run (as a concatenation builds it), the request's otherwise.
  // The request's own tensors, lent: the list is this run's own, the tensors are not copied.
  const inputs: RunInput[] = [];
  if (io.batching) for (const info of io.inputs) inputs.push(inputNamed(request, info.name));
  else for (const input of request.inputs) inputs.push(input);
  const outputNames = wantsAllOutputs(request) ? lookupOf(io).outputNames : outputsFor([request], io);
  return { runs: [{ requestIndexes: [0], batchSizes: io.batching ? [rows] : [], body: { inputs, outputNames } }], rejected: NONE_REJECTED };
}

function inputNamed(request: ExecutionRequest, name: string): Tensor {
  for (const input of request.inputs) if (input.name === name) return input;
  // checkRequest found every model input in the request.
  throw TesseraError.internal(`input '${name}' vanished from a checked request`);
}

/**
 * One input of a batching run: the accepted requests' tensors copied once, in order, into one fresh buffer that
 * is then transferred to the thread. checkRequest and the inner-shape check already hold every tensor to the
 * model's datatype, a batch dimension, bytes that match its shape and the batch's inner shape, so nothing is
 * checked again here (concatBatch would, per tensor) and no list of the parts is built.
 */
function gatherInput(accepted: readonly { readonly request: ExecutionRequest }[], name: string): WireTensor {
  let first: Tensor | undefined;
  let rows = 0;
  let bytes = 0;
  for (const { request } of accepted) {
    const tensor = inputNamed(request, name);
    first ??= tensor;
    rows += tensor.shape[0] as number;
    bytes += tensor.data.byteLength;
  }
  if (first === undefined) throw TesseraError.internal(`input '${name}' gathered from an empty batch`);
  // Every byte is written below, so the buffer need not be zeroed first; allocUnsafeSlow's buffer is its own, whole.
  const data = Buffer.allocUnsafeSlow(bytes);
  let offset = 0;
  for (const { request } of accepted) {
    const part = inputNamed(request, name).data;
    data.set(part, offset);
    offset += part.byteLength;
  }
  const shape = [rows];
  for (let d = 1; d < first.shape.length; d++) shape.push(first.shape[d] as number);
  return { name, datatype: first.datatype, shape, data: data.buffer as ArrayBuffer };
}

/** Whether two shapes agree after the batch dimension (numbers compared: no shape strings per request). */
function sameInnerShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function planBatch(requests: readonly ExecutionRequest[], io: ModelIo): BatchPlan {
  if (requests.length === 1) return planOne(requests[0] as ExecutionRequest, io);
  const rejected = new Map<number, TesseraError>();
  const accepted: { index: number; request: ExecutionRequest; rows: number }[] = [];
  // The first acceptable request fixes the non-batch dimensions every later one must match.
  const reference = new Map<string, readonly number[]>();
  const lookup = lookupOf(io); // once per batch, not once per request
  requests.forEach((request, index) => {
    try {
      const rows = checkRequest(request, io, lookup);
      // A batch of one has nothing to agree with (the usual case at low load: skip the shape strings).
      if (io.batching && requests.length > 1) {
        for (const input of request.inputs) {
          const want = reference.get(input.name);
          if (want !== undefined && !sameInnerShape(want, input.shape)) {
            throw TesseraError.invalidArg(
              `input '${input.name}' for model '${io.modelName}' has shape ${formatShape(input.shape)}, ` +
                `but the batch it was scheduled into has ${formatShape(want.slice(1))} after the batch dimension`,
            );
          }
        }
        for (const input of request.inputs) if (!reference.has(input.name)) reference.set(input.name, input.shape);
      }
      accepted.push({ index, request, rows });
    } catch (error) {
      rejected.set(index, toTesseraError(error));
    }
  });
  if (accepted.length === 0) return { runs: [], rejected };

  if (!io.batching) {
    const runs = accepted.map(({ index, request }) => ({
      requestIndexes: [index],
      batchSizes: [],
      body: { inputs: [...request.inputs], outputNames: outputsFor([request], io) },
    }));
    return { runs, rejected };
  }

  const only = accepted.length === 1 ? accepted[0] : undefined;
  const inputs: RunInput[] = io.inputs.map((info) =>
    // One request: its tensor is the batch, lent as it is (its checks ran in checkRequest).
    only !== undefined ? inputNamed(only.request, info.name) : gatherInput(accepted, info.name),
  );
  const run: PlannedRun = {
    requestIndexes: accepted.map((a) => a.index),
    batchSizes: accepted.map((a) => a.rows),
    body: { inputs, outputNames: outputsFor(accepted.map((a) => a.request), io) },
  };
  return { runs: [run], rejected };
}

/** Only the outputs a request asked for (all when it named none), in the order it asked. */
function selectOutputs(request: ExecutionRequest, outputs: readonly Tensor[]): Tensor[] {
  if (request.requestedOutputs.length === 0) return [...outputs];
  return request.requestedOutputs.map((name) => outputs.find((o) => o.name === name) as Tensor);
}

/** The results of one run, one per request of the run (same order as run.requestIndexes). */
export function splitRunOutputs(
  run: PlannedRun,
  wireOutputs: readonly WireTensor[],
  requests: readonly ExecutionRequest[],
  io: ModelIo,
): ExecutionResult[] {
  if (run.requestIndexes.length === 1) return [oneRequestsOutputs(run, wireOutputs, requests[run.requestIndexes[0] as number] as ExecutionRequest, io)];
  const own = run.requestIndexes.map((i) => requests[i] as ExecutionRequest);
  const outputs = wireOutputs.map(wireToTensor);
  if (!io.batching) return own.map((request) => ({ outputs: selectOutputs(request, outputs) }));
  const total = run.batchSizes.reduce((a, b) => a + b, 0);
  try {
    const pieces = outputs.map((output) => {
      if (output.shape[0] !== total) {
        throw new Error(
          `output '${output.name}' has shape ${formatShape(output.shape)}, but the batch holds ${total} rows along dimension 0`,
        );
      }
      // A run of one request: the whole output is its piece (still checked against its shape).
      if (run.batchSizes.length === 1) {
        validateTensorData(output);
        return [output];
      }
      return splitBatch(output, run.batchSizes);
    });
    const results: ExecutionResult[] = [];
    for (let r = 0; r < own.length; r++) {
      const request = own[r] as ExecutionRequest;
      const mine: Tensor[] = [];
      for (const piece of pieces) mine.push(piece[r] as Tensor);
      // The list is this request's own already: no copy when it wants every output.
      results.push({ outputs: request.requestedOutputs.length === 0 ? mine : selectOutputs(request, mine) });
    }
    return results;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const failure = TesseraError.internal(`model '${io.modelName}': ${message}`);
    return own.map(() => ({ error: failure }));
  }
}

/** splitRunOutputs for a run of one request: its outputs whole, checked against its rows, with no per-batch lists. */
function oneRequestsOutputs(run: PlannedRun, wireOutputs: readonly WireTensor[], request: ExecutionRequest, io: ModelIo): ExecutionResult {
  const outputs: Tensor[] = [];
  for (const wire of wireOutputs) outputs.push(wireToTensor(wire));
  if (io.batching) {
    const rows = run.batchSizes[0];
    try {
      for (const output of outputs) {
        if (output.shape[0] !== rows) {
          throw new Error(`output '${output.name}' has shape ${formatShape(output.shape)}, but the batch holds ${rows} rows along dimension 0`);
        }
        validateTensorData(output);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { error: TesseraError.internal(`model '${io.modelName}': ${message}`) };
    }
  }
  // The list is this request's own already: no copy when it wants every output.
  return { outputs: request.requestedOutputs.length === 0 ? outputs : selectOutputs(request, outputs) };
}
