/**
 * The LLM suites' node: the example repository's `token_stream` (decoupled, vLLM-style I/O) with a
 * short token delay and a cancellation log the model appends to whenever a request saw its signal.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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

/**
 * Writes a decoupled typescript-backend model `name` (max_batch_size 0) into `repository`: `io` are its
 * config.pbtxt lines after the common head (inputs, outputs, parameters), `model` its model.js lines.
 */
export async function writeDecoupledScriptModel(repository: string, name: string, files: { io: readonly string[]; model: readonly string[] }): Promise<void> {
  const folder = join(repository, name);
  await mkdir(join(folder, '1'), { recursive: true });
  const head = [`name: "${name}"`, 'backend: "typescript"', 'default_model_filename: "model.js"', 'max_batch_size: 0', 'model_transaction_policy { decoupled: true }'];
  await writeFile(join(folder, 'config.pbtxt'), [...head, ...files.io, ''].join('\n'));
  await writeFile(join(folder, '1', 'package.json'), '{ "type": "module" }\n');
  await writeFile(join(folder, '1', 'model.js'), [...files.model, ''].join('\n'));
}
