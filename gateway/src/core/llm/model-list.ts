/**
 * Which LLM models the fleet serves: the union of the nodes' own `GET /v1/models` (a node lists the
 * READY models with the vLLM-style I/O, which the gateway cannot tell from load reports), asked of
 * every node serving at least one model, kept for `ttlMs` so a listing costs no fan-out each time.
 * A node that does not answer is left out of that listing.
 */
import type { LlmUpstream, NodeView } from '../ports/index.js';
import type { LlmRouter } from './llm-router.js';

const LIST_TTL_MS = 2000;
const MAX_LIST_BYTES = 1024 * 1024;

export class LlmModelList {
  private cached: { at: number; names: Promise<string[]> } | undefined;

  constructor(
    private readonly router: LlmRouter,
    private readonly upstream: LlmUpstream,
    private readonly timeoutMs: number,
    private readonly now: () => number,
    private readonly ttlMs = LIST_TTL_MS,
  ) {}

  static entry(name: string): Record<string, unknown> {
    return { id: name, object: 'model', created: 0, owned_by: 'tessera' };
  }

  names(_signal: AbortSignal): Promise<string[]> {
    const at = this.now();
    if (this.cached === undefined || at - this.cached.at > this.ttlMs) {
      this.cached = { at, names: this.fetchAll() };
    }
    return this.cached.names;
  }

  private async fetchAll(): Promise<string[]> {
    const nodes = this.router.nodes().filter((node) => node.httpAddress !== null && !node.draining && node.models.size > 0);
    const lists = await Promise.all(nodes.map((node) => this.fetchOne(node).catch(() => [] as string[])));
    return [...new Set(lists.flat())].sort();
  }

  private async fetchOne(node: NodeView): Promise<string[]> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    try {
      const response = await this.upstream.send(node, { method: 'GET', path: '/v1/models', signal: abort.signal, headersTimeoutMs: this.timeoutMs });
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        text += decoder.decode(chunk, { stream: true });
        if (text.length > MAX_LIST_BYTES) return [];
      }
      if (response.status !== 200) return [];
      const data = (JSON.parse(text) as { data?: { id?: unknown }[] }).data;
      return Array.isArray(data) ? data.map((m) => m.id).filter((id): id is string => typeof id === 'string' && node.models.has(id)) : [];
    } finally {
      clearTimeout(timer);
    }
  }
}
