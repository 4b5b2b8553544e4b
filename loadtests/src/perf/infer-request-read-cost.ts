/**
 * The gateway front door's read of a client's ModelInferRequest for `simple` (two INT32 [1, 16] inputs,
 * raw contents, two requested outputs) into the InferRequest the pipeline takes, in turns: the
 * two-step read (decodeModelInferRequest's plain scan, inferRequestFromProto, the framing check) and
 * the one-pass reader (shared/src/grpc/plain-infer-request.ts). µs and bytes allocated
 * per request (heap growth with no collection inside the window: the semi-space is large).
 *
 *   taskset -c 0 node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 \
 *     --import tsx loadtests/src/perf/infer-request-read-cost.ts
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { checkForwardableFraming, decodeModelInferRequest, inferRequestFromProto } from '../../../shared/src/grpc/index.js';
import { readPlainInferRequest } from '../../../shared/src/grpc/plain-infer-request.js';
import { runReadCostRounds, type ReadContender } from './read-cost-rounds.js';

const bytes = Buffer.from(
  toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })),
      outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
      rawInputContents: [new Uint8Array(64), new Uint8Array(64)],
    }),
  ),
);

const contenders: ReadContender[] = [
  [
    'two-step',
    (b) => {
      const msg = decodeModelInferRequest(b);
      const request = inferRequestFromProto(msg);
      checkForwardableFraming(b);
      return request;
    },
  ],
  ['one pass', (b) => readPlainInferRequest(b)!.request],
];

runReadCostRounds(contenders, bytes, 'request');
