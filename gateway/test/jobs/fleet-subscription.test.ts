/**
 * The gateway and the tessera-jobs process, started as people start them (their own lazyConnect Redis
 * client), subscribe to the fleet's join/leave channel: PUBSUB NUMSUB counts both.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetKeys } from '../../../shared/src/fleet/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { jobsConfig, startJobsProcess, type JobsProcess } from './jobs-fixtures.js';

describe('fleet events reach the gateway and tessera-jobs', () => {
  let redis: RedisServer;
  let probe: Redis;
  let gateway: RunningGateway | undefined;
  let jobs: JobsProcess | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    probe = new Redis(redis.url);
  });

  afterAll(async () => {
    await jobs?.stop();
    await gateway?.close({ graceMs: 500 });
    probe?.disconnect();
    await redis?.stop();
  });

  const subscribers = async (): Promise<number> => {
    const reply = (await probe.pubsub('NUMSUB', fleetKeys().eventsChannel)) as [string, number];
    return Number(reply[1]);
  };

  it('the gateway subscribes, then tessera-jobs too', async () => {
    expect(await subscribers()).toBe(0);
    gateway = await startGateway({ config: await jobsConfig(), redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger });
    await waitFor(async () => (await subscribers()) >= 1, { what: "the gateway's subscription", timeoutMs: 10_000 });
    jobs = await startJobsProcess(redis.url);
    await waitFor(async () => (await subscribers()) >= 2, { what: "tessera-jobs' subscription", timeoutMs: 10_000 });
  });
});
