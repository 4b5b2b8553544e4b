/**
 * RepositoryModelLoad / Unload parameters (a map of ModelRepositoryParameter oneofs) -> core options.
 * Over gRPC a `file:` override is raw bytes in `bytes_param`, not base64 as over HTTP (section 2.1).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { ModelRepositoryParameter } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { LoadOptions } from '../../server-api/index.js';
import { addFileOverride, FILE_OVERRIDE_PREFIX } from '../../repository/override-directory.js';

type ParamMap = { readonly [key: string]: ModelRepositoryParameter };

const FILE_PREFIX = FILE_OVERRIDE_PREFIX;

export function loadOptionsFromProto(params: ParamMap): LoadOptions {
  let configJson: string | undefined;
  const files = new Map<string, Uint8Array>();
  for (const [key, param] of Object.entries(params)) {
    const choice = param.parameterChoice;
    if (key === 'config') {
      if (choice.case !== 'stringParam') {
        throw TesseraError.invalidArg(`load parameter 'config' must be a string_param holding the model config JSON`);
      }
      configJson = choice.value;
    } else if (key.startsWith(FILE_PREFIX)) {
      if (choice.case !== 'bytesParam') {
        throw TesseraError.invalidArg(`load parameter '${key}' must be a bytes_param holding the file content`);
      }
      addFileOverride(files, key, choice.value);
    }
    // Other keys are ignored, as Triton does, so clients may send parameters newer servers understand.
  }
  if (files.size > 0 && configJson === undefined) {
    // Triton rejects file overrides without a config: the files would replace a model it cannot describe.
    throw TesseraError.invalidArg(`load parameters with '${FILE_PREFIX}' overrides require the 'config' parameter`);
  }
  return {
    ...(configJson !== undefined ? { configJson } : {}),
    ...(files.size > 0 ? { files } : {}),
  };
}

export function unloadOptionsFromProto(params: ParamMap): { unloadDependents?: boolean } {
  const param = params['unload_dependents'];
  if (param === undefined) return {};
  if (param.parameterChoice.case !== 'boolParam') {
    throw TesseraError.invalidArg(`unload parameter 'unload_dependents' must be a bool_param`);
  }
  return { unloadDependents: param.parameterChoice.value };
}
