/**
 * The `inference.GRPCInferenceService` implementation: every RPC translated onto NodeCore. Shared
 * memory, trace and log RPCs answer UNIMPLEMENTED: Tessera has no shared-memory transport, and trace
 * and log settings are not part of its node.
 */
import { create } from '@bufbuild/protobuf';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
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
import { unary, type PlainLogic } from './unary.js';

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

function unimplemented(message: string): PlainLogic<unknown, never> {
  return () => {
    throw TesseraError.unsupported(message);
  };
}

type MethodName = keyof (typeof GRPCInferenceService)['method'];

/**
 * What every unary RPC but ModelInfer does, by method: the one logic grpc-js's handlers (below) and the raw
 * front's in-place calls (in-place-unary.ts) both run, so their answers and statuses cannot drift apart.
 */
export function inferenceUnaryLogic(core: NodeCore): Readonly<Record<string, PlainLogic<never, unknown>>> {
  const logic = {
    serverLive: (): ServerLiveResponse => create(ServerLiveResponseSchema, { live: core.isLive() }),
    serverReady: (): ServerReadyResponse => create(ServerReadyResponseSchema, { ready: core.isReady() }),
    modelReady: (req: ModelReadyRequest): ModelReadyResponse =>
      create(ModelReadyResponseSchema, { ready: core.isModelReady(req.name, version(req.version)) }),
    serverMetadata: (): ServerMetadataResponse => serverMetadataToProto(core.serverMetadata()),
    modelMetadata: (req: ModelMetadataRequest): ModelMetadataResponse =>
      modelMetadataToProto(core.modelMetadata(req.name, version(req.version))),
    modelConfig: (req: ModelConfigRequest): ModelConfigResponse =>
      create(ModelConfigResponseSchema, { config: core.modelConfig(req.name, version(req.version)) }),
    modelStatistics: (req: ModelStatisticsRequest): ModelStatisticsResponse =>
      create(ModelStatisticsResponseSchema, {
        modelStats: core
          .statistics(req.name === '' ? undefined : req.name, version(req.version))
          .map(modelStatisticsToProto),
      }),
    repositoryIndex: async (req: RepositoryIndexRequest): Promise<RepositoryIndexResponse> => {
      refuseNamedRepository(req.repositoryName);
      return create(RepositoryIndexResponseSchema, {
        models: (await core.repositoryIndex(req.ready)).map(repositoryIndexEntryToProto),
      });
    },
    repositoryModelLoad: async (req: RepositoryModelLoadRequest): Promise<RepositoryModelLoadResponse> => {
      refuseNamedRepository(req.repositoryName);
      await core.loadModel(req.modelName, loadOptionsFromProto(req.parameters));
      return create(RepositoryModelLoadResponseSchema);
    },
    repositoryModelUnload: async (req: RepositoryModelUnloadRequest): Promise<RepositoryModelUnloadResponse> => {
      refuseNamedRepository(req.repositoryName);
      await core.unloadModel(req.modelName, unloadOptionsFromProto(req.parameters));
      return create(RepositoryModelUnloadResponseSchema);
    },
  };
  const stubs = Object.fromEntries(Object.entries(UNIMPLEMENTED_RPCS).map(([name, message]) => [name, unimplemented(message)]));
  return { ...stubs, ...logic } as Record<string, PlainLogic<never, unknown>>;
}

export function inferenceServiceImplementation(
  core: NodeCore,
  streamOptions: StreamOptions,
): UntypedServiceImplementation & Record<MethodName, unknown> {
  const handlers: Record<string, unknown> = {};
  for (const [name, logic] of Object.entries(inferenceUnaryLogic(core))) handlers[name] = unary(logic);
  handlers.modelInfer = modelInferHandler(core);
  handlers.modelStreamInfer = modelStreamInferHandler(core, streamOptions);
  return handlers as UntypedServiceImplementation & Record<MethodName, unknown>;
}

/** One repository per node: naming one is refused as Triton does (its HTTP side answers 501 the same way). */
function refuseNamedRepository(repositoryName: string): void {
  if (repositoryName !== '') {
    throw TesseraError.unsupported("'repository_name' specification is not supported");
  }
}
