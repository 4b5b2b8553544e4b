/** Registers the ensemble scheduler for `ensemble_scheduling` configs, its steps running on `composing`. */
import type { SchedulerRegistry } from '../scheduler/scheduler-registry.js';
import type { ComposingModels } from './composing-models.js';
import { createEnsembleScheduler } from './ensemble-scheduler.js';

export function registerEnsembleScheduler(registry: SchedulerRegistry, composing: ComposingModels): SchedulerRegistry {
  return registry.register('ensembleScheduling', (config) => createEnsembleScheduler(config, composing));
}
