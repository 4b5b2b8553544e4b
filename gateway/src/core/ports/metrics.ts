/**
 * What the core tells the metrics backend (prom-client on Node). Labels are bounded by construction:
 * tenant ids (never keys), tier names, model names the tenant may use, HTTP status codes; the adapter
 * additionally caps the number of distinct values per label.
 */
export type GatewayRoute =
  | 'infer'
  | 'model_metadata'
  | 'model_config'
  | 'model_ready'
  | 'model_statistics'
  | 'repository_index'
  | 'server'
  | 'health'
  | 'admin'
  | 'metrics'
  | 'jobs'
  | 'llm_models'
  | 'completions'
  | 'chat_completions'
  | 'generate'
  | 'generate_stream'
  | 'other';

export type AuthRejection = 'missing' | 'malformed' | 'unknown_key' | 'disabled' | 'forbidden_model' | 'admin';

export interface RequestObservation {
  readonly route: GatewayRoute;
  /** '' before authentication (the adapter writes it as "_anonymous"). */
  readonly tenant: string;
  readonly tier: string;
  /** '' for routes without a model. */
  readonly model: string;
  readonly status: number;
  readonly seconds: number;
}

export interface GatewayMetrics {
  request(observation: RequestObservation): void;
  rateLimited(tenant: string, tier: string): void;
  authRejected(reason: AuthRejection): void;
  /** LLM tokens metered for a tenant and model: `in` = prompt, `out` = completion (optional: LLM routes only). */
  llmTokens?(tenant: string, model: string, direction: 'in' | 'out', tokens: number): void;
  /** The exposition text for `/metrics`. */
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}
