/**
 * Backends chosen by name, as grpc-js registers load balancers: the model machinery asks for
 * `config.backend` (or the backend a `platform` implies) and gets the one Backend that serves it.
 * The default registry holds 'onnxruntime', 'typescript', 'openai' (an external OpenAI-compatible engine) and
 * 'onnxruntime_llm' (decoder models with continuous batching); tests and embedders may build their own.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { Logger } from '../../../shared/src/logging/index.js';
import type { Backend } from './backend.js';
import { createOnnxRuntimeBackend } from './onnxruntime/index.js';
import { createOnnxRuntimeLlmBackend } from './onnxruntime-llm/index.js';
import { createOpenAIBackend } from './openai/openai-backend.js';
import { createTypescriptBackend } from './typescript/index.js';

/** Triton platforms that name a backend Tessera has. */
const PLATFORM_BACKENDS: Readonly<Record<string, string>> = { onnxruntime_onnx: 'onnxruntime' };

export class BackendRegistry {
  private readonly backends = new Map<string, Backend>();

  /** ALREADY_EXISTS when the name is taken: replacing a backend under running models is never intended. */
  register(backend: Backend): void {
    if (backend.name === '') throw TesseraError.invalidArg('a backend must have a non-empty name');
    if (this.backends.has(backend.name)) {
      throw TesseraError.alreadyExists(`a backend named '${backend.name}' is already registered`);
    }
    this.backends.set(backend.name, backend);
  }

  get(name: string): Backend {
    if (name === '') {
      throw TesseraError.invalidArg(`no backend name given; known backends: ${this.knownList()}`);
    }
    const backend = this.backends.get(name);
    if (backend === undefined) {
      throw TesseraError.notFound(`unknown backend '${name}'; known backends: ${this.knownList()}`);
    }
    return backend;
  }

  names(): string[] {
    return [...this.backends.keys()].sort();
  }

  private knownList(): string {
    const names = this.names();
    return names.length > 0 ? names.join(', ') : '(none)';
  }
}

/**
 * The backend a config asks for: `backend` when set, else the one its `platform` implies
 * (onnxruntime_onnx → onnxruntime). INVALID_ARG when neither says, or the platform is not served here.
 */
export function backendNameOf(config: ModelConfig): string {
  if (config.backend !== '') return config.backend;
  if (config.platform === '') {
    throw TesseraError.invalidArg(`must specify 'platform' or 'backend' for '${config.name}'`);
  }
  const name = PLATFORM_BACKENDS[config.platform];
  if (name === undefined) {
    throw TesseraError.invalidArg(
      `model '${config.name}': platform '${config.platform}' is not supported; supported platforms: ` +
        Object.keys(PLATFORM_BACKENDS).join(', '),
    );
  }
  return name;
}

/**
 * A registry with Tessera's own backends; pass the node's logger so CPU fallbacks and decoders loaded
 * without last-position outputs are reported, and
 * `threadPoolSize` (`--backend-thread-pool-size`) to size the onnxruntime backend's worker pool and
 * `threadIdleGraceMs` (`--backend-thread-idle-ms`) for how long its idle threads linger.
 */
export function createDefaultBackendRegistry(
  options: { readonly logger?: Logger; readonly threadPoolSize?: number; readonly threadIdleGraceMs?: number } = {},
): BackendRegistry {
  const registry = new BackendRegistry();
  registry.register(
    createOnnxRuntimeBackend({
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
      ...(options.threadPoolSize !== undefined ? { threadPoolSize: options.threadPoolSize } : {}),
      ...(options.threadIdleGraceMs !== undefined ? { threadIdleGraceMs: options.threadIdleGraceMs } : {}),
    }),
  );
  registry.register(createTypescriptBackend());
  registry.register(createOpenAIBackend());
  registry.register(createOnnxRuntimeLlmBackend(options.logger !== undefined ? { logger: options.logger } : {}));
  return registry;
}

/** The process-wide registry, for callers that do not build their own (it logs nothing). */
export const defaultBackendRegistry: BackendRegistry = createDefaultBackendRegistry();

export function registerBackend(backend: Backend, registry: BackendRegistry = defaultBackendRegistry): void {
  registry.register(backend);
}

export function getBackend(name: string, registry: BackendRegistry = defaultBackendRegistry): Backend {
  return registry.get(name);
}
