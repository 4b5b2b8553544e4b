/**
 * validateModelConfig: Triton's load-time rules (section 3.4 of the protocol reference) on a completed
 * and normalized config. Every finding names the file, the field and the reason; by default the first
 * one is thrown (as Triton does), with `allErrors` all of them.
 */
import { ModelInstanceGroup_Kind } from '../gen/model_config_pb.js';
import type { ModelConfig } from '../gen/model_config_pb.js';
import { modelNameProblem } from '../names/index.js';
import { isEnsemble, PLATFORM_BACKENDS } from './backend-names.js';
import { IssueList, issuesToError } from './config-issues.js';
import type { ConfigIssue } from './config-issues.js';
import type { ModelIoMetadata } from './model-io-metadata.js';
import { validateEnsemble } from './validate-ensemble.js';
import { validateIo } from './validate-io.js';
import { validateAgainstModelIo } from './validate-model-io.js';
import { validateScheduling } from './validate-scheduling.js';
import { validateStreamInterval } from './stream-interval.js';

export interface ValidateOptions {
  /** Named in every error, e.g. `models/simple/config.pbtxt`. */
  readonly fileName: string;
  /** The GPU ids this node can use; none means a CPU-only node (the default). */
  readonly gpus?: readonly number[];
  /** Backends this node can run; when given, any other backend is rejected as Triton does for a missing library. */
  readonly availableBackends?: readonly string[];
  /** The model file's inputs and outputs; when given, the config must agree with them. */
  readonly io?: ModelIoMetadata;
  /** Report every finding instead of the first. */
  readonly allErrors?: boolean;
}

/** Every rule violation, in rule order; empty when the config is valid. */
export function collectModelConfigIssues(config: ModelConfig, options: Omit<ValidateOptions, 'fileName' | 'allErrors'> = {}): ConfigIssue[] {
  const issues = new IssueList();
  const m = config.name;
  // The config's name is a model name like any other (shared/src/names); an empty one is filled in before.
  const nameProblem = m === '' ? undefined : modelNameProblem(m);
  if (nameProblem !== undefined) issues.add('name', nameProblem);
  if (config.maxBatchSize < 0) issues.add('max_batch_size', `'max_batch_size' must be non-negative value for ${m}`);
  if (config.platform === '' && config.backend === '') {
    issues.add('platform', `must specify 'platform' or 'backend' for '${m}'`);
  }
  if (isEnsemble(config)) {
    validateEnsemble(config, issues);
  } else {
    validateBackend(config, options, issues);
    if (config.schedulingChoice.case === 'ensembleScheduling') {
      issues.add('ensemble_scheduling', `ensemble scheduling cannot be set for model '${m}' whose platform is not ensemble`);
    }
    validateInstanceGroups(config, options.gpus ?? [], issues);
  }
  validateIo(config, issues);
  validateScheduling(config, issues);
  validateMetrics(config, issues);
  validateWarmup(config, issues);
  validateStreamInterval(config, issues);
  if (options.io !== undefined && !isEnsemble(config)) validateAgainstModelIo(config, options.io, issues);
  return issues.issues;
}

/** Throws INVALID_ARG naming the file, field and reason when the config breaks a rule. */
export function validateModelConfig(config: ModelConfig, options: ValidateOptions): void {
  const issues = collectModelConfigIssues(config, options);
  if (issues.length > 0) throw issuesToError(options.fileName, issues, options.allErrors ?? false);
}

function validateBackend(config: ModelConfig, options: Omit<ValidateOptions, 'fileName'>, issues: IssueList): void {
  const runtime = config.runtime;
  // The runtime names a library inside the backend's directory; a path must not climb out of it.
  if (runtime.startsWith('/') || runtime.split(/[\\/]/).includes('..')) {
    issues.add('runtime', `backend library name '${runtime}' escapes backend directory`);
  }
  const backend = config.backend;
  if (options.availableBackends !== undefined && backend !== '' && !options.availableBackends.includes(backend)) {
    issues.add('backend', `unable to find backend library for backend '${backend}', try specifying runtime on the model configuration.`);
  }
  // An empty backend with a known platform is fine (auto-complete would fill it); anything else must pair up.
  const platformBackend = PLATFORM_BACKENDS[config.platform];
  if (config.platform !== '' && (platformBackend === undefined || (backend !== '' && backend !== platformBackend))) {
    issues.add('platform', `unexpected 'platform' and 'backend' pair, got:${config.platform}, ${backend}`);
  }
}

function validateInstanceGroups(config: ModelConfig, gpus: readonly number[], issues: IssueList): void {
  const m = config.name;
  config.instanceGroup.forEach((group, index) => {
    const field = `instance_group[${index}]`;
    const name = group.name;
    if (group.count < 1) issues.add(`${field}.count`, `instance group ${name} of model ${m} has invalid count value ${group.count}`);
    if ((group.kind === ModelInstanceGroup_Kind.CPU || group.kind === ModelInstanceGroup_Kind.MODEL) && group.gpus.length > 0) {
      issues.add(`${field}.gpus`, `instance group ${name} of model ${m} has kind KIND_${ModelInstanceGroup_Kind[group.kind]} but specifies one or more GPUs`);
    }
    if (group.kind === ModelInstanceGroup_Kind.GPU) {
      if (gpus.length === 0) issues.add(`${field}.kind`, `instance group ${name} of model ${m} has kind KIND_GPU but no GPUs are available`);
      for (const gpu of group.gpus) {
        if (gpus.length > 0 && !gpus.includes(gpu)) {
          issues.add(`${field}.gpus`, `instance group ${name} of model ${m} specifies invalid or unsupported gpu id ${gpu}. GPUs available: ${gpus.join(' ')}`);
        }
      }
    }
    if (group.profile.length > 0 && config.platform !== 'tensorrt_plan') {
      issues.add(`${field}.profile`, `instance group ${name} of model ${m} specifies 'profile', which is only supported for the tensorrt_plan platform`);
    }
  });
}

function validateMetrics(config: ModelConfig, issues: IssueList): void {
  config.modelMetrics?.metricControl.forEach((control, index) => {
    const field = `model_metrics.metric_control[${index}]`;
    if (control.metricIdentifier === undefined) {
      issues.add(field, `metric control must specify 'metric_identifier'`);
    } else if (control.metricIdentifier.family === '') {
      issues.add(`${field}.metric_identifier.family`, `metric identifier must specify non-empty 'family'`);
    }
    // A family that is not customizable only earns a warning in Triton; the model still loads.
    const options = control.metricOptions;
    if (options.case === undefined) issues.add(field, `metric control must specify 'histogram_options'`);
    else if (options.value.buckets.length === 0) {
      issues.add(`${field}.histogram_options.buckets`, `histogram options must specify non-empty 'buckets'`);
    }
  });
}

function validateWarmup(config: ModelConfig, issues: IssueList): void {
  config.modelWarmup.forEach((warmup, index) => {
    const field = `model_warmup[${index}]`;
    const limit = Math.max(config.maxBatchSize, 1);
    if (warmup.batchSize < 1 || warmup.batchSize > limit) {
      issues.add(`${field}.batch_size`, `model warmup setting '${warmup.name}' must have batch_size in range [1, ${limit}] for ${config.name}`);
    }
  });
}
