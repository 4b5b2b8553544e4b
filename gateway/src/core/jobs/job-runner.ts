/**
 * Runs one job's inference, in a worker (the gateway process or `tessera-jobs`), through the same
 * dispatcher as synchronous requests: admission with the job's tier, version splits, node choice,
 * breakers. Runtime-agnostic; the BullMQ adapter calls it and stores what it returns.
 *
 * The deadline is the job's run timeout (not the tier's queue timeout: a job has already waited, and
 * a spilled job exists precisely because the queue timeout was too short). Errors say whether a retry
 * could help (`retryable`): a full queue, no node, a deadline or a node that went away may pass later;
 * a bad request, an unknown model or a disabled tenant never will.
 */
import { TesseraError, toTesseraError, type ErrorCode } from '../../../../shared/src/errors/index.js';
import { decodeInferRequestBody, encodeInferResponse } from '../../../../shared/src/kserve/index.js';
import type { GatewayDispatcher } from '../app/gateway-deps.js';
import { tenantScope } from '../auth/index.js';
import type { JobResult, JobSpec, TenantStore } from '../ports/index.js';
import { fromBase64, toBase64 } from './bytes.js';

/** Default run timeout of one attempt: 5 minutes. */
export const DEFAULT_JOB_RUN_TIMEOUT_MS = 300_000;

const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['UNAVAILABLE', 'BAD_GATEWAY', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED', 'UNKNOWN']);

export interface JobRunnerDeps {
  readonly dispatcher: Pick<GatewayDispatcher, 'dispatch'>;
  /** Checked before each run: a deleted or disabled tenant's jobs fail. */
  readonly tenants: Pick<TenantStore, 'getTenant'>;
  /** Default DEFAULT_JOB_RUN_TIMEOUT_MS. */
  readonly runTimeoutMs?: number;
  /** Default Date.now. */
  readonly now?: () => number;
}

/** A failed run: `message` is "CODE: text", which is what the job's `error` shows. */
export class JobRunError extends Error {
  override readonly name = 'JobRunError';
  constructor(
    readonly code: ErrorCode,
    text: string,
    readonly retryable: boolean,
  ) {
    super(`${code}: ${text}`);
  }

  static of(error: unknown): JobRunError {
    if (error instanceof JobRunError) return error;
    const tessera = toTesseraError(error);
    return new JobRunError(tessera.code, tessera.message, RETRYABLE.has(tessera.code));
  }
}

export async function runInferJob(spec: JobSpec, deps: JobRunnerDeps, signal?: AbortSignal): Promise<JobResult> {
  const now = deps.now ?? Date.now;
  try {
    const tenant = await deps.tenants.getTenant(spec.tenantId);
    // A tenant deleted and re-created under the same id is another tenant: its predecessor's jobs do not run.
    if (tenant === undefined || tenantScope(tenant) !== (spec.tenantScope ?? spec.tenantId)) {
      throw new JobRunError('NOT_FOUND', `tenant '${spec.tenantId}' no longer exists`, false);
    }
    if (tenant.disabled === true) throw new JobRunError('UNAVAILABLE', `tenant '${spec.tenantId}' is disabled`, false);
    const decoded = decodeInferRequestBody({
      body: fromBase64(spec.body),
      headerLength: spec.headerLength,
      modelName: spec.model,
      ...(spec.version === undefined ? {} : { modelVersion: spec.version }),
    });
    const result = await deps.dispatcher.dispatch(decoded.request, {
      tenantId: spec.tenantId,
      tenantScope: spec.tenantScope ?? spec.tenantId,
      tier: spec.tier,
      deadline: now() + (deps.runTimeoutMs ?? DEFAULT_JOB_RUN_TIMEOUT_MS),
      ...(signal === undefined ? {} : { signal }),
    });
    const encoded = encodeInferResponse(result.response, { binaryOutputDefault: decoded.binaryOutputDefault, outputBinary: decoded.outputBinary });
    // A result is stored like the body: the tier's largest job payload bounds it.
    const maxPayload = spec.tier.jobs?.maxPayloadBytes;
    if (maxPayload !== undefined && encoded.body.length > maxPayload) {
      throw new JobRunError(
        'RESOURCE_EXHAUSTED',
        `the result is ${encoded.body.length} bytes; tier '${spec.tier.name}' keeps job results of at most ${maxPayload} bytes`,
        false,
      );
    }
    return { body: toBase64(encoded.body), headers: encoded.headers, modelVersion: result.response.modelVersion };
  } catch (error) {
    if (error instanceof TesseraError || error instanceof JobRunError) throw JobRunError.of(error);
    throw new JobRunError('INTERNAL', (error as Error)?.message ?? String(error), false);
  }
}
