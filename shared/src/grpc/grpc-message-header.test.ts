import { describe, expect, it } from 'vitest';
import { decodeGrpcMessage } from './grpc-message-header.js';

describe('grpc-message header', () => {
  it('percent-decodes, keeps plain text and invalid encodings as sent, joins repeated values', () => {
    expect(decodeGrpcMessage('Request%20for%20unknown%20model%3A%20%27x%27')).toBe("Request for unknown model: 'x'");
    expect(decodeGrpcMessage('plain text')).toBe('plain text');
    expect(decodeGrpcMessage('100%')).toBe('100%');
    expect(decodeGrpcMessage(['a', 'b%21'])).toBe('a,b!');
    expect(decodeGrpcMessage(undefined)).toBe('');
  });
});
