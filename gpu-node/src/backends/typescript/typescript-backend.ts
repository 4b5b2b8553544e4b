/**
 * The `typescript` backend: models written as JavaScript or TypeScript modules (contract.ts), each
 * instance in its own worker thread so that a model's CPU work never stalls the node's sockets. A batch
 * reaches the model as a list of requests, unconcatenated, as Triton's Python backend passes them.
 */
import { access } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { toJson } from '@bufbuild/protobuf';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { ModelConfigSchema } from '../../../../shared/src/gen/model_config_pb.js';
import type {
  Backend,
  BackendInstance,
  ExecutionBatchResult,
  ExecutionRequest,
  ExecutionResult,
  InstanceSpec,
  ModelSource,
} from '../backend.js';
import { executeTiming, failedExecuteTiming } from '../worker/execute-timing.js';
import { InstanceWorker } from '../worker/instance-worker.js';
import { copiedTensorToWire, transferListOf, wireToTensor } from '../worker/wire-tensor.js';
import { siblingModule } from '../worker/sibling-module.js';
import type { ModelInitializeArgs } from './contract.js';
import type { TsExecuteBody, TsExecuteReply, TsInit, TsPartial } from './protocol.js';

export const TYPESCRIPT_DEFAULT_FILENAME = 'model.js';
/** Tried in order when the default `model.js` is absent (only when default_model_filename is unset). */
const ALTERNATIVE_FILENAMES = ['model.mjs', 'model.ts'];

type TsWorker = InstanceWorker<Record<string, never>, TsExecuteBody, TsExecuteReply>;

const WORKER_ENTRY = siblingModule(import.meta.url, 'typescript-worker');

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function resolveModelPath(source: ModelSource): Promise<string> {
  if (await exists(source.modelPath)) return source.modelPath;
  if (source.config.defaultModelFilename === '' && basename(source.modelPath) === TYPESCRIPT_DEFAULT_FILENAME) {
    for (const name of ALTERNATIVE_FILENAMES) {
      const candidate = join(source.versionDir, name);
      if (await exists(candidate)) return candidate;
    }
  }
  throw TesseraError.invalidArg(
    `model '${source.name}': no model module at '${source.modelPath}' (the typescript backend loads ` +
      `${[TYPESCRIPT_DEFAULT_FILENAME, ...ALTERNATIVE_FILENAMES].join(', ')} or default_model_filename)`,
  );
}

function initializeArgs(source: ModelSource, spec: InstanceSpec): ModelInitializeArgs {
  const config = toJson(ModelConfigSchema, source.config) as Record<string, unknown>;
  return {
    modelName: source.name,
    modelVersion: source.version,
    instanceName: spec.name,
    kind: spec.kind,
    device: spec.device,
    modelDir: source.modelDir,
    versionDir: source.versionDir,
    parameters: Object.fromEntries(Object.entries(source.config.parameters).map(([k, v]) => [k, v.stringValue])),
    config,
    modelConfig: JSON.stringify(config),
  };
}

class TypescriptInstance implements BackendInstance {
  constructor(
    readonly spec: InstanceSpec,
    private readonly worker: TsWorker,
  ) {}

  async execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult> {
    const start = process.hrtime.bigint();
    // One copy per input: the caller's buffers may be views into request bodies and must not be detached.
    const body: TsExecuteBody = {
      requests: requests.map((r) => ({
        inputs: r.inputs.map(copiedTensorToWire),
        requestedOutputs: [...r.requestedOutputs],
        parameters: r.parameters,
      })),
    };
    let reply: TsExecuteReply;
    try {
      reply = await this.worker.call(body, transferListOf(body.requests.flatMap((r) => r.inputs)), {
        onPartial: (partial) => {
          const { index, outputs, final } = partial as TsPartial;
          requests[index]?.onResponse?.(outputs.map(wireToTensor), final);
        },
        signals: requests.map((r) => r.signal),
      });
    } catch (error) {
      const failure = error instanceof TesseraError ? error : TesseraError.internal(String(error));
      return { results: requests.map(() => ({ error: failure })), timing: failedExecuteTiming(start) };
    }
    const received = process.hrtime.bigint();
    const results: ExecutionResult[] = reply.responses.map((response) =>
      'error' in response
        ? { error: new TesseraError(response.error.code, response.error.message) }
        : { outputs: response.outputs.map(wireToTensor) },
    );
    return { results, timing: executeTiming(start, received, reply) };
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

export function createTypescriptBackend(): Backend {
  return {
    name: 'typescript',
    defaultModelFilename: TYPESCRIPT_DEFAULT_FILENAME,
    async createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
      const modelPath = await resolveModelPath(source);
      const worker = await InstanceWorker.start<Record<string, never>, TsExecuteBody, TsExecuteReply, TsInit>({
        instanceName: spec.name,
        entry: WORKER_ENTRY,
        init: { modelPath, args: initializeArgs(source, spec) },
      });
      return new TypescriptInstance(spec, worker);
    },
  };
}
