import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { DEFAULT_TIERS } from './default-tiers.js';
import { loadGatewayConfig } from './load-gateway-config.js';
import { modelCacheSettings } from './gateway-config.js';

const HASH = 'a'.repeat(64);

function problems(text: string): string[] {
  try {
    loadGatewayConfig(text);
  } catch (error) {
    expect(error).toBeInstanceOf(TesseraError);
    expect((error as TesseraError).code).toBe('INVALID_ARG');
    return (error as Error).message.split('\n').slice(1).map((l) => l.replace(/^\s+- /, ''));
  }
  throw new Error('expected the config to be refused');
}

describe('loadGatewayConfig', () => {
  it('completes an empty file with the defaults and freezes it', () => {
    const config = loadGatewayConfig('{}');
    expect(config.port).toBe(8080);
    expect(config.serverName).toBe('triton');
    expect(loadGatewayConfig('{"serverName": "acme-inference"}').serverName).toBe('acme-inference');
    expect(() => loadGatewayConfig('{"serverName": ""}')).toThrow(/\$\.serverName/);
    expect(config.adminKeyHash).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.maxPipelinedRequests).toBe(32);
    expect(config.rateLimitLeaseMs).toBe(100);
    expect(loadGatewayConfig('{"rateLimitLeaseMs": 0}').rateLimitLeaseMs).toBe(0);
    expect(loadGatewayConfig('{"rateLimitKeepWarmMs": 0}').rateLimitKeepWarmMs).toBe(0);
    expect(() => loadGatewayConfig('{"rateLimitKeepWarmMs": -1}')).toThrow(/rateLimitKeepWarmMs: must be >= 0/);
    expect(config.grpcTransport).toBe('http2');
    // The grpc-js transport is retired (issue 17): naming it is a config error, not a silent switch.
    expect(() => loadGatewayConfig('{"grpcTransport": "grpc-js"}')).toThrow(/grpcTransport: must be one of http2, got "grpc-js"/);
    expect(Object.keys(config.tiers).sort()).toEqual(['free', 'premium', 'standard']);
    expect(config.tiers.premium).toEqual(DEFAULT_TIERS.premium);
    expect(config.cache).toEqual({ enabled: true, maxEntryBytes: 1024 * 1024, localMaxBytes: 64 * 1024 * 1024, localMaxAgeSeconds: 5, models: {} });
    expect(Object.isFrozen(config.tiers)).toBe(true);
    expect(loadGatewayConfig('{"cache": {"commandTimeoutMs": 5000}}').cache.commandTimeoutMs).toBe(5000);
  });

  it('overrides single fields of a default tier and accepts complete new tiers', () => {
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: {
          free: { rateLimits: { requestsPerSecond: 1 } },
          gold: { priority: 1, queueTimeoutMs: 100, queueShare: 0.5, cacheTtlSeconds: 5, allowedModels: ['simple'],
            rateLimits: { requestsPerSecond: 1, burst: 1, elementsPerSecond: 0, elementsBurst: 0 } },
        },
        tenants: [{ id: 'acme', tier: 'gold', keys: [{ id: 'k1', hash: HASH }] }],
        cache: { models: { simple: { shared: true } } },
        routing: { models: { simple: { splits: [{ version: '1', weight: 1 }] } } },
      }),
    );
    expect(config.tiers.free!.rateLimits).toEqual({ ...DEFAULT_TIERS.free.rateLimits, requestsPerSecond: 1 });
    expect(config.tiers.gold!.priority).toBe(1);
    expect(config.tenants[0]).toEqual({ id: 'acme', name: 'acme', tier: 'gold', keys: [{ id: 'k1', hash: HASH }] });
    expect(modelCacheSettings(config.cache, 'simple')).toEqual({ enabled: true, shared: true });
    expect(modelCacheSettings(config.cache, 'other')).toEqual({ enabled: false, shared: false });
  });

  it('lists every problem at once, each with its path', () => {
    const found = problems(
      JSON.stringify({
        port: 70000,
        adminKeyHash: 'not-a-hash',
        redisUrl: 'http://x',
        colour: 'blue',
        maxPipelinedRequests: 0,
        rateLimitLeaseMs: -5,
        grpcTransport: 'grpc',
        tiers: { gold: { priority: 0 } },
        tenants: [
          { id: 'a b', tier: 'platinum', keys: [{ id: 'k', hash: 'plaintext-key' }] },
          { tier: 'free', keys: [{ id: 'k', hash: HASH }, { id: 'k2', hash: HASH }] },
        ],
        nodes: [{ id: 'n1' }, { grpc: 'no-port' }],
        routing: { policy: 'random', models: { m: { splits: [{ version: 'v1', weight: 1 }] } } },
        cache: { maxEntryBytes: 0, localMaxBytes: -1, localMaxAgeSeconds: 0, commandTimeoutMs: 0, models: { m: { enabled: 'yes' } } },
      }),
    );
    const expected = [
      '$.port: must be <= 65535',
      '$.adminKeyHash: must be a lowercase sha256',
      '$.redisUrl: must be a redis://',
      '$.colour: unknown field',
      '$.maxPipelinedRequests: must be >= 1',
      '$.rateLimitLeaseMs: must be >= 0',
      '$.grpcTransport: must be one of http2, got "grpc"',
      '$.tiers.gold.priority: must be >= 1',
      '$.tiers.gold.queueTimeoutMs: is required for a new tier',
      '$.tiers.gold.rateLimits.burst: is required for a new tier',
      '$.tenants[0].id: must be 1-64 letters',
      "$.tenants[0].tier: unknown tier 'platinum'",
      '$.tenants[0].keys[0].hash: must be a lowercase sha256 hex digest of the key',
      '$.tenants[1].id: is required',
      '$.tenants[1].keys[1].hash: the same key hash appears twice',
      '$.nodes[0]: needs "grpc" or "http"',
      '$.nodes[1].grpc: must be "host:port"',
      '$.routing.policy: must be one of p2c, round-robin',
      '$.routing.models.m: models.m.splits[0].version must be a decimal version string',
      '$.cache.maxEntryBytes: must be >= 1',
      '$.cache.localMaxBytes: must be >= 0',
      '$.cache.localMaxAgeSeconds: must be > 0',
      '$.cache.commandTimeoutMs: must be >= 1',
      '$.cache.models.m.enabled: must be true or false',
    ];
    for (const start of expected) {
      expect(found.some((p) => p.startsWith(start)), `missing: ${start}\nin:\n${found.join('\n')}`).toBe(true);
    }
    expect(problems('[1]')).toEqual(['$: must be a JSON object, got an array']);
  });

  it('says so when the text is not JSON', () => {
    expect(() => loadGatewayConfig('{port: 1')).toThrow(/not valid JSON/);
  });

  it('security settings (issue 14): metrics behind the admin key, https-only webhooks, byte limits and job quotas per tier', () => {
    const config = loadGatewayConfig('{}');
    expect(config.metrics.requireAdminKey).toBe(true);
    expect(config.webhooks).toEqual({ allowHttp: false, allow: [] });
    expect(config.tiers.free).toMatchObject({ maxRequestBytes: 1024 * 1024, jobs: { maxPayloadBytes: 256 * 1024, maxStoredJobs: 10, resultTtlSeconds: 3600 } });
    const custom = loadGatewayConfig(
      JSON.stringify({
        metrics: { requireAdminKey: false },
        webhooks: { allowHttp: true, allow: ['hooks.internal', '10.20.0.0/16', 'fd00::/8'] },
        tiers: {
          free: { maxRequestBytes: 2048, jobs: { maxStoredJobs: 3 }, rateLimits: { bytesPerSecond: 100, bytesBurst: 200 } },
          gold: { priority: 1, queueTimeoutMs: 1000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
            rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } },
        },
      }),
    );
    expect(custom.metrics.requireAdminKey).toBe(false);
    expect(custom.webhooks.allow).toEqual(['hooks.internal', '10.20.0.0/16', 'fd00::/8']);
    expect(custom.tiers.free).toMatchObject({ maxRequestBytes: 2048, jobs: { maxPayloadBytes: 256 * 1024, maxStoredJobs: 3, resultTtlSeconds: 3600 } });
    expect(custom.tiers.free!.rateLimits).toMatchObject({ bytesPerSecond: 100, bytesBurst: 200, requestsPerSecond: 5 });
    // A new tier without byte settings: bytes unlimited, jobs bounded by the gateway's defaults.
    expect(custom.tiers.gold!.rateLimits).toMatchObject({ bytesPerSecond: 0, bytesBurst: 0 });
    expect(custom.tiers.gold!.maxRequestBytes).toBeUndefined();
    expect(custom.tiers.gold!.jobs).toEqual({ maxPayloadBytes: 64 * 1024 * 1024, maxStoredJobs: 1000, resultTtlSeconds: 86_400 });
    expect(
      problems(
        JSON.stringify({
          webhooks: { allowHttp: 'yes', allow: ['10.0.0.0/33', 'not a host', ''], extra: 1 },
          tiers: { free: { maxRequestBytes: 0, jobs: { maxStoredJobs: 0, other: 1 }, rateLimits: { bytesPerSecond: 10, bytesBurst: 0 } } },
        }),
      ),
    ).toEqual([
      '$.webhooks.extra: unknown field (known: allowHttp, allow)',
      '$.webhooks.allowHttp: must be true or false, got string "yes"',
      '$.webhooks.allow: must be an array of non-empty strings, got an array',
      '$.tiers.free.rateLimits.bytesBurst: must be >= 1 when bytesPerSecond is set',
      '$.tiers.free.maxRequestBytes: must be >= 1, got 0',
      '$.tiers.free.jobs.other: unknown field (known: maxPayloadBytes, maxStoredJobs, resultTtlSeconds)',
      '$.tiers.free.jobs.maxStoredJobs: must be >= 1, got 0',
    ]);
    expect(problems(JSON.stringify({ webhooks: { allow: ['10.0.0.0/33', 'not a host'] } }))).toEqual([
      '$.webhooks.allow[0]: must be a host name or a CIDR (10.0.0.0/8, fd00::/8), got "10.0.0.0/33"',
      '$.webhooks.allow[1]: must be a host name or a CIDR (10.0.0.0/8, fd00::/8), got "not a host"',
    ]);
  });
});
