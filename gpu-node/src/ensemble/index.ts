/** Ensembles (`platform: "ensemble"`): their plan, scheduler, load order and the port to the composing models. */
export type { ComposingModels } from './composing-models.js';
export { ENSEMBLE_BACKEND } from './ensemble-backend.js';
export { planEnsemble, type EnsemblePlan, type PlannedStep } from './ensemble-plan.js';
export { createEnsembleScheduler, EnsembleScheduler } from './ensemble-scheduler.js';
export { ensembleDependencies, loadWaves } from './load-order.js';
export { registerEnsembleScheduler } from './ensemble-registration.js';
