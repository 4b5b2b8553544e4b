/** Fakes for the app's unit tests: a dispatcher that adds INPUT0 and INPUT1 (like the `simple` model). */
import { TesseraError } from '../../shared/src/errors/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import type { InferRequest } from '../../shared/src/tensors/index.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../src/adapters/memory/index.js';
import { loadGatewayConfig, type GatewayConfig } from '../src/config/index.js';
import { sha256Hex } from '../src/core/auth/index.js';
import type { GatewayMetrics, RateLimiter, TenantStore } from '../src/core/ports/index.js';
import { createGatewayApp, type GatewayApp } from '../src/core/app/index.js';
import type { DispatchContext, GatewayDispatcher, GatewayInferCache } from '../src/core/app/index.js';

/** The model-describing half of a fake dispatcher: `simple` is the one ready model, at version 1. */
export abstract class FakeModelDirectory implements GatewayDispatcher {
  abstract dispatch(request: InferRequest, ctx: DispatchContext): ReturnType<GatewayDispatcher['dispatch']>;

  async modelConfig(model: string): Promise<Record<string, unknown>> {
    return { name: model };
  }
  async modelMetadata(model: string) {
    return { name: model, versions: ['1'], platform: 'fake' };
  }
  modelReady(model: string) {
    return model === 'simple';
  }
}

export class FakeDispatcher extends FakeModelDirectory {
  readonly calls: { request: InferRequest; ctx: DispatchContext }[] = [];
  /** When set, dispatch waits for this promise (to test cancellation). */
  hold: Promise<void> | undefined;

  async dispatch(request: InferRequest, ctx: DispatchContext) {
    this.calls.push({ request, ctx });
    if (request.modelName !== 'simple') throw TesseraError.notFound(`Request for unknown model: '${request.modelName}' is not found`);
    if (this.hold !== undefined) {
      await new Promise<void>((resolve, reject) => {
        ctx.signal?.addEventListener('abort', () => reject(TesseraError.cancelled('client went away')));
        void this.hold!.then(resolve);
      });
    }
    const a = new Int32Array(request.inputs[0]!.data.slice().buffer);
    const b = new Int32Array(request.inputs[1]!.data.slice().buffer);
    const sum = a.map((x, i) => x + b[i]!);
    return {
      response: {
        id: request.id,
        modelName: 'simple',
        modelVersion: request.modelVersion ?? '1',
        outputs: [{ name: 'OUTPUT0', datatype: 'INT32' as const, shape: request.inputs[0]!.shape, data: new Uint8Array(sum.buffer) }],
      },
      computeUs: 100,
    };
  }
  override async modelConfig(model: string): Promise<Record<string, unknown>> {
    return { name: model, max_batch_size: 8 };
  }
}

export class RecordingMetrics implements GatewayMetrics {
  readonly requests: Parameters<GatewayMetrics['request']>[0][] = [];
  readonly rateLimits: string[] = [];
  readonly auth: string[] = [];
  request(o: Parameters<GatewayMetrics['request']>[0]) {
    this.requests.push(o);
  }
  rateLimited(tenant: string) {
    this.rateLimits.push(tenant);
  }
  authRejected(reason: string) {
    this.auth.push(reason);
  }
  async render() {
    return { contentType: 'text/plain', body: 'fake_metric 1\n' };
  }
}

export const KEYS = { a: 'tsk_tenant-a-key', b: 'tsk_tenant-b-key', free: 'tsk_free-key', admin: 'admin-secret' };

export async function testConfig(extra: Record<string, unknown> = {}): Promise<GatewayConfig> {
  return loadGatewayConfig(
    JSON.stringify({
      adminKeyHash: await sha256Hex(KEYS.admin),
      tiers: { tiny: { priority: 3, queueTimeoutMs: 1000, queueShare: 0.5, cacheTtlSeconds: 0, allowedModels: ['*'],
        rateLimits: { requestsPerSecond: 0.001, burst: 2, elementsPerSecond: 0, elementsBurst: 0 } } },
      tenants: [
        { id: 'a', tier: 'premium', keys: [{ id: 'a1', hash: await sha256Hex(KEYS.a) }] },
        { id: 'b', tier: 'standard', allowedModels: ['other'], keys: [{ id: 'b1', hash: await sha256Hex(KEYS.b) }] },
        { id: 'f', tier: 'tiny', keys: [{ id: 'f1', hash: await sha256Hex(KEYS.free) }] },
      ],
      ...extra,
    }),
  );
}

export interface TestGateway {
  readonly gateway: GatewayApp;
  readonly dispatcher: FakeDispatcher;
  readonly metrics: RecordingMetrics;
  readonly tenants: TenantStore;
  readonly config: GatewayConfig;
}

export async function testGateway(options: { rateLimiter?: RateLimiter; cache?: GatewayInferCache; config?: GatewayConfig } = {}): Promise<TestGateway> {
  const { seedTenants } = await import('../src/core/auth/index.js');
  const config = options.config ?? (await testConfig());
  const tenants = createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, 0);
  const dispatcher = new FakeDispatcher();
  const metrics = new RecordingMetrics();
  const gateway = createGatewayApp({
    config,
    tenants,
    rateLimiter: options.rateLimiter ?? createMemoryRateLimiter(),
    dispatcher,
    metrics,
    logger: silentLogger,
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  });
  return { gateway, dispatcher, metrics, tenants, config };
}

/** A `simple` infer body: INPUT0 = 0..15, INPUT1 = 1s, as JSON. */
export function simpleInferBody(id = ''): string {
  return JSON.stringify({
    ...(id === '' ? {} : { id }),
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });
}
