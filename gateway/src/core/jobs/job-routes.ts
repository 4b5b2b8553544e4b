/**
 * Async job routes (tenant key, like /v2):
 *
 * - POST   /v1/jobs?model=M[&version=V]   body: a KServe v2 infer body (JSON, or JSON + binary tensors
 *          with Inference-Header-Content-Length) → 202 {job} + `Location: /v1/jobs/{id}`.
 *          Headers: `Idempotency-Key: K` (same key + same tenant → same job, `Idempotent-Replayed:
 *          true`; reused with another request → 400), `x-tessera-webhook-url: https://…` (the final
 *          state is POSTed there, signed with the tenant's webhook secret; see webhook-signing.ts).
 * - GET    /v1/jobs/{id}          → 200 {job} (job-view.ts): status, and the result when done.
 * - GET    /v1/jobs/{id}/result   → the infer response exactly as /v2/…/infer would answer it (binary
 *          included); 409 while not succeeded.
 * - DELETE /v1/jobs/{id}          → 200 {job, status: "cancelled"} for a job that has not started;
 *          409 when it is running or finished.
 * - POST   /admin/tenants/{id}/webhook-secret (admin key) → 201 {tenantId, webhookSecret}: a new secret,
 *          shown this once; it replaces the previous one.
 * A job of another tenant, an expired job and a malformed id are all 404. Submissions are checked
 * like infer requests (model permission 403, body, rate limit 429 with the tier's limits) before
 * anything is queued. Without a job queue (no Redis) every /v1/jobs route answers 503
 * "async jobs need Redis".
 */
