/**
 * An ensemble's steps, checked against the composing models when the ensemble loads. The config
 * reader already checked what the ensemble's own config can tell (shared/src/model-config/
 * validate-ensemble.ts: required fields, tensors written and read, outputs reachable). What needs the
 * composing models' configs is checked here, so a broken ensemble fails to load with a reason instead
 * of failing every request: the model exists and is READY, the maps name real inputs and outputs and
 * cover the required inputs, an ensemble tensor has one data type everywhere, batch sizes fit, and
 * every step can run at all (no circular dependency).
 */
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import { DataType, type ModelConfig, type ModelEnsembling_Step } from '../../../shared/src/gen/model_config_pb.js';
import type { ComposingModels } from './composing-models.js';

export interface PlannedStep {
  /** Position in `ensemble_scheduling.step`, counted from 0 as Triton's messages do. */
  readonly index: number;
  readonly modelName: string;
  /** The version asked for; undefined is "latest" (-1). */
  readonly modelVersion: string | undefined;
  /** [composing model input, ensemble tensor] */
  readonly inputs: readonly (readonly [string, string])[];
  /** [composing model output, ensemble tensor] */
  readonly outputs: readonly (readonly [string, string])[];
}

export interface EnsemblePlan {
  readonly name: string;
  readonly steps: readonly PlannedStep[];
  /** The ensemble's own output names, which the finished steps must have produced. */
  readonly outputs: readonly string[];
}

/** Builds the plan, or throws INVALID_ARG listing every problem found. */
export function planEnsemble(config: ModelConfig, composing: ComposingModels): EnsemblePlan {
  const scheduling = config.schedulingChoice;
  if (scheduling.case !== 'ensembleScheduling') {
    throw TesseraError.invalidArg(`model '${config.name}' is not an ensemble`);
  }
  const e = config.name;
  const problems: string[] = [];
  const steps = scheduling.value.step.map((step, index) => plannedStep(step, index));
  // Every ensemble tensor's data type, as first learned from the ensemble config or a composing model.
  const types = new Map<string, { type: DataType; from: string }>();
  const agree = (tensor: string, type: DataType, from: string) => {
    const known = types.get(tensor);
    if (!known) types.set(tensor, { type, from });
    else if (known.type !== type) {
      problems.push(
        `ensemble tensor '${tensor}' has inconsistent data type: ${DataType[known.type]} is inferred from ${known.from} ` +
          `while ${DataType[type]} is inferred from ${from}`,
      );
    }
  };
  for (const input of config.input) agree(input.name, input.dataType, `ensemble '${e}'`);
  for (const output of config.output) agree(output.name, output.dataType, `ensemble '${e}'`);

  for (const step of steps) {
    const what = `step ${step.index} ('${step.modelName}')`;
    let composed: ModelConfig;
    try {
      composed = composing.config(step.modelName, step.modelVersion);
    } catch (error) {
      const version = step.modelVersion === undefined ? '' : ` version ${step.modelVersion}`;
      problems.push(`${what} needs model '${step.modelName}'${version}, which is not available: ${toTesseraError(error).message}`);
      continue;
    }
    if (config.maxBatchSize > composed.maxBatchSize) {
      problems.push(
        `ensemble ${e} allows maximum batch size ${config.maxBatchSize}, but it contains model ${step.modelName} ` +
          `which only allows maximum batch size to be ${composed.maxBatchSize}`,
      );
    }
    const inputs = new Map(composed.input.map((input) => [input.name, input]));
    const outputs = new Map(composed.output.map((output) => [output.name, output]));
    for (const [name, tensor] of step.inputs) {
      const input = inputs.get(name);
      if (!input) problems.push(`${what} maps '${name}', which is not an input of model '${step.modelName}'`);
      else agree(tensor, input.dataType, `input '${name}' of model '${step.modelName}'`);
    }
    const mapped = new Set(step.inputs.map(([name]) => name));
    for (const input of composed.input) {
      if (!input.optional && !mapped.has(input.name)) {
        problems.push(`${what} does not map the required input '${input.name}' of model '${step.modelName}'`);
      }
    }
    for (const [name, tensor] of step.outputs) {
      const output = outputs.get(name);
      if (!output) problems.push(`${what} maps '${name}', which is not an output of model '${step.modelName}'`);
      else agree(tensor, output.dataType, `output '${name}' of model '${step.modelName}'`);
    }
  }
  const stuck = unreachableSteps(config, steps);
  if (stuck.length > 0) {
    problems.push(
      `${stuck.map((s) => `step ${s.index} ('${s.modelName}')`).join(', ')} can never run: ` +
        'their inputs depend on each other (circular dependency) or on tensors nothing writes',
    );
  }
  if (problems.length > 0) throw TesseraError.invalidArg(`ensemble '${e}': ${problems.join('; ')}`);
  return { name: e, steps, outputs: config.output.map((output) => output.name) };
}

function plannedStep(step: ModelEnsembling_Step, index: number): PlannedStep {
  return {
    index,
    modelName: step.modelName,
    // -1 (and the unset 0) mean "the latest READY version".
    modelVersion: step.modelVersion > 0n ? String(step.modelVersion) : undefined,
    // Sorted, so requests and messages do not depend on the map's parse order.
    inputs: Object.entries(step.inputMap).sort(([a], [b]) => a.localeCompare(b)),
    outputs: Object.entries(step.outputMap).sort(([a], [b]) => a.localeCompare(b)),
  };
}

/** Steps that could never start, because running every step that can does not produce their inputs. */
function unreachableSteps(config: ModelConfig, steps: readonly PlannedStep[]): PlannedStep[] {
  const available = new Set(config.input.map((input) => input.name));
  const pending = [...steps];
  for (let progressed = true; progressed; ) {
    progressed = false;
    for (let i = pending.length - 1; i >= 0; i--) {
      const step = pending[i] as PlannedStep;
      if (step.inputs.every(([, tensor]) => available.has(tensor))) {
        step.outputs.forEach(([, tensor]) => available.add(tensor));
        pending.splice(i, 1);
        progressed = true;
      }
    }
  }
  return pending.sort((a, b) => a.index - b.index);
}
