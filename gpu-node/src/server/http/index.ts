export { createHttpServer, type HttpServer } from './http-server.js';
export {
  DEFAULT_LOG_SETTINGS,
  DEFAULT_MAX_BODY_SIZE,
  DEFAULT_MAX_INPUT_SIZE,
  type HttpLimits,
  type HttpServerOptions,
  type LogSettings,
} from './server-options.js';
export type { HttpLogger } from './responses.js';
