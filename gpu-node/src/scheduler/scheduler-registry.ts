/**
 * Schedulers that live outside scheduler/, by the config's scheduling_choice they serve. The
 * repository manager registers the ensemble scheduler (ensemble/ensemble-registration.ts), so
 * scheduler/ never imports ensemble/; create-scheduler.ts looks a choice up here when it has none of its own.
 */
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance } from '../backends/backend.js';
import type { Scheduler } from './scheduler.js';

export type SchedulingChoice = NonNullable<ModelConfig['schedulingChoice']['case']>;

export type SchedulerFactory = (config: ModelConfig, instances: readonly BackendInstance[]) => Scheduler;

export class SchedulerRegistry {
  private readonly factories = new Map<SchedulingChoice, SchedulerFactory>();

  register(choice: SchedulingChoice, factory: SchedulerFactory): this {
    this.factories.set(choice, factory);
    return this;
  }

  get(choice: SchedulingChoice): SchedulerFactory | undefined {
    return this.factories.get(choice);
  }
}
