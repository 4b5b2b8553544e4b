export { createRawH2Front, type RawH2Front } from './front.js';
export { DEFAULT_RAW_H2_LIMITS, RawH2Connection, type RawH2Limits, type StreamHandler } from './connection.js';
export { RawH2Stream } from './raw-stream.js';
export { relayStream } from './relay.js';
export type { RequestHeaders } from './request-headers.js';
export { encodeHeaderBlock, pushInteger } from './hpack-encoder.js';
export { HpackDecoder, HpackError } from './hpack-decoder.js';
export { huffmanDecode, huffmanEncode, HUFFMAN_CODES } from './huffman.js';
export * from './frame.js';
export { rawH2TakingFront, type RawStreamTaker, type TakingFront, type TakingFrontOptions } from './taking-front.js';
export {
  DEFAULT_RAW_H2_CLIENT_LIMITS,
  RawH2ClientConnection,
  RawH2ClientRefusal,
  type RawH2ClientEvents,
  type RawH2ClientLimits,
} from './client-connection.js';
export { RawH2ClientStream, requestBlock, type ClientStreamEnd, type ClientStreamHandler, type RequestBlock, type ResponseFields } from './client-stream.js';
