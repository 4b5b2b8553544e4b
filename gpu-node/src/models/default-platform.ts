/**
 * The real ModelPlatform: the shared config reader (parse → auto-complete → normalize → validate) and a
 * backend registry. Auto-complete needs the backend to describe a model file before the config is
 * complete, so the config is first parsed raw to learn its backend, then read for good with the
 * backend's description of the latest version's model file.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { ModelInstanceGroup_Kind, type ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import {
  autoCompleteConfig,
  deepFreeze,
  defaultModelFilename,
  fillBackendFields,
  isEnsemble,
  modelConfigFromJson,
  normalizeModelConfig,
  parseModelConfigText,
  readModelConfig,
  resolveBackendName,
  validateModelConfig,
} from '../../../shared/src/model-config/index.js';
import type { ModelIoMetadata } from '../../../shared/src/model-config/model-io-metadata.js';
import type { Backend } from '../backends/backend.js';
import { nvidiaSmiGpus, type GpuProbe } from '../backends/gpu-probe.js';
import { expandInstanceGroups } from '../backends/instance-specs.js';
import { ENSEMBLE_BACKEND } from '../ensemble/ensemble-backend.js';
import type { ModelConfigSource, ModelPlatform, ResolvedModel } from './model-platform.js';

export interface ModelPlatformOptions {
  /** The backend registered under a name, or undefined. */
  readonly backends: (name: string) => Backend | undefined;
  /** Names of every registered backend, so configs naming another one fail validation. Optional. */
  readonly backendNames?: readonly string[];
  /** Visible GPU ordinals. Default: `nvidia-smi -L`, cached. */
  readonly visibleGpus?: GpuProbe;
}

export function createModelPlatform(options: ModelPlatformOptions): ModelPlatform {
  const probe = options.visibleGpus ?? nvidiaSmiGpus;
  return {
    async resolveModel(source: ModelConfigSource): Promise<ResolvedModel> {
      if (source.text === undefined && source.strict) {
        throw TesseraError.invalidArg(
          `${source.configPath} not found: a model configuration is required when auto-complete is disabled`,
        );
      }
      const latest = source.versions[source.versions.length - 1];
      const modelFiles = latest === undefined ? [] : await readdir(join(source.modelPath, String(latest))).catch(() => []);
      const raw = parseRaw(source);
      if (raw.name === '') raw.name = source.modelName;
      fillBackendFields(raw, { modelName: source.modelName, modelFiles });
      const backendName = resolveBackendName(raw);
      // An ensemble has no backend of its own ('' here); its steps run on the composing models.
      const backend = isEnsemble(raw) ? ENSEMBLE_BACKEND : options.backends(backendName);
      if (!backend) {
        throw TesseraError.invalidArg(
          `unable to find backend library for backend '${backendName}', try specifying runtime on the model configuration.`,
        );
      }
      let io: ModelIoMetadata | undefined;
      if (!source.strict && latest !== undefined && backend.describe) {
        const versionDir = join(source.modelPath, String(latest));
        const filename = raw.defaultModelFilename || defaultModelFilename(raw) || backend.defaultModelFilename;
        io = await backend.describe({
          name: source.modelName,
          version: latest,
          modelDir: source.modelPath,
          versionDir,
          modelPath: join(versionDir, filename),
          config: raw,
        });
      }
      const gpus = probe();
      // Read before normalization resolves KIND_AUTO: group i of the raw config is group i after it.
      const autoIndexes = raw.instanceGroup.length === 0 ? [0] : raw.instanceGroup.flatMap((g, i) => (g.kind === ModelInstanceGroup_Kind.AUTO ? [i] : []));
      const common = {
        strict: source.strict,
        modelName: source.modelName,
        modelFiles,
        gpus,
        ...(io === undefined ? {} : { io }),
        ...(options.backendNames === undefined ? {} : { availableBackends: options.backendNames }),
      };
      const config =
        source.format === 'pbtxt'
          ? readModelConfig({ text: source.text ?? '', fileName: source.configPath, ...common })
          : readJsonConfig(raw, source, common);
      if (config.name !== source.modelName) {
        throw TesseraError.invalidArg(
          `${source.configPath}: model name '${config.name}' in configuration does not match the model directory '${source.modelName}'`,
        );
      }
      const autoGroups = autoIndexes.flatMap((i) => (config.instanceGroup[i] === undefined ? [] : [config.instanceGroup[i].name]));
      return { config, backend, autoGroups };
    },
    expandInstanceGroups: (config, autoGroups) =>
      isEnsemble(config) ? [] : expandInstanceGroups(config, { visibleGpus: probe, ...(autoGroups === undefined ? {} : { autoGroups }) }),
  };
}

function parseRaw(source: ModelConfigSource): ModelConfig {
  if (source.format === 'json') return modelConfigFromJson(source.text ?? '{}');
  return parseModelConfigText(source.text ?? '', source.configPath);
}

/** readModelConfig's pipeline for the load API's JSON config (which has no pbtxt text). */
function readJsonConfig(
  parsed: ModelConfig,
  source: ModelConfigSource,
  options: {
    strict: boolean;
    modelName: string;
    modelFiles: readonly string[];
    gpus: readonly number[];
    io?: ModelIoMetadata;
    availableBackends?: readonly string[];
  },
): ModelConfig {
  const completed = autoCompleteConfig(parsed, options.io, options);
  const normalized = normalizeModelConfig(completed, { gpus: options.gpus });
  validateModelConfig(normalized, { fileName: `${source.modelName} (load request config)`, ...options });
  return deepFreeze(normalized) as ModelConfig;
}