import type { Context, Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { decodeInferRequestBody, INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';
import { elementCount } from '../../../../shared/src/tensors/index.js';
import type { AppEnv } from '../app/app-env.js';
import { applyRateLimit } from '../app/rate-limit.js';
import { authenticate, requireModel, tenantScope, type AuthContext } from '../auth/index.js';
import { answerToResponse, jsonAnswer, jsonResponse, PayloadTooLargeError, readBodyLimited, readTierBody, type HeaderReader, type HttpAnswer } from '../http/index.js';
import type { GatewayMetrics, JobObserver, JobQueue, JobRecord, RateLimiter, TenantStore, Tier } from '../ports/index.js';
import { fromBase64, toBase64 } from './bytes.js';
import { idempotencyKeyOf, idempotentJobId, JOB_ID_PATTERN, randomJobId, requestFingerprint } from './idempotency.js';
import { jobLocation, jobView, JOBS_PATH } from './job-view.js';
import { generateWebhookSecret } from './webhook-signing.js';
import { WEBHOOK_URL_HEADER, type HostResolver, type WebhookGuard } from './webhook-policy.js';


export interface JobRoutesContext {
  /** Absent: job routes answer 503. */
  readonly jobs: JobQueue | undefined;
  readonly tenants: TenantStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly rateLimiter: RateLimiter;
  readonly metrics: GatewayMetrics;
  readonly observer?: JobObserver;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
  readonly now: () => number;
  /** Webhook targets allowed (core/jobs/webhook-policy.ts) and how names are resolved to check them. */
  readonly webhooks: WebhookChecks;
}

/** The webhook check of a submission: the policy, and a resolver where the runtime has DNS. */
export interface WebhookChecks {
  readonly guard: WebhookGuard;
  readonly resolve?: HostResolver;
}

/** One inference to turn into a job (from POST /v1/jobs or an infer request that asked for it). */
export interface JobSubmission {
  readonly auth: AuthContext;
  readonly model: string;
  readonly version: string | undefined;
  readonly body: Uint8Array;
  readonly headerLength: string | null;
  /** The client's headers: Idempotency-Key and the webhook URL are read from them. */
  readonly headers: HeaderReader;
  /** True when an infer request refused at admission became this job. */
  readonly spilled: boolean;
}

export const jobsNeedRedis = (): TesseraError =>
  TesseraError.unavailable('async jobs need Redis: start the gateway with REDIS_URL (or redisUrl in the config)');

/** Queues the submission and answers 202 with the job and its Location. */
export async function acceptJob(
  jobs: JobQueue,
  submission: JobSubmission,
  ctx: JobAcceptContext,
): Promise<Response> {
  return answerToResponse(await acceptJobAnswer(jobs, submission, ctx));
}

/** `acceptJob` as an HttpAnswer (for the infer logic, which answers without a Web Response). */
export async function acceptJobAnswer(
  jobs: JobQueue,
  submission: JobSubmission,
  ctx: JobAcceptContext,
): Promise<HttpAnswer> {
  const { auth, model, version, body } = submission;
  const maxPayload = auth.tier.jobs?.maxPayloadBytes;
  if (maxPayload !== undefined && body.length > maxPayload) {
    throw new PayloadTooLargeError(`the job body is ${body.length} bytes; tier '${auth.tier.name}' accepts jobs of at most ${maxPayload} bytes`);
  }
  const webhookUrl = await webhookUrlOf(submission.headers, ctx.webhooks);
  if (webhookUrl !== undefined && (auth.tenant.webhookSecret ?? '') === '') {
    throw TesseraError.invalidArg(
      `tenant '${auth.tenant.id}' has no webhook secret yet: an admin creates one with POST /admin/tenants/${auth.tenant.id}/webhook-secret`,
    );
  }
  const key = idempotencyKeyOf(submission.headers);
  const scope = tenantScope(auth.tenant);
  const id = key === undefined ? randomJobId() : await idempotentJobId(scope, key);
  const fingerprint = await requestFingerprint(model, version, body);
  const { record, created } = await jobs.submit(id, {
    tenantId: auth.tenant.id,
    tenantScope: scope,
    tier: auth.tier,
    model,
    ...(version === undefined ? {} : { version }),
    body: toBase64(body),
    headerLength: submission.headerLength,
    ...(webhookUrl === undefined ? {} : { webhookUrl }),
    fingerprint,
    submittedAt: ctx.now(),
  });
  if (!created && record.spec.fingerprint !== fingerprint) {
    throw TesseraError.invalidArg('this Idempotency-Key was already used with a different request (model, version or body)');
  }
  if (created) ctx.observer?.submitted(auth.tier.name, model, submission.spilled);
  const headers: Record<string, string> = { Location: jobLocation(record.id), ...ctx.extraHeaders };
  if (!created) headers['Idempotent-Replayed'] = 'true';
  return jsonAnswer(jobView(record), 202, headers);
}

/** What accepting a job needs besides the queue. */
export interface JobAcceptContext {
  readonly observer?: JobObserver;
  readonly now: () => number;
  readonly extraHeaders?: Record<string, string>;
  readonly webhooks: WebhookChecks;
}

/** The submission's webhook URL, checked against the policy (form, then every address of its host). */
async function webhookUrlOf(headers: HeaderReader, checks: WebhookChecks): Promise<string | undefined> {
  const raw = headers.get(WEBHOOK_URL_HEADER);
  if (raw === null || raw.trim() === '') return undefined;
  return (await checks.guard.check(raw, checks.resolve)).href;
}

export function registerJobRoutes(app: Hono<AppEnv>, ctx: JobRoutesContext): void {
  const authMiddleware = async (c: Context<AppEnv>, next: () => Promise<void>): Promise<void> => {
    c.set('route', 'jobs');
    c.set('auth', await authenticate(ctx.tenants, ctx.tiers, c.req.raw.headers));
    await next();
  };
  app.use(JOBS_PATH, authMiddleware);
  app.use(`${JOBS_PATH}/*`, authMiddleware);

  const queue = (): JobQueue => {
    if (ctx.jobs === undefined) throw jobsNeedRedis();
    return ctx.jobs;
  };
  const authOf = (c: Context<AppEnv>): AuthContext => {
    const auth = c.get('auth');
    if (auth === undefined) throw TesseraError.internal('auth middleware did not run');
    return auth;
  };
  /** The caller's job, or 404 for anything else: unknown, expired, malformed, another tenant's. */
  const ownJob = async (c: Context<AppEnv>): Promise<JobRecord> => {
    const id = c.req.param('id') ?? '';
    const auth = authOf(c);
    const scope = tenantScope(auth.tenant);
    const record = JOB_ID_PATTERN.test(id) ? await queue().get(scope, id) : undefined;
    // The adapter already filters by tenant scope; checking again costs nothing and guards a faulty adapter.
    if (record === undefined || (record.spec.tenantScope ?? record.spec.tenantId) !== scope) throw TesseraError.notFound(`unknown job '${id}'`);
    c.set('model', record.spec.model);
    return record;
  };

  app.post(JOBS_PATH, async (c) => {
    const auth = authOf(c);
    const jobs = queue();
    const model = c.req.query('model') ?? '';
    const version = c.req.query('version');
    if (model === '') throw TesseraError.invalidArg("POST /v1/jobs needs the model: /v1/jobs?model=NAME[&version=N]");
    if (version !== undefined && !/^[0-9]{1,19}$/.test(version)) throw TesseraError.invalidArg(`version must be a number, got '${version}'`);
    c.set('model', model);
    requireModel(auth, model);
    const body = await readTierBody((max) => readBodyLimited(c.req.raw, max), ctx.maxBodyBytes, auth.tier);
    const headerLength = c.req.header(INFER_HEADER_LENGTH) ?? null;
    if (headerLength !== null && headerLength.trim() === '0') {
      throw TesseraError.unsupported('raw binary requests (Inference-Header-Content-Length: 0) are not supported for jobs; send the JSON header');
    }
    // Decoded now so that a malformed body is a 400 at once, not a failed job later.
    const normalizedVersion = version === undefined ? undefined : BigInt(version).toString();
    const decoded = decodeInferRequestBody({ body, headerLength, modelName: model, ...(normalizedVersion === undefined ? {} : { modelVersion: normalizedVersion }) });
    const elements = decoded.request.inputs.reduce((n, t) => n + elementCount(t.shape), 0);
    await applyRateLimit(ctx.rateLimiter, ctx.metrics, auth, elements, (h) => Object.assign(c.get('extraHeaders'), h), body.length);
    return acceptJob(jobs, { auth, model, version: normalizedVersion, body, headerLength, headers: c.req.raw.headers, spilled: false }, ctx);
  });

  app.get(`${JOBS_PATH}/:id`, async (c) => jsonResponse(jobView(await ownJob(c))));

  app.get(`${JOBS_PATH}/:id/result`, async (c) => {
    const record = await ownJob(c);
    if (record.state !== 'succeeded' || record.result === undefined) {
      return jsonResponse({ error: `job '${record.id}' has no result: it is ${record.state}`, status: record.state }, 409);
    }
    return new Response(fromBase64(record.result.body), { status: 200, headers: { ...record.result.headers } });
  });

  app.delete(`${JOBS_PATH}/:id`, async (c) => {
    const record = await ownJob(c);
    const outcome = await queue().cancel(record.spec.tenantScope ?? record.spec.tenantId, record.id);
    if (outcome === undefined) throw TesseraError.notFound(`unknown job '${record.id}'`);
    if (outcome.outcome === 'too_late') {
      return jsonResponse({ error: `job '${record.id}' cannot be cancelled: it is ${outcome.record.state}`, status: outcome.record.state }, 409);
    }
    ctx.observer?.finished('cancelled', record.spec.tier.name, record.spec.model);
    return jsonResponse(jobView(outcome.record));
  });

  app.post('/admin/tenants/:id/webhook-secret', async (c) => {
    const id = c.req.param('id') ?? '';
    const tenant = await ctx.tenants.getTenant(id);
    if (tenant === undefined) throw TesseraError.notFound(`unknown tenant '${id}'`);
    const webhookSecret = generateWebhookSecret();
    await ctx.tenants.putTenant({ ...tenant, webhookSecret });
    ctx.logger.info('webhook secret rotated', { tenant: id });
    return jsonResponse({ tenantId: id, webhookSecret }, 201);
  });
}
