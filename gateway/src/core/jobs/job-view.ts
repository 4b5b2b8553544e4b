/**
 * A job as clients see it (GET /v1/jobs/{id}, the 202 answer, webhook bodies):
 *
 *   { "id", "status": "queued"|"running"|"succeeded"|"failed"|"cancelled", "model", "model_version"?,
 *     "tier", "created_at", "started_at"?, "finished_at"? (ISO 8601), "attempts",
 *     "error"? ("CODE: message", when failed), "result"? (the KServe v2 infer response JSON, when it
 *     succeeded and has no binary sections), "result_url" (the exact response, binary included) }
 *
 * Never shown: the request body, the webhook URL's owner data, the tier's limits.
 */
import { INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';
import type { JobRecord } from '../ports/index.js';
import { fromBase64 } from './bytes.js';

export const JOBS_PATH = '/v1/jobs';

export const jobLocation = (id: string): string => `${JOBS_PATH}/${id}`;

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

export function jobView(record: JobRecord): Record<string, unknown> {
  const { spec } = record;
  const view: Record<string, unknown> = {
    id: record.id,
    status: record.state,
    model: spec.model,
    ...(spec.version !== undefined ? { model_version: spec.version } : {}),
    tier: spec.tier.name,
    created_at: iso(spec.submittedAt),
    ...(record.startedAt !== undefined ? { started_at: iso(record.startedAt) } : {}),
    ...(record.finishedAt !== undefined ? { finished_at: iso(record.finishedAt) } : {}),
    attempts: record.attempts,
    ...(record.error !== undefined ? { error: record.error } : {}),
  };
  const result = record.result;
  if (record.state === 'succeeded' && result !== undefined) {
    if (result.modelVersion !== '') view.model_version = result.modelVersion;
    // A JSON-only response is embedded; one with binary sections is only at result_url.
    if (!Object.keys(result.headers).some((h) => h.toLowerCase() === INFER_HEADER_LENGTH)) {
      try {
        view.result = JSON.parse(new TextDecoder().decode(fromBase64(result.body)));
      } catch {
        // not JSON after all: result_url still serves it
      }
    }
    view.result_url = `${jobLocation(record.id)}/result`;
  }
  return view;
}
