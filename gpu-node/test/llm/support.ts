/**
 * The LLM suites' node: the example repository's `token_stream` (decoupled, vLLM-style I/O) with a
 * short token delay and a cancellation log the model appends to whenever a request saw its signal.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tokenStreamConfigText, type TokenStreamConfigOptions } from '../../src/example-models/index.js';
import { exampleRepository } from '../support.js';

export interface LlmRepository {
  readonly dir: string;
  readonly cancelLog: string;
  /** Lines the model wrote to its cancellation log so far. */
  cancellations(): Promise<string[]>;
}

export async function llmRepository(options: TokenStreamConfigOptions = {}): Promise<LlmRepository> {
  const dir = await exampleRepository(['token_stream']);
  const cancelLog = join(dir, 'cancelled.log');
  await writeFile(join(dir, 'token_stream', 'config.pbtxt'), tokenStreamConfigText({ tokenDelayMs: 2, cancelLog, ...options }));
  return {
    dir,
    cancelLog,
    async cancellations() {
      const text = await readFile(cancelLog, 'utf8').catch(() => '');
      return text.split('\n').filter((line) => line !== '');
    },
  };
}

/** Polls `check` every 50 ms until it is true or `timeoutMs` (generous: a busy 2-core box) passes. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/** `n` words: a prompt long enough that streaming it takes a while. */
export function longPrompt(n: number): string {
  return Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
}
