/** Triton's sequence batcher: slots per instance, backlog, idle reaper, control inputs and implicit state. */
export { SequenceBatchScheduler, type SequenceSchedulerOptions } from './sequence-batch-scheduler.js';
export { sequenceSettingsFromConfig, type SequenceSettings } from './sequence-settings.js';
export { readSequenceFlags, correlationKey, type CorrelationId, type SequenceFlags } from './correlation-id.js';
