/**
 * The single place that decides which scheduler a model version gets, from its config (Triton's
 * scheduling_choice): dynamic_batching gets Triton's dynamic batcher; no scheduling choice gets the
 * default scheduler (one request per execution, no queue policy). sequence_batching is served by the
 * default scheduler until the sequence batcher lands as a new arm of this switch. Ensembles have no instances of
 * their own and need their own scheduler, so they are refused.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance } from '../backends/backend.js';
import { DefaultScheduler } from './default-scheduler.js';
import { DynamicBatchScheduler } from './dynamic/index.js';
import type { ExecutionObserver, Scheduler } from './scheduler.js';

export function createScheduler(
  config: ModelConfig,
  instances: readonly BackendInstance[],
  observer?: ExecutionObserver,
): Scheduler {
  const choice = config.schedulingChoice.case;
  switch (choice) {
    case 'dynamicBatching':
      return new DynamicBatchScheduler(config, instances, observer);
    case undefined:
    case 'sequenceBatching': // seam: SequenceBatchScheduler
      return new DefaultScheduler(instances, observer);
    case 'ensembleScheduling':
      throw TesseraError.unsupported(`ensemble scheduling is not supported yet (model '${config.name}')`);
  }
}
