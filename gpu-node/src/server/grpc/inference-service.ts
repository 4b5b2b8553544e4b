/**
 * The `inference.GRPCInferenceService` implementation: every RPC translated onto NodeCore. Shared
 * memory, trace and log RPCs answer UNIMPLEMENTED: Tessera has no shared-memory transport, and trace
 * and log settings are not part of its node.
 */
import { create } from '@bufbuild/protobuf';
import type { UntypedServiceImplementation, handleUnaryCall } from '@grpc/grpc-js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  ModelConfigResponseSchema,
  ModelReadyResponseSchema,
  ModelStatisticsResponseSchema,
  RepositoryIndexResponseSchema,
  RepositoryModelLoadResponseSchema,
  RepositoryModelUnloadResponseSchema,
  ServerLiveResponseSchema,
  ServerReadyResponseSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type {
  GRPCInferenceService,
  ModelConfigRequest,
  ModelConfigResponse,
  ModelMetadataRequest,
  ModelMetadataResponse,
  ModelReadyRequest,
  ModelReadyResponse,
  ModelStatisticsRequest,
  ModelStatisticsResponse,
  RepositoryIndexRequest,
  RepositoryIndexResponse,
  RepositoryModelLoadRequest,
  RepositoryModelLoadResponse,
  RepositoryModelUnloadRequest,
  RepositoryModelUnloadResponse,
  ServerLiveResponse,
  ServerMetadataResponse,
  ServerReadyResponse,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import type { NodeCore } from '../../server-api/index.js';
import { modelInferHandler, modelStreamInferHandler } from './infer-handlers.js';
import type { StreamOptions } from './infer-handlers.js';
import {
  modelMetadataToProto,
  modelStatisticsToProto,
  repositoryIndexEntryToProto,
  serverMetadataToProto,
} from './proto-views.js';
import { loadOptionsFromProto, unloadOptionsFromProto } from './repository-params.js';
import { unary } from './unary.js';

/** Empty version on the wire means "latest ready", which the core spells as undefined. */
function version(v: string): string | undefined {
  return v === '' ? undefined : v;
}

const UNIMPLEMENTED_RPCS: Readonly<Record<string, string>> = {
  systemSharedMemoryStatus: 'system shared memory is not supported by Tessera; send tensors in the request',
  systemSharedMemoryRegister: 'system shared memory is not supported by Tessera; send tensors in the request',
  systemSharedMemoryUnregister: 'system shared memory is not supported by Tessera; send tensors in the request',
  cudaSharedMemoryStatus: 'CUDA shared memory is not supported by Tessera; send tensors in the request',
  cudaSharedMemoryRegister: 'CUDA shared memory is not supported by Tessera; send tensors in the request',
  cudaSharedMemoryUnregister: 'CUDA shared memory is not supported by Tessera; send tensors in the request',
  traceSetting: 'the trace extension is not supported by Tessera',
  logSettings: 'the logging extension is not supported by Tessera; configure logging at node start',
};

function unimplemented(message: string): handleUnaryCall<unknown, never> {
  return unary<unknown, never>(() => {
    throw TesseraError.unsupported(message);
  });
}

type MethodName = keyof (typeof GRPCInferenceService)['method'];

export function inferenceServiceImplementation(
  core: NodeCore,
  streamOptions: StreamOptions,
): UntypedServiceImplementation & Record<MethodName, unknown> {
  const handlers = {
    serverLive: unary<unknown, ServerLiveResponse>(() => create(ServerLiveResponseSchema, { live: core.isLive() })),
    serverReady: unary<unknown, ServerReadyResponse>(() =>
      create(ServerReadyResponseSchema, { ready: core.isReady() }),
    ),
    modelReady: unary<ModelReadyRequest, ModelReadyResponse>((req) =>
      create(ModelReadyResponseSchema, { ready: core.isModelReady(req.name, version(req.version)) }),
    ),
    serverMetadata: unary<unknown, ServerMetadataResponse>(() => serverMetadataToProto(core.serverMetadata())),
    modelMetadata: unary<ModelMetadataRequest, ModelMetadataResponse>((req) =>
      modelMetadataToProto(core.modelMetadata(req.name, version(req.version))),
    ),
    modelInfer: modelInferHandler(core),
    modelStreamInfer: modelStreamInferHandler(core, streamOptions),
    modelConfig: unary<ModelConfigRequest, ModelConfigResponse>((req) =>
      create(ModelConfigResponseSchema, { config: core.modelConfig(req.name, version(req.version)) }),
    ),
    modelStatistics: unary<ModelStatisticsRequest, ModelStatisticsResponse>((req) =>
      create(ModelStatisticsResponseSchema, {
        modelStats: core
          .statistics(req.name === '' ? undefined : req.name, version(req.version))
          .map(modelStatisticsToProto),
      }),
    ),
    repositoryIndex: unary<RepositoryIndexRequest, RepositoryIndexResponse>(async (req) => {
      refuseNamedRepository(req.repositoryName);
      return create(RepositoryIndexResponseSchema, {
        models: (await core.repositoryIndex(req.ready)).map(repositoryIndexEntryToProto),
      });
    }),
    repositoryModelLoad: unary<RepositoryModelLoadRequest, RepositoryModelLoadResponse>(async (req) => {
      refuseNamedRepository(req.repositoryName);
      await core.loadModel(req.modelName, loadOptionsFromProto(req.parameters));
      return create(RepositoryModelLoadResponseSchema);
    }),
    repositoryModelUnload: unary<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>(async (req) => {
      refuseNamedRepository(req.repositoryName);
      await core.unloadModel(req.modelName, unloadOptionsFromProto(req.parameters));
      return create(RepositoryModelUnloadResponseSchema);
    }),
  };
  const stubs = Object.fromEntries(
    Object.entries(UNIMPLEMENTED_RPCS).map(([name, message]) => [name, unimplemented(message)]),
  );
  return { ...stubs, ...handlers } as UntypedServiceImplementation & Record<MethodName, unknown>;
}

/** One repository per node: naming one is refused as Triton does (its HTTP side answers 501 the same way). */
function refuseNamedRepository(repositoryName: string): void {
  if (repositoryName !== '') {
    throw TesseraError.unsupported("'repository_name' specification is not supported");
  }
}
