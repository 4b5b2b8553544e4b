/**
 * What the LLM benches put behind the gateway: Redis, the engine double (`itlMs` between tokens) and a node
 * serving it as `llm_engine` with `instances` instances, its LLM routes on HTTP/1.1 and on h2c, reporting to
 * Redis under `nodeId`. Each process is pushed on `stack` as soon as it starts, so a failed start leaves
 * nothing running.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRedisServer } from '../../../shared/test/support/index.js';
import { engineModelConfig, launchEngineDouble } from '../lib/processes/llm-bench-servers.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import type { ProcessStack } from './fleet-launch.js';

export interface LlmBenchUpstream {
  readonly redisUrl: string;
  readonly node: RunningNode;
}

/** `extraModels`: more models over the same engine, by name, each with these config lines added (llm-interval.ts). */
export async function startLlmBenchUpstream(
  work: string,
  stack: ProcessStack,
  nodeId: string,
  instances: number,
  itlMs: number,
  extraModels: Readonly<Record<string, readonly string[]>> = {},
): Promise<LlmBenchUpstream> {
  const redis = await startRedisServer();
  stack.push(redis);
  const engine = await launchEngineDouble(work, itlMs);
  stack.push(engine);
  const repo = join(work, 'repo');
  await mkdir(join(repo, 'llm_engine', '1'), { recursive: true });
  await writeFile(join(repo, 'llm_engine', 'config.pbtxt'), engineModelConfig(`http://127.0.0.1:${engine.port}/v1`, instances));
  for (const [name, lines] of Object.entries(extraModels)) {
    await mkdir(join(repo, name, '1'), { recursive: true });
    await writeFile(join(repo, name, 'config.pbtxt'), engineModelConfig(`http://127.0.0.1:${engine.port}/v1`, instances, name, lines));
  }
  const node = await launchNode({ modelRepository: repo, extraArgs: ['--redis-url', redis.url, '--node-id', nodeId, '--advertise-host', '127.0.0.1', '--llm-h2c-port', '0'] });
  stack.push(node);
  await waitForModelReady(node.httpBase, 'llm_engine');
  for (const name of Object.keys(extraModels)) await waitForModelReady(node.httpBase, name);
  return { redisUrl: redis.url, node };
}
