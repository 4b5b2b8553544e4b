/**
 * `node --import tsx gateway/test/llm/cancel-latency-probe.ts [rounds] [OUT.json]`: how long after a
 * client closes a stream through the gateway the model on the node sees its cancellation, with the
 * node reached over HTTP/2 and over HTTP/1.1 (the target: within 50 ms). The fleet of the
 * gateway's LLM suites (gateway/test/support/llm-fleet.ts); the moment the model saw it is the mtime
 * of the line it appends to its cancellation log. A probe, not a test: timings have no place in tests.
 */
import { stat, writeFile } from 'node:fs/promises';
import { waitFor } from '../../../shared/test/support/index.js';
import { LLM_KEYS, longPrompt, startLlmFleet } from '../support/llm-fleet.js';

const rounds = Number(process.argv[2] ?? 20);
const out = process.argv[3];
const results: Record<string, number[]> = {};

for (const upstream of ['h2', 'http1'] as const) {
  const fleet = await startLlmFleet({ tokenDelayMs: 2, upstream });
  const latencies: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const before = (await fleet.repository.cancellations()).length;
      const abort = new AbortController();
      const response = await fleet.call(LLM_KEYS.a, '/v1/completions', { model: 'token_stream', prompt: longPrompt(1000), stream: true }, { signal: abort.signal });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
      const reader = response.body!.getReader();
      for (let events = 0; events < 3; events++) await reader.read();
      const closedAt = Date.now();
      abort.abort();
      await reader.cancel().catch(() => undefined);
      await waitFor(async () => ((await fleet.repository.cancellations()).length > before ? true : undefined), { what: 'the cancellation', timeoutMs: 10_000 });
      latencies.push((await stat(fleet.repository.cancelLog)).mtimeMs - closedAt);
    }
  } finally {
    await fleet.stop();
  }
  latencies.sort((a, b) => a - b);
  results[upstream] = latencies;
  const at = (q: number): string => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(`${upstream}: client close -> model sees it, ms: p50 ${at(0.5)}, p90 ${at(0.9)}, max ${at(1)} (${rounds} streams)`);
}
if (out !== undefined) await writeFile(out, `${JSON.stringify({ rounds, latenciesMs: results }, null, 2)}\n`);
