/**
 * What the model machinery needs from the config reader and the backend registry, as one port. The
 * node wires the real one (`default-platform.ts`); tests inject fakes, so lifecycle tests need neither
 * a pbtxt parser nor onnxruntime.
 */
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { Backend, InstanceSpec } from '../backends/backend.js';

export interface ModelConfigSource {
  readonly modelName: string;
  /** `<repository>/<model>` (or the temporary folder of a load with file overrides). */
  readonly modelPath: string;
  /** The file the text came from, for error messages. */
  readonly configPath: string;
  /** config.pbtxt text, or the load API's ModelConfig JSON; undefined when the folder has no config. */
  readonly text: string | undefined;
  readonly format: 'pbtxt' | 'json';
  /** True disables auto-complete (Triton's --disable-auto-complete-config / --strict-model-config). */
  readonly strict: boolean;
  /** Version folders present, ascending: auto-complete describes a model file of one of them. */
  readonly versions: readonly number[];
}

export interface ResolvedModel {
  /** Normalized, validated and frozen. */
  readonly config: ModelConfig;
  readonly backend: Backend;
  /**
   * Groups the config left to KIND_AUTO (or left out): normalization resolves them to KIND_GPU or
   * KIND_CPU as Triton does, yet their GPU instances may still fall back to the CPU.
   */
  readonly autoGroups?: readonly string[];
}

export interface ModelPlatform {
  /** Parses, auto-completes, normalizes and validates a config and picks its backend; throws TesseraError. */
  resolveModel(source: ModelConfigSource): Promise<ResolvedModel>;
  /** The instances to create, Triton's instance_group expansion; `autoGroups` from resolveModel. */
  expandInstanceGroups(config: ModelConfig, autoGroups?: readonly string[]): readonly InstanceSpec[];
}
