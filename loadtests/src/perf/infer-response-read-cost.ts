/**
 * The gateway's read of a node's answer for `simple` (two INT32 [1, 16] outputs, raw contents) into the
 * InferResponse it passes on, in turns: protobuf-es then inferResponseFromProto (the reference), the
 * two-step read of BASE_TREE's checkout when given (its reader then inferResponseFromProto), and this
 * tree's one-pass reader (gateway/src/adapters/grpc/infer-response-reader.ts). µs per answer and bytes
 * allocated per answer (heap growth with no collection inside the window: the semi-space is large).
 *
 *   [BASE_TREE=/work/main] taskset -c 0 node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 \
 *     --import tsx loadtests/src/perf/infer-response-read-cost.ts
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelInferResponseSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../../shared/src/grpc/index.js';
import { readNodeAnswer } from '../../../gateway/src/adapters/grpc/infer-response-reader.js';
import { runReadCostRounds, type ReadContender } from './read-cost-rounds.js';

const bytes = Buffer.from(toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', id: '', outputs: ['OUTPUT0', 'OUTPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })), rawOutputContents: [new Uint8Array(64), new Uint8Array(64)] })));
const plain = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const contenders: ReadContender[] = [['reference', () => inferResponseFromProto(decodeMessage(ModelInferResponseSchema, plain))]];
const baseTree = process.env.BASE_TREE;
if (baseTree !== undefined) {
  const base = (await import(`${baseTree}/gateway/src/adapters/grpc/infer-response-reader.ts`)) as { readInferResponse?: (b: Uint8Array) => never; readNodeAnswer?: (b: Uint8Array) => unknown };
  const baseCodec = (await import(`${baseTree}/shared/src/grpc/index.ts`)) as { inferResponseFromProto: (m: never) => unknown };
  // A tree from before the one-pass reader has the two steps; a later one, its own readNodeAnswer.
  const { readInferResponse, readNodeAnswer: baseRead } = base;
  if (readInferResponse !== undefined) contenders.push(['two-step (base)', (b) => baseCodec.inferResponseFromProto(readInferResponse(b))]);
  else if (baseRead !== undefined) contenders.push(['one pass (base)', (b) => baseRead(b)]);
}
contenders.push(['one pass (this tree)', (b) => readNodeAnswer(b)]);

runReadCostRounds(contenders, bytes, 'answer');
