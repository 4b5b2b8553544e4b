/**
 * Triton's model warmup (`model_warmup`, section 3.2): before a version becomes READY, every instance
 * runs each warmup sample `count` times (0 means once), so the first real requests do not pay for
 * lazy initialization. Samples are built from the config: zero data, random data, or the raw bytes of
 * a file in `<model>/warmup/` (BYTES files hold length-prefixed elements, as on the wire). A sample
 * goes through the same request validation as a client's (shapes, sizes, reshape) and runs on the
 * instance directly, outside the scheduler, so it is not counted in the statistics. Any failure fails
 * the load with the sample and instance named. On a GPU instance each sample also runs once on the CPU
 * and the outputs must agree within the model's `gpu_output_tolerance` (gpu-output-tolerance.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig, ModelWarmup, ModelWarmup_Input } from '../../../shared/src/gen/model_config_pb.js';
import {
  datatypeByteSize,
  elementCount,
  encodeBytesElements,
  numberToBf16Bits,
  numberToFp16Bits,
  type Datatype,
  type Tensor,
} from '../../../shared/src/tensors/index.js';
import type { BackendInstance, ExecutionRequest, ModelSource } from '../backends/backend.js';
import { gpuOutputTolerance } from '../backends/gpu-output-tolerance.js';
import { configDatatype, validateInferRequest } from './request-validator.js';

export const WARMUP_FOLDER = 'warmup';

/** Runs every warmup sample on every instance (instances in parallel, samples in order); throws on failure. */
export async function runWarmup(source: ModelSource, instances: readonly BackendInstance[]): Promise<void> {
  const { config } = source;
  if (config.modelWarmup.length === 0) return;
  const samples: { warmup: ModelWarmup; execution: ExecutionRequest }[] = [];
  for (const warmup of config.modelWarmup) {
    try {
      samples.push({ warmup, execution: await sampleRequest(source, warmup) });
    } catch (error) {
      throw TesseraError.invalidArg(`failed to prepare warmup sample '${warmup.name}': ${toTesseraError(error).message}`);
    }
  }
  const tolerance = gpuOutputTolerance(config);
  await Promise.all(
    instances.map(async (instance) => {
      for (const { warmup, execution } of samples) {
        if (tolerance !== undefined && instance.spec.kind === 'gpu' && instance.checkAgainstCpu !== undefined) {
          try {
            await instance.checkAgainstCpu(execution, tolerance);
          } catch (error) {
            throw TesseraError.internal(
              `model instance '${instance.spec.name}' failed warmup sample '${warmup.name}': ${toTesseraError(error).message}`,
            );
          }
        }
        for (let run = 0; run < Math.max(1, warmup.count); run++) {
          const { results } = await instance.execute([execution]);
          const result = results[0];
          const error = result === undefined ? TesseraError.internal('no result') : 'error' in result ? result.error : undefined;
          if (error) {
            throw TesseraError.internal(
              `model instance '${instance.spec.name}' failed warmup sample '${warmup.name}': ${error.message}`,
            );
          }
        }
      }
    }),
  );
}

/** A sample as the backend receives a validated request of `batch_size` elements. */
async function sampleRequest(source: ModelSource, warmup: ModelWarmup): Promise<ExecutionRequest> {
  const inputs: Tensor[] = [];
  for (const [name, input] of Object.entries(warmup.inputs)) {
    inputs.push(await sampleInput(source, name, input, warmup.batchSize, source.config));
  }
  const request = { id: `warmup ${warmup.name}`, modelName: source.name, inputs, parameters: {} };
  return validateInferRequest(request, source.config, source.name).execution;
}

async function sampleInput(
  source: ModelSource,
  name: string,
  input: ModelWarmup_Input,
  batchSize: number,
  config: ModelConfig,
): Promise<Tensor> {
  const datatype = configDatatype(input.dataType);
  if (datatype === null) throw TesseraError.invalidArg(`input '${name}' has no valid data_type`);
  const dims = input.dims.map(Number);
  const shape = config.maxBatchSize > 0 ? [Math.max(1, batchSize), ...dims] : dims;
  const count = elementCount(shape, `warmup input '${name}'`);
  const choice = input.inputDataType;
  let data: Uint8Array;
  if (choice.case === 'inputDataFile') {
    data = new Uint8Array(await readFile(join(source.modelDir, WARMUP_FOLDER, choice.value)));
  } else if (choice.case === 'randomData' && datatype !== 'BYTES') {
    data = randomData(datatype, count);
  } else {
    // Zero data; BYTES random data is zero data too (empty strings), as in Triton.
    data = datatype === 'BYTES' ? encodeBytesElements(Array<string>(count).fill('')) : new Uint8Array(count * (datatypeByteSize(datatype) ?? 1));
  }
  return { name, datatype, shape, data };
}

/** Random values a model can take: floats in [0, 1) (random bits could be NaN), any bits for integers. */
function randomData(datatype: Datatype, count: number): Uint8Array {
  const floats = () => Array.from({ length: count }, () => Math.random());
  switch (datatype) {
    case 'FP32':
      return new Uint8Array(Float32Array.from(floats()).buffer);
    case 'FP64':
      return new Uint8Array(Float64Array.from(floats()).buffer);
    case 'FP16':
      return new Uint8Array(Uint16Array.from(floats(), numberToFp16Bits).buffer);
    case 'BF16':
      return new Uint8Array(Uint16Array.from(floats(), numberToBf16Bits).buffer);
    case 'BOOL':
      return Uint8Array.from(randomBytes(count), (b) => b & 1);
    default:
      return new Uint8Array(randomBytes(count * (datatypeByteSize(datatype) ?? 1)));
  }
}
