/**
 * The LLM POST routes served from start to end without Hono, for servers that can skip Web
 * Request/Response (adapters/node-http/native-llm.ts): the same steps, in the same order, as the Hono
 * middlewares, llm-routes.ts and the app's error handler (request id and root span -> authentication ->
 * llm-service.ts -> extra headers -> metric, span end, access line), built from the same functions, as
 * core/app/direct-infer.ts does for infer. A streamed answer comes back as the relay itself
 * (`LlmAnswer.stream`), for the server to write the node's bytes straight to its client.
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { noopTracer } from '../../../../shared/src/tracing/index.js';
import type { AuthContext } from '../auth/index.js';
import type { CancelSignal, HeaderReader } from '../http/index.js';
import type { GatewayRoute } from '../ports/index.js';
import { authenticateRequest, failureAnswer, finishRequest } from '../app/request-cycle.js';
import { beginRequest, REQUEST_ID_HEADER, type RequestFacts } from '../app/request-telemetry.js';
import { SSE_HEADERS, type StreamedAnswer } from './llm-forward.js';
import { createLlmService, type LlmAnswer, type LlmExchange, type LlmRouteDeps } from './llm-service.js';
import type { LlmPostTarget } from './llm-path.js';

export interface DirectLlmRequest {
  /** The URL's path as sent, without the query (for the access line and the span). */
  readonly path: string;
  readonly headers: HeaderReader;
  readBody(maxBytes: number): Promise<Uint8Array>;
  /** Aborts when the client goes away. */
  readonly signal: CancelSignal;
  /** Aborts `signal`, when the caller owns its controller (passed on as LlmForwardRequest.abort, which says why). */
  readonly abort?: () => void;
  /**
   * Writes an admitted stream to the client now, in the turn the node's head came (LlmForwardRequest.startStream):
   * with the answer's headers, and `recordRequest` to call after the first bytes as for a returned stream. False:
   * not now (the stream then comes back in the answer). Absent: streams come back in the answer.
   */
  readonly startStream?: (stream: StreamedAnswer, headers: Record<string, string>, recordRequest: () => void) => boolean;
}

/**
 * `recordRequest`, on a streamed answer: the request's metric, span end and access line, for the server
 * to call once the stream's first bytes are written (or it ended without any), so that work never sits
 * between the node's first event and the client. Absent: already recorded.
 */
export type DirectLlmAnswer = LlmAnswer & { readonly recordRequest?: () => void };

export type DirectLlm = (request: DirectLlmRequest, target: LlmPostTarget) => Promise<DirectLlmAnswer>;

export function createDirectLlm(deps: LlmRouteDeps & { readonly logger: Logger }): DirectLlm {
  const { config, metrics, logger, now } = deps;
  const tracer = deps.tracer ?? noopTracer;
  const service = createLlmService(deps);
  return async (request, target) => {
    const started = now();
    const telemetry = beginRequest(tracer, 'POST', request.path, request.headers);
    const parent = telemetry.span.context();
    const extra: Record<string, string> = { [REQUEST_ID_HEADER]: telemetry.requestId };
    let route: GatewayRoute = 'other';
    let model = '';
    let auth: AuthContext | undefined;
    const facts = (): RequestFacts => ({ tenant: auth?.tenant.id ?? '', tier: auth?.tier.name ?? '', model, route });
    const startStream = request.startStream;
    const exchange: LlmExchange = {
      headers: request.headers,
      readBody: (maxBytes) => request.readBody(maxBytes),
      signal: request.signal,
      ...(request.abort === undefined ? {} : { abort: request.abort }),
      traceParent: parent,
      setRoute: (r) => void (route = r),
      setModel: (m) => void (model = m),
      setAuth: (a) => void (auth = a),
      addHeaders: (h) => void Object.assign(extra, h),
      // The same headers and record a returned stream gets below (a stream's status is 200).
      ...(startStream === undefined
        ? {}
        : { startStream: (stream: StreamedAnswer) => startStream(stream, withHeaders(SSE_HEADERS, extra), () => finishRequest(metrics, logger, telemetry, { method: 'POST', path: request.path }, facts(), 200, now() - started)) }),
    };
    let answer: LlmAnswer;
    try {
      if (target.kind === 'generate') {
        // As the /v2 middleware: authenticated before the route is known to be generate.
        auth = await authenticateRequest(deps.tenants, config.tiers, tracer, parent, request.headers);
        answer = await service.generate(target.streamed, exchange, auth, target.model, target.version);
      } else {
        answer = await service.completion(target.kind, exchange);
      }
    } catch (error) {
      answer = failureAnswer(error, metrics, logger, telemetry, facts(), request.signal.aborted);
    }
    const status = answer.status;
    const record = (): void => finishRequest(metrics, logger, telemetry, { method: 'POST', path: request.path }, facts(), status, now() - started);
    const headers = withHeaders(answer.headers, extra);
    // A stream started at the node's head records itself (startStream's recordRequest).
    if (answer.stream?.started === true) return { ...answer, headers };
    if (answer.stream !== undefined) return { ...answer, headers, recordRequest: record };
    record();
    return { ...answer, headers };
  };
}

/** `extra` set over `headers` the way Web Headers#set does it: a name replaces any spelling of itself. */
function withHeaders(headers: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  // A short list searched in place: no Set or mapped array per answer (this runs before a stream's first byte).
  const extraNames: string[] = [];
  for (const name in extra) extraNames.push(name.toLowerCase());
  const out: Record<string, string> = {};
  for (const name in headers) if (!extraNames.includes(name.toLowerCase())) out[name] = headers[name]!;
  return Object.assign(out, extra);
}
