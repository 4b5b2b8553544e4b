/**
 * Attack 3 (issue 14): webhook SSRF. Real redis-server, a real node process, a real gateway running
 * job workers, and loopback listeners standing in for what an attacker aims at. Every spelling of a
 * loopback, private, link-local, CGNAT, multicast, unspecified, broadcast, IPv4-mapped or NAT64
 * target is refused at submission with a 400 naming the problem; a name that resolves to a public
 * address at submission and to loopback at delivery (DNS rebinding) is refused right before
 * connecting; redirects are not followed; http is refused unless the config allows it. The
 * listeners assert that nothing reached them, and the node still serves the model a webhook aimed
 * at its unload route would have unloaded.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { systemResolver, type AddressResolver } from '../../gateway/src/adapters/bullmq/index.js';
import { jobKeys } from '../../shared/src/fleet/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleBody } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const KEY = { tenant: 'tsk_sec-webhook-tenant', admin: 'sec-webhook-admin' };

interface Listener {
  readonly port: number;
  readonly hits: string[];
  close(): Promise<void>;
}

async function listen(answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })): Promise<Listener> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    const { status, headers } = answer(req);
    res.writeHead(status, headers).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('webhook SSRF (redis + node + gateway with job workers)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  /** A second gateway on the same Redis with the default policy (https only), queue only. */
  let strict: RunningGateway;
  let victim: Listener;
  let receiver: Listener;
  let redirector: Listener;
  let rebindCalls = 0;

  const resolver: AddressResolver = async (host) => {
    if (host === 'rebind.example') return [{ address: rebindCalls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    if (host === 'hooks.internal.example' || host === 'redirect.internal.example') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'private.example') return [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }];
    return systemResolver(host);
  };

  const submit = (g: RunningGateway, url: string) =>
    fetch(`${g.url}/v1/jobs?model=simple`, {
      method: 'POST',
      body: simpleBody(1),
      headers: { authorization: `Bearer ${KEY.tenant}`, 'content-type': 'application/json', 'x-tessera-webhook-url': url },
    });

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-webhook-node', '--advertise-host', '127.0.0.1']);
    [victim, receiver, redirector] = await Promise.all([listen(), listen(), listen((req) => ({ status: 302, headers: { location: new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/' } }))]);
    const tenants = [{ id: 'hooks', tier: 'standard', keys: [{ id: 'h1', hash: await sha256Hex(KEY.tenant) }] }];
    const config = loadGatewayConfig(
      JSON.stringify({
        tenants,
        // http allowed (the listeners are plain http) and two internal receivers allowlisted by name.
        webhooks: { allowHttp: true, allow: ['hooks.internal.example', 'redirect.internal.example'] },
      }),
    );
    gateway = await startGateway({
      config,
      redisUrl: redis.url,
      adminKey: KEY.admin,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      fleet: { refreshMs: 200 },
      webhookResolver: resolver,
      jobs: { worker: true, concurrency: 2, webhooks: { backoffMs: 20, attempts: 2 } },
    });
    strict = await startGateway({ config: loadGatewayConfig(JSON.stringify({ tenants })), redisUrl: redis.url, adminKey: KEY.admin, port: 0, host: '127.0.0.1', logger: silentLogger, webhookResolver: resolver });
    const rotated = await fetch(`${gateway.url}/admin/tenants/hooks/webhook-secret`, { method: 'POST', headers: { authorization: `Bearer ${KEY.admin}` } });
    expect(rotated.status).toBe(201);
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await strict?.close({ graceMs: 500 });
    await gateway?.close({ graceMs: 1000 });
    await Promise.all([victim, receiver, redirector].map((l) => l?.close()));
    await node?.stop();
    await redis?.stop();
  });

  it('refuses every spelling of loopback, private, link-local and other internal targets at submission (400 naming the problem)', async () => {
    const p = victim.port;
    const cases: [string, RegExp][] = [
      [`http://127.0.0.1:${p}/hook`, /its host is 127\.0\.0\.1, a loopback address/],
      [`http://2130706433:${p}/hook`, /its host is 127\.0\.0\.1, a loopback address/],
      [`http://0177.0.0.1:${p}/hook`, /its host is 127\.0\.0\.1, a loopback address/],
      [`http://0x7f.1:${p}/hook`, /its host is 127\.0\.0\.1, a loopback address/],
      [`http://127.1:${p}/hook`, /its host is 127\.0\.0\.1, a loopback address/],
      [`http://[::ffff:127.0.0.1]:${p}/hook`, /IPv4-mapped IPv6 address/],
      [`http://[::1]:${p}/hook`, /loopback address/],
      [`http://[::127.0.0.1]:${p}/hook`, /IPv4-compatible IPv6 address/],
      ['http://169.254.169.254/latest/meta-data/', /link-local address/],
      ['http://10.0.0.1/hook', /private \(RFC 1918\) address/],
      ['http://172.16.5.4/hook', /private \(RFC 1918\) address/],
      ['http://192.168.1.1/hook', /private \(RFC 1918\) address/],
      ['http://100.64.0.1/hook', /carrier-grade NAT/],
      [`http://0.0.0.0:${p}/hook`, /unspecified/],
      [`http://0:${p}/hook`, /unspecified/],
      [`http://[::]:${p}/hook`, /unspecified/],
      ['http://[fd00::1]/hook', /unique-local/],
      ['http://[fe80::1]/hook', /link-local/],
      ['http://224.0.0.1/hook', /multicast/],
      ['http://255.255.255.255/hook', /broadcast/],
      ['http://[64:ff9b::a00:1]/hook', /NAT64 address of a private/],
      [`http://localhost:${p}/hook`, /its host 'localhost' resolves to .*, a loopback address/],
      ['http://private.example/hook', /its host 'private\.example' resolves to 10\.0\.0\.5, a private \(RFC 1918\) address/],
      // The attack of the review: the node's own unload route.
      [`http://127.0.0.1:${node.httpPort}/v2/repository/models/simple/unload`, /loopback address/],
    ];
    for (const [url, problem] of cases) {
      const res = await submit(gateway, url);
      const text = await res.text();
      expect(res.status, `${url}: ${text}`).toBe(400);
      expect((JSON.parse(text) as { error: string }).error, url).toMatch(problem);
    }
    // Nothing queued, nothing sent: the listener saw nothing and the node still serves the model.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(victim.hits).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/simple/ready`)).status).toBe(200);
  });

  it('refuses http:// unless the config allows it (default: https only)', async () => {
    const res = await submit(strict, `http://hooks.internal.example:${receiver.port}/hook`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/must be an https URL, got scheme 'http'.*webhooks\.allowHttp/);
    expect(loadGatewayConfig('{}').webhooks).toEqual({ allowHttp: false, allow: [] });
  });

  it('delivers to an allowlisted internal receiver (the listeners work), but never follows its redirect', async () => {
    const delivered = await submit(gateway, `http://hooks.internal.example:${receiver.port}/hook`);
    expect(delivered.status, await delivered.clone().text()).toBe(202);
    await waitFor(() => receiver.hits.length === 1, { what: 'the allowlisted delivery', timeoutMs: 20_000 });
    expect(receiver.hits).toEqual(['POST /hook']);

    const redirectUrl = `http://127.0.0.1:${victim.port}/stolen`;
    const redirected = await submit(gateway, `http://redirect.internal.example:${redirector.port}/hook?to=${encodeURIComponent(redirectUrl)}`);
    expect(redirected.status).toBe(202);
    await waitFor(() => redirector.hits.length >= 2, { what: 'both delivery attempts (a 302 is not a delivery)', timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(victim.hits).toEqual([]);
  });

  it('DNS rebinding: a name public at submission and loopback at delivery is refused right before connecting', async () => {
    const res = await submit(gateway, `http://rebind.example:${victim.port}/hook`);
    const accepted = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(accepted)).toBe(202);
    const deliveries = new Queue('webhooks', { connection: { url: redis.url }, prefix: jobKeys('tessera:').bullPrefix });
    try {
      const failed = await waitFor(async () => {
        // The state first, then the job: a job read before its state could be a snapshot from before it failed.
        if ((await deliveries.getJobState(`wh-${accepted.id}`)) !== 'failed') return undefined;
        return deliveries.getJob(`wh-${accepted.id}`);
      }, { what: 'the refused delivery', timeoutMs: 20_000 });
      expect(failed.failedReason, JSON.stringify({ reason: failed.failedReason, attempts: failed.attemptsMade })).toMatch(/rebind\.example' now resolves to 127\.0\.0\.1, a loopback address: not delivered/);
      // Refused once, never retried (the policy will not change its mind).
      expect(failed.attemptsMade).toBe(1);
    } finally {
      await deliveries.close();
    }
    expect(rebindCalls).toBeGreaterThanOrEqual(2);
    expect(victim.hits).toEqual([]);
  });
});
