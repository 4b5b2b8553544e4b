/**
 * Loads a decoder's onnxruntime session, with the last-position outputs (last-position-outputs.ts) when
 * the model takes them: decode runs then fetch one position per present instead of the whole cache. Any
 * model the patch does not suit, or any refusal of the patched bytes, loads the file as it is, from its
 * path (so external data and onnxruntime's own error naming the file are as before); `why` says why.
 */
import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import { withLastPositionOutputs } from './last-position-outputs.js';

export interface DecoderSession {
  readonly session: ort.InferenceSession;
  /** present name -> its last-position output, when the session has them. */
  readonly lastPositionOutputs: ReadonlyMap<string, string> | undefined;
  /** Why the model was loaded without them. */
  readonly why?: string;
}

/** Errors of the plain load from the path are the caller's to report; only the patched attempt is caught here. */
export async function loadDecoderSession(modelPath: string, options: ort.InferenceSession.SessionOptions): Promise<DecoderSession> {
  const why = await patchedSession(modelPath, options);
  if (typeof why !== 'string') return why;
  return { session: await ort.InferenceSession.create(modelPath, options), lastPositionOutputs: undefined, why };
}

async function patchedSession(modelPath: string, options: ort.InferenceSession.SessionOptions): Promise<DecoderSession | string> {
  let model: Uint8Array;
  try {
    model = await readFile(modelPath);
  } catch (error) {
    return `the model file could not be read (${message(error)})`;
  }
  const patch = withLastPositionOutputs(model);
  if (!patch.ok) return patch.why;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(patch.bytes, options);
  } catch (error) {
    return `onnxruntime refused the model with last-position outputs (${message(error)})`;
  }
  const missing = [...patch.outputs.values()].find((name) => !session.outputNames.includes(name));
  if (missing !== undefined) {
    await session.release();
    return `the patched session lacks output '${missing}'`;
  }
  return { session, lastPositionOutputs: patch.outputs };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
