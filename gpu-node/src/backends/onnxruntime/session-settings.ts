/**
 * Session options from a model config, under the names Triton's onnxruntime backend reads:
 *
 * - `parameters { key: "intra_op_thread_count" }`: threads inside one operator. 0 lets onnxruntime use
 *   every core. Unset, Tessera uses max(1, floor(cores / instances)) so that all instances of the model
 *   running at once need about one core each, instead of N instances × all cores fighting for the CPU.
 * - `inter_op_thread_count`: threads across operators (parallel execution mode only); 0 = onnxruntime's default.
 * - `execution_mode`: 0 sequential (default), 1 parallel.
 * - `enable_mem_arena`, `enable_mem_pattern`: 1/0 (or true/false); onnxruntime's defaults when unset.
 * - `optimization { graph { level } }`: -1 basic, 1 basic + extended, 2 all disabled; 0 or unset: all.
 * - any key starting with `session.` (ours; Triton's backend has no equivalent): an onnxruntime session
 *   config entry, passed as is, e.g. `session.intra_op.allow_spinning`, `session.set_denormal_as_zero`.
 *   `session.intra_op.allow_spinning` defaults to "0" here (onnxruntime's own default is "1"): a
 *   spinning intra-op thread keeps its core busy between operators and between batches, and on a node
 *   that core is also the one the main thread needs to decode the next requests. Measured with
 *   mlp_large on 2 cores (docs/benchmarks.md), spinning cost throughput and bought nothing.
 */
import { availableParallelism } from 'node:os';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../../shared/src/gen/model_config_pb.js';

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

/** Plain data (it is posted to the worker), a subset of onnxruntime's SessionOptions. */
export interface SessionSettings {
  readonly intraOpNumThreads: number;
  readonly interOpNumThreads?: number;
  readonly executionMode: 'sequential' | 'parallel';
  readonly graphOptimizationLevel: GraphOptimizationLevel;
  readonly enableCpuMemArena?: boolean;
  readonly enableMemPattern?: boolean;
  /** onnxruntime session config entries (`session.*` keys), strings as onnxruntime takes them. */
  readonly configEntries: Readonly<Record<string, string>>;
}

const SESSION_ENTRY_PREFIX = 'session.';
const DEFAULT_CONFIG_ENTRIES: Readonly<Record<string, string>> = { 'session.intra_op.allow_spinning': '0' };

function configEntries(config: ModelConfig): Record<string, string> {
  const entries: Record<string, string> = { ...DEFAULT_CONFIG_ENTRIES };
  for (const key of Object.keys(config.parameters)) {
    if (!key.startsWith(SESSION_ENTRY_PREFIX)) continue;
    const value = parameter(config, key);
    if (value === undefined) {
      throw TesseraError.invalidArg(`model '${config.name}': parameter '${key}' needs a value (an onnxruntime session config entry)`);
    }
    entries[key] = value;
  }
  return entries;
}

function parameter(config: ModelConfig, key: string): string | undefined {
  const value = config.parameters[key]?.stringValue;
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function intParameter(config: ModelConfig, key: string): number | undefined {
  const text = parameter(config, key);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw TesseraError.invalidArg(
      `model '${config.name}': parameter '${key}' must be a non-negative integer, got '${text}'`,
    );
  }
  return value;
}

function boolParameter(config: ModelConfig, key: string): boolean | undefined {
  const text = parameter(config, key);
  if (text === undefined) return undefined;
  if (text === '1' || text.toLowerCase() === 'true') return true;
  if (text === '0' || text.toLowerCase() === 'false') return false;
  throw TesseraError.invalidArg(`model '${config.name}': parameter '${key}' must be 1, 0, true or false, got '${text}'`);
}

function graphLevel(config: ModelConfig): GraphOptimizationLevel {
  const level = config.optimization?.graph?.level ?? 0;
  switch (level) {
    case 0:
      return 'all';
    case -1:
      return 'basic';
    case 1:
      return 'extended';
    case 2:
      return 'disabled';
    default:
      throw TesseraError.invalidArg(
        `model '${config.name}': optimization.graph.level ${level} is not one of -1 (basic), 0 (all), 1 (extended), 2 (disabled)`,
      );
  }
}

/**
 * @param instanceCount how many instances of this model run side by side (all groups)
 * @param cores the cores to share; defaults to os.availableParallelism()
 */
export function sessionSettingsFromConfig(
  config: ModelConfig,
  instanceCount: number,
  cores: number = availableParallelism(),
): SessionSettings {
  const mode = intParameter(config, 'execution_mode') ?? 0;
  if (mode !== 0 && mode !== 1) {
    throw TesseraError.invalidArg(
      `model '${config.name}': parameter 'execution_mode' must be 0 (sequential) or 1 (parallel), got '${mode}'`,
    );
  }
  const inter = intParameter(config, 'inter_op_thread_count');
  const arena = boolParameter(config, 'enable_mem_arena');
  const pattern = boolParameter(config, 'enable_mem_pattern');
  return {
    intraOpNumThreads:
      intParameter(config, 'intra_op_thread_count') ?? Math.max(1, Math.floor(cores / Math.max(1, instanceCount))),
    executionMode: mode === 1 ? 'parallel' : 'sequential',
    graphOptimizationLevel: graphLevel(config),
    configEntries: configEntries(config),
    ...(inter !== undefined ? { interOpNumThreads: inter } : {}),
    ...(arena !== undefined ? { enableCpuMemArena: arena } : {}),
    ...(pattern !== undefined ? { enableMemPattern: pattern } : {}),
  };
}
