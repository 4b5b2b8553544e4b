/**
 * The node's HTTP server (tritonserver's port 8000). Infer requests take the node:http fast path
 * (native-infer.ts), the LLM streams theirs (native-llm.ts); Hono routes everything else, through @hono/node-server, which aborts each
 * Request's `signal` when its client disconnects before the answer is written. Both paths hand that
 * signal to `core.infer`, which is what lets an abandoned inference be dropped.
 */
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createLogger } from '../../../../shared/src/logging/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { NO_RESTRICTIONS } from '../restricted-apis.js';
import { createNativeInferListener } from './native-infer.js';
import { createRawInferHandler } from './raw-infer.js';
import { attachRawHttp1, type RawHttp1FrontDoor } from '../../../../shared/src/http/raw-http1/index.js';
import { createNativeLlmListener, rememberNativeLlmListener } from './native-llm.js';
import { buildApp } from './routes.js';
import { DEFAULT_LOG_SETTINGS, resolveLimits, type HttpServerOptions } from './server-options.js';
import { LogSettingsStore } from './settings-routes.js';
import { applyServerTimeouts, limitPipelinedRequests } from '../../../../shared/src/http/index.js';
import { closeWithin, listenAddress } from './listen-address.js';

export interface HttpServer {
  /** The Hono app; `app.fetch(request)` serves a request without a socket (tests, embedding). */
  readonly app: Hono;
  /** Starts listening; port 0 picks a free port, reported back. */
  listen(port: number, host?: string): Promise<{ port: number; host: string }>;
  /**
   * Stops accepting connections and waits for in-flight requests; connections still open after
   * `graceMs` (default 5 s) are cut, so shutdown never hangs on a stuck client.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

export function createHttpServer(core: NodeCore, options: HttpServerOptions = {}): HttpServer {
  const limits = resolveLimits(options);
  const logger = options.logger ?? createLogger({ fields: { component: 'http' } });
  const logSettings = new LogSettingsStore(
    { ...DEFAULT_LOG_SETTINGS, ...options.logSettings },
    options.onLogSettingsChange,
  );
  const restrictions = options.restrictedApis ?? NO_RESTRICTIONS;
  const app = buildApp({ core, limits, logger, logSettings, restrictions });
  const nativeInfer = createNativeInferListener({ core, limits }, logger, restrictions.get('inference'));
  const nativeLlm = createNativeLlmListener({ core, limits }, logger, restrictions.get('inference'));
  rememberNativeLlmListener(app, nativeLlm);
  const routed = getRequestListener(app.fetch);
  let server: Server | undefined;
  let rawFrontDoor: RawHttp1FrontDoor | undefined;

  return {
    app,
    listen(port, host = '0.0.0.0') {
      if (server !== undefined) return Promise.reject(new Error('the HTTP server is already listening'));
      // Pipelined requests beyond the bound on one connection are refused unprocessed (503 + close).
      const created = applyServerTimeouts(
        createServer(
          limitPipelinedRequests((incoming, outgoing) => {
            if (!nativeInfer(incoming, outgoing) && !nativeLlm(incoming, outgoing)) void routed(incoming, outgoing);
          }, options.maxPipelinedRequests),
        ),
      );
      // With the switch on, infer requests are read by our own HTTP/1.1 reader until a request needs node:http.
      if (options.rawHttp1 === true) {
        rawFrontDoor = attachRawHttp1(created, createRawInferHandler({ core, limits }, logger, restrictions.get('inference')), limits.maxBodySize);
      }
      server = created;
      return listenAddress(created, port, host);
    },
    close({ graceMs = 5000 } = {}) {
      const current = server;
      const raw = rawFrontDoor;
      server = undefined;
      rawFrontDoor = undefined;
      if (current === undefined) return Promise.resolve();
      return closeWithin(
        current,
        graceMs,
        () => {
          current.closeIdleConnections();
          raw?.closeIdle();
        },
        () => {
          current.closeAllConnections();
          raw?.closeAll();
        },
      );
    },
  };
}
