/**
 * The plainest greedy decoder for the exactness tests: one request alone, its cache exactly as long as
 * its tokens (no padding, no batch, no engine), straight on onnxruntime. What continuous batching
 * produces must be identical to this.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

export interface ReferenceDecoder {
  /** The greedy text of `prompt`, up to maxTokens tokens or the end-of-sequence token. */
  generate(prompt: string, maxTokens: number): Promise<string>;
  release(): Promise<void>;
}

export async function referenceDecoder(versionDir: string): Promise<ReferenceDecoder> {
  const session = await ort.InferenceSession.create(join(versionDir, 'model.onnx'), { intraOpNumThreads: 1 });
  const tokenizer = new Tokenizer(JSON.parse(await readFile(join(versionDir, 'tokenizer.json'), 'utf8')), JSON.parse(await readFile(join(versionDir, 'tokenizer_config.json'), 'utf8')));
  const eos = tokenizer.token_to_id('<|endoftext|>');
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pasts[0]);
  const [, heads, , headDim] = meta?.isTensor === true ? (meta.shape as number[]) : [];
  const int64 = (values: number[], dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);
  return {
    async generate(prompt, maxTokens) {
      const ids: number[] = tokenizer.encode(prompt, { add_special_tokens: false }).ids;
      const feeds: Record<string, ort.Tensor> = {
        input_ids: int64(ids, [1, ids.length]),
        position_ids: int64(ids.map((_, i) => i), [1, ids.length]),
        attention_mask: int64(ids.map(() => 1), [1, ids.length]),
      };
      for (const name of pasts) feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, heads as number, 0, headDim as number]);
      const out: number[] = [];
      let length = ids.length;
      for (;;) {
        const result = await session.run(feeds);
        const logits = result['logits']!.data as Float32Array;
        const vocab = result['logits']!.dims[2] as number;
        const offset = logits.length - vocab;
        let best = 0;
        for (let i = 1; i < vocab; i++) if ((logits[offset + i] as number) > (logits[offset + best] as number)) best = i;
        if (best === eos) break;
        out.push(best);
        if (out.length >= maxTokens) break;
        feeds['input_ids'] = int64([best], [1, 1]);
        feeds['position_ids'] = int64([length], [1, 1]);
        length += 1;
        feeds['attention_mask'] = int64(new Array<number>(length).fill(1), [1, length]);
        for (const name of pasts) feeds[name] = result[name.replace('past_key_values', 'present')] as ort.Tensor;
      }
      return tokenizer.decode(out, { skip_special_tokens: true });
    },
    release: () => session.release(),
  };
}
