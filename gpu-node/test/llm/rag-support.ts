/**
 * The RAG suites' repository: the example `rag_pipeline` with its composing models, answering with
 * `token_stream` instead of tiny_decoder (a config change; the retriever then needs no prompt budget), pausing `tokenDelayMs` per token and
 * logging the requests that saw their signal. token_stream echoes its prompt, so the streamed answer
 * shows the passages the retriever chose.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RAG_PIPELINE_NAME, ragPipelineConfigText, ragRetrieverConfigText, tokenStreamConfigText } from '../../src/example-models/index.js';
import { exampleRepository } from '../support.js';

export interface RagRepository {
  readonly dir: string;
  /** Lines token_stream wrote to its cancellation log so far. */
  cancellations(): Promise<string[]>;
}

export async function ragRepository(tokenDelayMs = 5): Promise<RagRepository> {
  const dir = await exampleRepository(['rag_query', 'query_encoder', 'retriever', 'token_stream', RAG_PIPELINE_NAME]);
  await writeFile(join(dir, RAG_PIPELINE_NAME, 'config.pbtxt'), ragPipelineConfigText({ decoder: 'token_stream' }));
  // token_stream has no small context: the whole corpus may go into a prompt (long answers to cancel).
  await writeFile(join(dir, 'retriever', 'config.pbtxt'), ragRetrieverConfigText({ maxPromptBytes: 0 }));
  const cancelLog = join(dir, 'cancelled.log');
  await writeFile(join(dir, 'token_stream', 'config.pbtxt'), tokenStreamConfigText({ tokenDelayMs, cancelLog }));
  return {
    dir,
    async cancellations() {
      const text = await readFile(cancelLog, 'utf8').catch(() => '');
      return text.split('\n').filter((line) => line !== '');
    },
  };
}

/** A question the bundled corpus answers with its 'Dynamic batching' passage. */
export const BATCHING_QUESTION = 'How does dynamic batching merge requests?';
export const BATCHING_PASSAGE = '[1] Dynamic batching: The dynamic batcher holds requests';

/** The events of a Server-Sent Events body, each one's `data:` JSON parsed. */
export function sseEvents(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)) as Record<string, unknown>);
}
