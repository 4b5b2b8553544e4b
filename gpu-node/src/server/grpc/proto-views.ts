/**
 * NodeCore results -> response messages for the non-inference RPCs. Pure functions, no grpc-js.
 */
import { create } from '@bufbuild/protobuf';
import {
  InferBatchStatisticsSchema,
  InferStatisticsSchema,
  ModelMetadataResponseSchema,
  ModelMetadataResponse_TensorMetadataSchema,
  ModelStatisticsSchema,
  RepositoryIndexResponse_ModelIndexSchema,
  ServerMetadataResponseSchema,
  StatisticDurationSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type {
  ModelMetadataResponse,
  ModelMetadataResponse_TensorMetadata,
  ModelStatistics as ModelStatisticsProto,
  RepositoryIndexResponse_ModelIndex,
  ServerMetadataResponse,
  StatisticDuration,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type {
  DurationStat,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  TensorMetadata,
} from '../../server-api/index.js';

/** Statistics are uint64 on the wire; a fractional or negative value from the core must not throw in BigInt(). */
function u64(value: number): bigint {
  return Number.isFinite(value) && value > 0 ? BigInt(Math.trunc(value)) : 0n;
}

function duration(stat: DurationStat): StatisticDuration {
  return create(StatisticDurationSchema, { count: u64(stat.count), ns: u64(stat.ns) });
}

export function modelStatisticsToProto(stats: ModelStatistics): ModelStatisticsProto {
  const s = stats.inference_stats;
  return create(ModelStatisticsSchema, {
    name: stats.name,
    version: stats.version,
    lastInference: u64(stats.last_inference),
    inferenceCount: u64(stats.inference_count),
    executionCount: u64(stats.execution_count),
    inferenceStats: create(InferStatisticsSchema, {
      success: duration(s.success),
      fail: duration(s.fail),
      queue: duration(s.queue),
      computeInput: duration(s.compute_input),
      computeInfer: duration(s.compute_infer),
      computeOutput: duration(s.compute_output),
      cacheHit: duration(s.cache_hit),
      cacheMiss: duration(s.cache_miss),
    }),
    batchStats: stats.batch_stats.map((b) =>
      create(InferBatchStatisticsSchema, {
        batchSize: u64(b.batch_size),
        computeInput: duration(b.compute_input),
        computeInfer: duration(b.compute_infer),
        computeOutput: duration(b.compute_output),
      }),
    ),
  });
}

function tensorMetadataToProto(t: TensorMetadata): ModelMetadataResponse_TensorMetadata {
  return create(ModelMetadataResponse_TensorMetadataSchema, {
    name: t.name,
    datatype: t.datatype,
    shape: t.shape.map((d) => BigInt(d)),
  });
}

export function modelMetadataToProto(m: ModelMetadata): ModelMetadataResponse {
  return create(ModelMetadataResponseSchema, {
    name: m.name,
    versions: [...m.versions],
    platform: m.platform,
    inputs: m.inputs.map(tensorMetadataToProto),
    outputs: m.outputs.map(tensorMetadataToProto),
  });
}

export function serverMetadataToProto(m: ServerMetadata): ServerMetadataResponse {
  return create(ServerMetadataResponseSchema, { name: m.name, version: m.version, extensions: [...m.extensions] });
}

export function repositoryIndexEntryToProto(e: RepositoryIndexEntry): RepositoryIndexResponse_ModelIndex {
  return create(RepositoryIndexResponse_ModelIndexSchema, {
    name: e.name,
    version: e.version ?? '',
    state: e.state ?? '',
    reason: e.reason ?? '',
  });
}
