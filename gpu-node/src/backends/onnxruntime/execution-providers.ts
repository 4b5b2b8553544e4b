/**
 * Which onnxruntime execution provider a GPU instance runs on.
 *
 * onnxruntime-node's Linux build carries the WebGPU provider (Dawn over Vulkan) in libonnxruntime
 * itself; the CUDA provider is a separate library (`libonnxruntime_providers_cuda.so`) that a GPU
 * deployment installs beside it. So, for a GPU instance:
 *
 * - `optimization { execution_accelerators { gpu_execution_accelerator: [{ name: "cuda" }] } }` (or
 *   "webgpu", or both, in order) names the providers to try, and only those;
 * - otherwise CUDA when its library is installed, then WebGPU.
 *
 * The worker tries them in order (onnxruntime answers only when a session is created). A KIND_GPU
 * instance that none of them can serve fails its load with each provider's reason; KIND_AUTO runs on
 * the CPU. WebGPU reaches one adapter (Dawn's default), so it is offered for GPU 0 only.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';

export type GpuProvider = 'cuda' | 'webgpu';
export type ExecutionProviderName = 'cpu' | GpuProvider;

const GPU_PROVIDERS: readonly GpuProvider[] = ['cuda', 'webgpu'];
const CUDA_PROVIDER_LIBRARY = 'libonnxruntime_providers_cuda.so';

function isGpuProvider(name: string): name is GpuProvider {
  return (GPU_PROVIDERS as readonly string[]).includes(name);
}

/** CPU instances run onnxruntime's default provider: a config asking for another (OpenVINO) is refused. */
export function refuseCpuAccelerators(config: ModelConfig): void {
  for (const cpu of config.optimization?.executionAccelerators?.cpuExecutionAccelerator ?? []) {
    throw TesseraError.invalidArg(
      `model '${config.name}': cpu_execution_accelerator '${cpu.name}' is not available; the CPU runs onnxruntime's default provider`,
    );
  }
}

/** The GPU accelerators the config names explicitly; throws INVALID_ARG for names this build cannot run. */
export function configuredGpuProviders(config: ModelConfig): GpuProvider[] {
  const accelerators = config.optimization?.executionAccelerators;
  return (accelerators?.gpuExecutionAccelerator ?? []).map((accelerator) => {
    const name = accelerator.name.trim().toLowerCase();
    if (!isGpuProvider(name)) {
      throw TesseraError.invalidArg(
        `model '${config.name}': gpu_execution_accelerator '${accelerator.name}' is not available; use ${GPU_PROVIDERS.map((p) => `'${p}'`).join(' or ')}`,
      );
    }
    const parameters = Object.keys(accelerator.parameters);
    if (parameters.length > 0) {
      throw TesseraError.invalidArg(`model '${config.name}': gpu_execution_accelerator '${name}' takes no parameters (got '${parameters.join("', '")}')`);
    }
    return name;
  });
}

/**
 * The providers a GPU instance on `device` tries, in order. `cudaInstalled` says whether the CUDA
 * provider library is present (cudaProviderInstalled()).
 */
export function gpuProviderCandidates(config: ModelConfig, device: number, cudaInstalled: boolean): GpuProvider[] {
  const explicit = configuredGpuProviders(config);
  const wanted = explicit.length > 0 ? explicit : cudaInstalled ? GPU_PROVIDERS : GPU_PROVIDERS.filter((p) => p !== 'cuda');
  return wanted.filter((provider) => provider !== 'webgpu' || device === 0);
}

/** Why a provider was left out of a GPU instance's candidates, for the load error. */
export function skippedProviderReasons(config: ModelConfig, device: number, cudaInstalled: boolean): string[] {
  const explicit = configuredGpuProviders(config);
  const reasons: string[] = [];
  if (explicit.length === 0 && !cudaInstalled) reasons.push(`cuda: ${CUDA_PROVIDER_LIBRARY} is not installed`);
  if ((explicit.length === 0 || explicit.includes('webgpu')) && device !== 0) {
    reasons.push(`webgpu: it reaches only GPU 0, not GPU ${device}`);
  }
  return reasons;
}

/** The folder of onnxruntime-node's native binding for this platform, where it loads provider libraries from. */
function bindingDir(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('onnxruntime-node');
    return join(dirname(entry), '..', 'bin', 'napi-v6', process.platform, process.arch);
  } catch {
    return undefined;
  }
}

/** Whether onnxruntime-node's CUDA provider library sits beside its libonnxruntime (where it loads it from). */
export function cudaProviderInstalled(): boolean {
  const dir = bindingDir();
  return dir !== undefined && existsSync(join(dir, CUDA_PROVIDER_LIBRARY));
}

/**
 * The first CUDA provider library missing from onnxruntime-node's folder (the CPU-only install,
 * `ONNXRUNTIME_NODE_INSTALL=skip`, ships neither); undefined when both are there or the layout is not
 * the one we know (then onnxruntime decides). Saying so ourselves spares onnxruntime's own
 * "Failed to load library libonnxruntime_providers_shared.so" line on stderr.
 */
export function missingCudaLibrary(): string | undefined {
  const dir = bindingDir();
  if (dir === undefined || process.platform !== 'linux' || !existsSync(dir)) return undefined;
  return ['libonnxruntime_providers_shared.so', CUDA_PROVIDER_LIBRARY].map((lib) => join(dir, lib)).find((path) => !existsSync(path));
}
