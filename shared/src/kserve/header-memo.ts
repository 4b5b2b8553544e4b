/**
 * Decoded JSON headers of binary-extension requests, kept by their exact text. A client sends the same
 * header with every request (perf_analyzer and Triton's clients change only the bytes after it), and
 * under the `mlp_large` wave parsing and checking it took ~9% of the node's event loop. Only headers
 * whose inputs are all binary are kept: their decode does not depend on the bytes that follow. What is
 * kept is frozen, because every request that sends the header shares it. Bounded: at most
 * HEADER_MEMO_ENTRIES headers of at most HEADER_MEMO_MAX_CHARS each; a client that sends a new header
 * every time only refills it.
 */
import type { Parameters, RequestedOutput } from '../tensors/index.js';

export const HEADER_MEMO_ENTRIES = 64;
export const HEADER_MEMO_MAX_CHARS = 4096;

/** One binary input as its header declares it. */
export interface HeaderInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly byteSize: number;
}

/** Everything a request's decode takes from its JSON header when all its inputs are binary. */
export interface HeaderTemplate {
  readonly id: string;
  readonly parameters: Parameters;
  readonly inputs: readonly HeaderInput[];
  readonly outputs: readonly RequestedOutput[] | undefined;
  readonly binaryOutputDefault: boolean;
  readonly outputBinary: ReadonlyMap<string, boolean>;
}

/** A map that holds frozen templates and starts over when full (no per-hit bookkeeping). */
export class HeaderMemo {
  private readonly templates = new Map<string, HeaderTemplate>();
  /** Decodes answered from the memo (for tests and diagnosis). */
  hits = 0;

  get(text: string): HeaderTemplate | undefined {
    const template = this.templates.get(text);
    if (template !== undefined) this.hits += 1;
    return template;
  }

  /** Keeps `template` for `text` (frozen in depth), unless the text is too long to be worth holding. */
  remember(text: string, template: HeaderTemplate): void {
    if (text.length > HEADER_MEMO_MAX_CHARS) return;
    if (this.templates.size >= HEADER_MEMO_ENTRIES) this.templates.clear();
    this.templates.set(text, freezeTemplate(template));
  }

  get size(): number {
    return this.templates.size;
  }
}

function freezeTemplate(template: HeaderTemplate): HeaderTemplate {
  for (const input of template.inputs) Object.freeze(Object.freeze(input).shape);
  Object.freeze(template.inputs);
  for (const output of template.outputs ?? []) Object.freeze(output);
  if (template.outputs !== undefined) Object.freeze(template.outputs);
  Object.freeze(template.parameters);
  return Object.freeze(template);
}
