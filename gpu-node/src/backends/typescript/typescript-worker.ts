/**
 * Worker-thread entry of one typescript-backend instance: imports the model module, calls its
 * initialize/execute/finalize, and checks what execute returns.
 */
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { WireError, WireTensor } from '../worker/protocol.js';
import { serveWorker, type ExecuteContext, type WorkerReply } from '../worker/worker-runtime.js';
import type { ModelModule, ModelRequest, ModelResponse, ResponseSender } from './contract.js';
import { inputForModel, outputFromModel } from './model-tensors.js';
import type { TsExecuteBody, TsExecuteReply, TsInit, TsPartial, TsWireResponse } from './protocol.js';

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

let model: ModelModule | undefined;
let modelName = '';
let decoupled = false;

function isDecoupled(config: Readonly<Record<string, unknown>>): boolean {
  const policy = config.modelTransactionPolicy as { decoupled?: unknown } | undefined;
  return policy?.decoupled === true;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Named exports, or the same functions on a default export (CommonJS module.exports lands there). */
function moduleFunctions(namespace: Record<string, unknown>, path: string): ModelModule {
  const candidates = [namespace, namespace.default as Record<string, unknown> | undefined];
  for (const candidate of candidates) {
    if (candidate !== undefined && candidate !== null && typeof candidate.execute === 'function') {
      return candidate as unknown as ModelModule;
    }
  }
  throw TesseraError.invalidArg(`model '${modelName}': '${path}' does not export an execute(requests) function`);
}

async function importModel(path: string): Promise<ModelModule> {
  // This worker already runs under tsx when Tessera itself runs from source; a compiled node needs
  // tsx's hooks only for TypeScript model files.
  const runningFromSource = import.meta.url.endsWith('.ts');
  if (TYPESCRIPT_EXTENSIONS.has(extname(path)) && !runningFromSource) {
    // Both hook sets, as `--import tsx` installs: a .ts file with no package.json above it is CommonJS to Node.
    (await import('tsx/cjs/api')).register();
    (await import('tsx/esm/api')).register();
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw TesseraError.invalidArg(`model '${modelName}': could not import '${path}': ${message(error)}`);
  }
  return moduleFunctions(namespace, path);
}

function responseToWire(response: ModelResponse | undefined, requestedOutputs: readonly string[]): WireTensor[] {
  if (response === null || typeof response !== 'object') {
    throw TesseraError.internal(`model '${modelName}': execute() returned ${String(response)} instead of a response object`);
  }
  if ('error' in response) {
    // A model may say the request itself was wrong (the caller's 4xx); anything else is its own failure.
    const code = (response as { code?: unknown }).code;
    throw code === 'INVALID_ARG' ? TesseraError.invalidArg(String(response.error)) : TesseraError.internal(String(response.error));
  }
  const outputs = response.outputs as Record<string, unknown> | undefined;
  if (outputs === null || typeof outputs !== 'object') {
    throw TesseraError.internal(`model '${modelName}': a response has neither 'outputs' nor 'error'`);
  }
  const names = requestedOutputs.length > 0 ? requestedOutputs : Object.keys(outputs);
  return names.map((name) => {
    const output = outputs[name];
    if (output === undefined) {
      throw TesseraError.internal(`model '${modelName}' did not produce requested output '${name}'`);
    }
    return outputFromModel(modelName, name, output as never);
  });
}

interface RequestState {
  complete: boolean;
  error: WireError | undefined;
}

function wireErrorOf(error: unknown): WireError {
  const e = error instanceof TesseraError ? error : TesseraError.internal(message(error));
  return { code: e.code, message: e.message };
}

function responseSender(index: number, state: RequestState, requestedOutputs: readonly string[], context: ExecuteContext): ResponseSender {
  const signal = context.signal(index);
  return {
    send(response, options) {
      if (state.complete) {
        throw new Error(`model '${modelName}': request ${index} is already complete; no more responses can be sent`);
      }
      if (signal.aborted) return false;
      let outputs: WireTensor[];
      try {
        outputs = responseToWire(response, requestedOutputs);
      } catch (error) {
        // An error response (or one that cannot be converted) fails the request and completes it.
        state.complete = true;
        state.error = wireErrorOf(error);
        return false;
      }
      const final = options?.final === true;
      if (final) state.complete = true;
      const partial: TsPartial = { index, outputs, final };
      context.partial(partial, outputs.flatMap((o) => (o.data.byteLength > 0 ? [o.data] : [])));
      return true;
    },
    close() {
      state.complete = true;
    },
  };
}

/** A decoupled model answers through its senders; the reply only says how each request ended. */
async function executeDecoupled(
  loaded: ModelModule,
  body: TsExecuteBody,
  context: ExecuteContext,
): Promise<WorkerReply<TsExecuteReply>> {
  const t0 = process.hrtime.bigint();
  const states: RequestState[] = body.requests.map(() => ({ complete: false, error: undefined }));
  const requests: ModelRequest[] = body.requests.map((r, i) => ({
    inputs: Object.fromEntries(r.inputs.map((t) => [t.name, inputForModel(t)])),
    requestedOutputs: r.requestedOutputs,
    parameters: r.parameters,
    signal: context.signal(i),
    sender: responseSender(i, states[i] as RequestState, r.requestedOutputs, context),
  }));
  const t1 = process.hrtime.bigint();
  try {
    await loaded.execute(requests);
  } catch (error) {
    throw TesseraError.internal(`model '${modelName}': execute() failed: ${message(error)}`);
  }
  const t2 = process.hrtime.bigint();
  const responses: TsWireResponse[] = states.map((state) => {
    state.complete = true;
    return state.error === undefined ? { outputs: [] } : { error: state.error };
  });
  return { body: { responses, inputNs: Number(t1 - t0), inferNs: Number(t2 - t1), outputNs: 0 }, transfer: [] };
}

serveWorker<TsInit, Record<string, never>, TsExecuteBody, TsExecuteReply>({
  async init(init) {
    modelName = init.args.modelName;
    decoupled = isDecoupled(init.args.config);
    const loaded = await importModel(init.modelPath);
    try {
      await loaded.initialize?.(init.args);
    } catch (error) {
      throw TesseraError.internal(`model '${modelName}': initialize() failed: ${message(error)}`);
    }
    model = loaded;
    return {};
  },

  async execute(body, context) {
    if (model === undefined) throw TesseraError.internal(`model '${modelName}' is not initialized`);
    if (decoupled) return executeDecoupled(model, body, context);
    const t0 = process.hrtime.bigint();
    const requests: ModelRequest[] = body.requests.map((r, i) => ({
      inputs: Object.fromEntries(r.inputs.map((t) => [t.name, inputForModel(t)])),
      requestedOutputs: r.requestedOutputs,
      parameters: r.parameters,
      signal: context.signal(i),
    }));
    const t1 = process.hrtime.bigint();
    let responses: ModelResponse[];
    try {
      responses = (await model.execute(requests)) as ModelResponse[];
    } catch (error) {
      throw TesseraError.internal(`model '${modelName}': execute() failed: ${message(error)}`);
    }
    const t2 = process.hrtime.bigint();
    if (!Array.isArray(responses) || responses.length !== requests.length) {
      throw TesseraError.internal(
        `model '${modelName}': execute() must return one response per request (${requests.length}), ` +
          `got ${Array.isArray(responses) ? responses.length : typeof responses}`,
      );
    }
    const transfer: ArrayBuffer[] = [];
    // A bad response fails its own request only.
    const wire: TsWireResponse[] = responses.map((response, i) => {
      try {
        const outputs = responseToWire(response, requests[i]?.requestedOutputs ?? []);
        for (const o of outputs) if (o.data.byteLength > 0) transfer.push(o.data);
        return { outputs };
      } catch (error) {
        const e = error instanceof TesseraError ? error : TesseraError.internal(message(error));
        return { error: { code: e.code, message: e.message } };
      }
    });
    const t3 = process.hrtime.bigint();
    return {
      body: { responses: wire, inputNs: Number(t1 - t0), inferNs: Number(t2 - t1), outputNs: Number(t3 - t2) },
      transfer,
    };
  },

  async close() {
    await model?.finalize?.();
    model = undefined;
  },
});
