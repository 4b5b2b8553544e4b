/**
 * `grpc.health.v1.Health/Check`, which Triton answers with server readiness (section 2.1), so load
 * balancers and Kubernetes gRPC probes take a node out of rotation while its models are not ready.
 */
import { create } from '@bufbuild/protobuf';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus,
} from '../../../../shared/src/gen/health_pb.js';
import type { HealthCheckRequest, HealthCheckResponse } from '../../../../shared/src/gen/health_pb.js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { NodeCore } from '../../server-api/index.js';
import { unary, type PlainLogic } from './unary.js';

/** '' asks about the whole server; the inference service's own name means the same thing here. */
const KNOWN_SERVICES = new Set(['', GRPCInferenceService.typeName]);

/** Check's logic, run by grpc-js's handler and by the raw front in place (in-place-unary.ts). */
export function healthUnaryLogic(core: NodeCore): Readonly<Record<string, PlainLogic<never, unknown>>> {
  return {
    check: (req: HealthCheckRequest): HealthCheckResponse => {
      if (!KNOWN_SERVICES.has(req.service)) {
        // The health-checking protocol's answer for a service this server does not know.
        throw TesseraError.notFound(`unknown service '${req.service}'`);
      }
      const status = core.isReady()
        ? HealthCheckResponse_ServingStatus.SERVING
        : HealthCheckResponse_ServingStatus.NOT_SERVING;
      return create(HealthCheckResponseSchema, { status });
    },
  };
}

export function healthServiceImplementation(core: NodeCore): UntypedServiceImplementation {
  const handlers: UntypedServiceImplementation = {};
  for (const [name, logic] of Object.entries(healthUnaryLogic(core))) handlers[name] = unary(logic);
  return handlers;
}
