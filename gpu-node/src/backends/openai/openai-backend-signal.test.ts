/**
 * The openai backend and a request signal that outlives the request: the node's HTTP fast path shares
 * one signal among a connection's requests (server/http/connection-signal.ts), so whatever the backend
 * adds to it must be gone when the request settles, answered, failed upstream or unreachable alike.
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesTensor, cpuSpec, modelConfig, request, tempRepo, type TempRepo } from '../../../test/support/backend-test-support.js';
import { startEngineDouble, type EngineDouble } from '../../../test/llm/engine-double.js';
import type { BackendInstance, ModelSource } from '../backend.js';
import { createOpenAIBackend } from './openai-backend.js';

function remoteConfig(name: string, baseUrl: string) {
  return modelConfig({
    name,
    backend: 'openai',
    input: [{ name: 'text_input', dataType: 13, dims: [1n] }],
    output: [{ name: 'text_output', dataType: 13, dims: [-1n] }],
    parameters: { base_url: { stringValue: baseUrl }, upstream_model: { stringValue: 'engine-model' } },
  });
}

describe('the openai backend with a long-lived request signal', () => {
  let engine: EngineDouble;
  let repo: TempRepo;
  let live: BackendInstance;
  let dead: BackendInstance;

  beforeAll(async () => {
    engine = await startEngineDouble();
    repo = await tempRepo();
    const backend = createOpenAIBackend();
    const liveSource: ModelSource = await repo.source(remoteConfig('remote', engine.baseUrl), 'model.json', '{}');
    // Port 9 (discard): nothing listens there on a test box, so the connection is refused.
    const deadSource: ModelSource = await repo.source(remoteConfig('dead', 'http://127.0.0.1:9/v1'), 'model.json', '{}');
    live = await backend.createInstance(liveSource, cpuSpec('remote_0'));
    dead = await backend.createInstance(deadSource, cpuSpec('dead_0'));
  });

  afterAll(async () => {
    await live?.close();
    await dead?.close();
    await engine?.close();
    await repo?.remove();
  });

  it('leaves no abort listener on the signal once each request settles', async () => {
    const connection = new AbortController();
    for (let i = 0; i < 10; i++) {
      const prompt = (text: string) => ({ ...request([bytesTensor('text_input', [1], [text])]), signal: connection.signal });
      const [ok, failed, unreachable] = await Promise.all([
        live.execute([prompt(`hello ${i}`)]),
        live.execute([prompt('fail')]),
        dead.execute([prompt('anyone?')]),
      ]);
      expect(ok.results[0]).toHaveProperty('outputs');
      expect(failed.results[0]).toHaveProperty('error');
      expect(unreachable.results[0]).toHaveProperty('error');
    }
    expect(getEventListeners(connection.signal, 'abort')).toHaveLength(0);
  });
});
