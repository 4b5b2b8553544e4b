/**
 * Rules for ensembles that can be checked from the ensemble's own config (section 3.4, "Ensembles"):
 * required fields, and the tensor graph of its steps. Checks that need the composing models' configs
 * (dtype/shape agreement, batch sizes, decoupled producers) belong to the model manager.
 */
import { modelNameProblem } from '../names/index.js';
import type { ModelConfig, ModelEnsembling } from '../gen/model_config_pb.js';
import type { IssueList } from './config-issues.js';

export function validateEnsemble(config: ModelConfig, issues: IssueList): void {
  const m = config.name;
  if (config.backend !== '') {
    issues.add('backend', `Ensemble model '${m}' must have platform type 'ensemble' and empty backend type`);
  }
  const scheduling = config.schedulingChoice;
  if (scheduling.case !== 'ensembleScheduling') {
    issues.add('ensemble_scheduling', `ensemble scheduling must be set for ensemble ${m} whose platform is ensemble`);
    return;
  }
  if (config.instanceGroup.length > 0) issues.add('instance_group', `instance group should not be specified for ensemble '${m}'`);
  if (config.optimization !== undefined) issues.add('optimization', `optimization should not be specified for ensemble '${m}'`);
  if (config.modelWarmup.length > 0) issues.add('model_warmup', `model_warmup can not be specified for ensemble '${m}'`);
  validateSteps(config, scheduling.value, issues);
}

function validateSteps(config: ModelConfig, ensemble: ModelEnsembling, issues: IssueList): void {
  const m = config.name;
  if (ensemble.step.length === 0) {
    issues.add('ensemble_scheduling.step', `must specify 'step' for ensemble '${m}'`);
    return;
  }
  const producers = new Map<string, number>(); // ensemble tensor → how many output maps write it
  const consumed = new Set<string>();
  let complete = true;
  ensemble.step.forEach((step, index) => {
    const field = `ensemble_scheduling.step[${index}]`;
    const number = index; // Triton counts steps from 0 in its messages
    const missing = (name: string) => {
      issues.add(`${field}.${name}`, `must specify '${name}' in step ${number} of ensemble '${m}'`);
      complete = false;
    };
    if (step.modelName === '') missing('model_name');
    else {
      // A step names a model the node looks up: the same rule as every model name (shared/src/names).
      const problem = modelNameProblem(step.modelName);
      if (problem !== undefined) issues.add(`${field}.model_name`, `${problem} (step ${number} of ensemble '${m}')`);
    }
    if (Object.keys(step.inputMap).length === 0) missing('input_map');
    if (Object.keys(step.outputMap).length === 0) missing('output_map');
    Object.values(step.inputMap).forEach((tensor) => consumed.add(tensor));
    for (const tensor of Object.values(step.outputMap)) producers.set(tensor, (producers.get(tensor) ?? 0) + 1);
  });
  if (!complete) return;

  for (const [tensor, count] of producers) {
    if (count > 1) {
      issues.add('ensemble_scheduling.step', `ensemble tensor '${tensor}' can appear in an output map only once for ensemble '${m}'`);
    }
  }
  const inputs = new Set(config.input.map((tensor) => tensor.name));
  const outputs = new Set(config.output.map((tensor) => tensor.name));
  for (const input of inputs) {
    if (!consumed.has(input)) issues.add('input', `ensemble input '${input}' for ensemble ${m}' is not used`);
  }
  for (const output of outputs) {
    if (!producers.has(output)) issues.add('output', `output '${output}' for ensemble '${m}' is not written`);
  }
  // Intermediate tensors must be both written and read; an ensemble input or output counts as one end.
  const tensors = new Set([...producers.keys(), ...consumed]);
  for (const tensor of tensors) {
    const written = producers.has(tensor) || inputs.has(tensor);
    const read = consumed.has(tensor) || outputs.has(tensor);
    if (!written) {
      // Read by a step, yet neither an ensemble input nor any step's output: that step could never run.
      issues.add(
        'ensemble_scheduling.step',
        `ensemble tensor '${tensor}' is read by a step but is neither an ensemble input nor written by any step in ensemble '${m}'`,
      );
    } else if (!read) {
      issues.add('ensemble_scheduling.step', `ensemble tensor '${tensor}' is unused in ensemble '${m}'`);
    }
  }
  validateReachability(config, ensemble, inputs, issues);
}

/** Every ensemble output must be computable from the ensemble inputs by running steps in some order. */
function validateReachability(config: ModelConfig, ensemble: ModelEnsembling, inputs: Set<string>, issues: IssueList): void {
  const available = new Set(inputs);
  const pending = [...ensemble.step];
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (let i = pending.length - 1; i >= 0; i--) {
      const step = pending[i]!;
      if (Object.values(step.inputMap).every((tensor) => available.has(tensor))) {
        Object.values(step.outputMap).forEach((tensor) => available.add(tensor));
        pending.splice(i, 1);
        progressed = true;
      }
    }
  }
  for (const output of config.output) {
    if (!available.has(output.name)) {
      issues.add('output', `output '${output.name}' for ensemble '${config.name}' is not written: its depending tensors are not connected to the ensemble inputs`);
    }
  }
}
