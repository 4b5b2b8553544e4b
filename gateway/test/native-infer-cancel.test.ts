/**
 * The infer fast path cancels the upstream call when the client goes away (its close event aborts the
 * request's signal), whether the request bypassed the cache (no-store) or waited on the cache's shared
 * flight. Guards any change to how that signal is made (making it lazily was tried for issue 17).
 * Real node:http server and client; the dispatcher is a fake that waits until its signal aborts.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCacheKey } from '../../shared/src/cache-key/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { createMemoryResponseCache } from '../src/adapters/cache/index.js';
import { createStaticNodeDirectory } from '../src/adapters/fleet/index.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../src/adapters/memory/index.js';
import { createNativeInferListener } from '../src/adapters/node-http/index.js';
import { createGatewayApp, createInferCache } from '../src/core/app/index.js';
import { seedTenants } from '../src/core/auth/index.js';
import { createCacheLayer } from '../src/core/cache/index.js';
import { RecordingMetrics } from './app-fixtures.js';
import { unlimitedTenantConfig, WaitingDispatcher, type WaitingCall } from './support/waiting-dispatcher.js';
import { createVersionChooser } from '../src/core/routing/index.js';

const KEY = 'tsk_native-cancel';

let server: Server;
let port: number;
const dispatcher = new WaitingDispatcher();

beforeAll(async () => {
  const config = await unlimitedTenantConfig(KEY, { cache: { models: { '*': { enabled: true } } } });
  const tenants = createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, 0);
  const layer = createCacheLayer({ store: createMemoryResponseCache({}), logger: silentLogger, local: { maxBytes: 1 << 20 } });
  const app = createGatewayApp({
    config,
    tenants,
    rateLimiter: createMemoryRateLimiter({}),
    dispatcher,
    cache: createInferCache({ layer, settings: config.cache, versions: createVersionChooser({ directory: createStaticNodeDirectory([{ id: 'n1', grpcAddress: '127.0.0.1:1' }]), routing: config.routing }), computeKey: computeCacheKey }),
    metrics: new RecordingMetrics(),
    logger: silentLogger,
  });
  const fastPath = createNativeInferListener(app.serveInfer, silentLogger);
  server = createServer((incoming, outgoing) => {
    if (!fastPath(incoming, outgoing)) throw new Error('the fast path left a plain infer request');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const body = (offset: number) =>
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: [offset, 1, 2, 3] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 4], data: [1, 1, 1, 1] },
    ],
  });

/** Sends a request, waits until the dispatcher has it, then drops the connection. */
async function sendAndLeave(headers: Record<string, string>, offset: number): Promise<WaitingCall> {
  const calls = dispatcher.calls.length;
  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v2/models/simple/infer', headers: { authorization: `Bearer ${KEY}`, ...headers } });
  req.on('error', () => undefined);
  req.end(body(offset));
  while (dispatcher.calls.length === calls) await new Promise((resolve) => setTimeout(resolve, 5));
  req.destroy();
  return dispatcher.calls[calls]!;
}

describe('the infer fast path cancels the upstream call when the client goes away', () => {
  it('on a no-store miss (the request itself: its watch, no AbortSignal made)', async () => {
    const call = await sendAndLeave({ 'cache-control': 'no-store' }, 1);
    expect(call.signal).toBeDefined();
    // Issue 17's lead 1: the dispatcher listens to the request, not to an AbortController made for it.
    expect(call.signal instanceof AbortSignal).toBe(false);
    await call.aborted;
    expect(call.signal!.aborted).toBe(true);
  });

  it("on a cached model's miss (the shared flight's signal, aborted when its only waiter left)", async () => {
    const call = await sendAndLeave({}, 2);
    expect(call.signal).toBeDefined();
    await call.aborted;
    expect(call.signal!.aborted).toBe(true);
  });
});
