/**
 * An ensemble's steps, checked against the composing models when the ensemble loads. The config
 * reader already checked what the ensemble's own config can tell (shared/src/model-config/
 * validate-ensemble.ts: required fields, tensors written and read, outputs reachable). What needs the
 * composing models' configs is checked here, so a broken ensemble fails to load with a reason instead
 * of failing every request: the model exists and is READY, the maps name real inputs and outputs and
 * cover the required inputs, an ensemble tensor has one data type everywhere, batch sizes fit, and
 * every step can run at all (no circular dependency).
 *
 * A decoupled composing model (0..n responses per request) may only be the last step: nothing else
 * reads its outputs and it writes every ensemble output, so each of its responses is one response of
 * the ensemble, which is then decoupled itself. Anywhere else each of its responses would have to run
 * the rest of the graph once more (Triton's fan-out); that is refused at load, naming the step.
 * An ensemble input declared `optional` may be left out by a request; the steps reading it then run
 * without it, so it may only be mapped to optional inputs of the composing models.
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
  /** The composing model streams its responses (only ever the last step). */
  readonly decoupled: boolean;
}

export interface EnsemblePlan {
  readonly name: string;
  readonly steps: readonly PlannedStep[];
  /** The ensemble's own output names, which the finished steps must have produced. */
  readonly outputs: readonly string[];
  /** Ensemble inputs a request may leave out. */
  readonly optionalInputs: ReadonlySet<string>;
  /** The decoupled last step whose responses are the ensemble's, if any: the ensemble is then decoupled. */
  readonly streamingStep: PlannedStep | undefined;
}

/** Builds the plan, or throws INVALID_ARG listing every problem found. */
export function planEnsemble(config: ModelConfig, composing: ComposingModels): EnsemblePlan {
  const scheduling = config.schedulingChoice;
  if (scheduling.case !== 'ensembleScheduling') {
    throw TesseraError.invalidArg(`model '${config.name}' is not an ensemble`);
  }
  const e = config.name;
  const problems: string[] = [];
  const steps = scheduling.value.step.map((step, index) => plannedStep(step, index, isDecoupledStep(step, composing)));
  const optionalInputs = new Set(config.input.filter((input) => input.optional).map((input) => input.name));
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
    for (const [name, tensor] of step.inputs) {
      if (optionalInputs.has(tensor) && inputs.get(name)?.optional === false) {
        problems.push(`${what} maps the optional ensemble input '${tensor}' to '${name}', which model '${step.modelName}' requires`);
      }
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
  problems.push(...decoupledStepProblems(config, steps));
  const stuck = unreachableSteps(config, steps);
  if (stuck.length > 0) {
    problems.push(
      `${stuck.map((s) => `step ${s.index} ('${s.modelName}')`).join(', ')} can never run: ` +
        'their inputs depend on each other (circular dependency) or on tensors nothing writes',
    );
  }
  if (problems.length > 0) throw TesseraError.invalidArg(`ensemble '${e}': ${problems.join('; ')}`);
  return {
    name: e,
    steps,
    outputs: config.output.map((output) => output.name),
    optionalInputs,
    streamingStep: steps.find((step) => step.decoupled),
  };
}

/** A composing model that is not there is reported by the config check; here it counts as not decoupled. */
function isDecoupledStep(step: ModelEnsembling_Step, composing: ComposingModels): boolean {
  try {
    return composing.decoupled(step.modelName, step.modelVersion > 0n ? String(step.modelVersion) : undefined);
  } catch {
    return false;
  }
}

/** A decoupled step must be the only one, read by no step, and write every ensemble output. */
function decoupledStepProblems(config: ModelConfig, steps: readonly PlannedStep[]): string[] {
  const decoupled = steps.filter((step) => step.decoupled);
  const named = (step: PlannedStep) => `step ${step.index} ('${step.modelName}')`;
  const problems: string[] = [];
  if (decoupled.length > 1) {
    problems.push(`${decoupled.map(named).join(', ')} are decoupled: an ensemble may contain one decoupled model, as its last step`);
  }
  for (const step of decoupled) {
    const written = new Set(step.outputs.map(([, tensor]) => tensor));
    const readers = steps.filter((other) => other !== step && other.inputs.some(([, tensor]) => written.has(tensor)));
    if (readers.length > 0) {
      problems.push(
        `${named(step)} is a decoupled model, which Tessera supports only as the last step of an ensemble, ` +
          `but ${readers.map(named).join(', ')} read(s) its outputs`,
      );
    }
    const others = config.output.map((output) => output.name).filter((name) => !written.has(name));
    if (others.length > 0) {
      problems.push(
        `${named(step)} is a decoupled model, so it must write every output of the ensemble, ` +
          `but ${others.map((name) => `'${name}'`).join(', ')} come(s) from other steps`,
      );
    }
  }
  return problems;
}

function plannedStep(step: ModelEnsembling_Step, index: number, decoupled: boolean): PlannedStep {
  return {
    index,
    modelName: step.modelName,
    // -1 (and the unset 0) mean "the latest READY version".
    modelVersion: step.modelVersion > 0n ? String(step.modelVersion) : undefined,
    // Sorted, so requests and messages do not depend on the map's parse order.
    inputs: Object.entries(step.inputMap).sort(([a], [b]) => a.localeCompare(b)),
    outputs: Object.entries(step.outputMap).sort(([a], [b]) => a.localeCompare(b)),
    decoupled,
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
