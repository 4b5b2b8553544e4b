/**
 * The cl100k_base counter alone (what the gateway charges tokens with), in a module that imports only
 * that encoding: a bundle (the Workers build) that loads the counter this way carries one BPE table,
 * not the four token-counter.ts can load.
 */
import { byteLevelBound, countInPieces, type TokenCounter } from './token-counter.js';

let counter: Promise<TokenCounter> | undefined;

export function loadCl100kCounter(): Promise<TokenCounter> {
  counter ??= import('gpt-tokenizer/encoding/cl100k_base').then((module) => {
    const options = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
    return { count: (text: string) => (text === '' ? 0 : countInPieces(text, (piece) => module.encode(piece, options).length)), upperBound: byteLevelBound };
  });
  return counter;
}
