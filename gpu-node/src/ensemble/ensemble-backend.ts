/**
 * The backend an ensemble config resolves to. An ensemble has no instances and no model file: its
 * "execution" is the ensemble scheduler sending each step to a composing model. The platform still
 * needs a Backend object for every config, so this one exists only to say so if it is ever asked for
 * an instance.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { Backend } from '../backends/backend.js';

export const ENSEMBLE_BACKEND: Backend = {
  name: 'ensemble',
  defaultModelFilename: '',
  createInstance: (source) =>
    Promise.reject(
      TesseraError.internal(`ensemble '${source.name}' has no instances: its steps run on the composing models`),
    ),
};
