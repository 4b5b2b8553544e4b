import { describe, expect, it, vi } from 'vitest';
import { EventTextScanner, textOf, type StreamFormat } from './event-text-scanner.js';

const encoder = new TextEncoder();
/** Tokens as the test counts them: one per character, so any text read wrong shows in the total. */
const countChars = (text: string): number => [...text].length;

/** What a JSON.parse of every `data:` line gives: the reference the scanner must equal. */
function parsedTotal(format: StreamFormat, stream: string): number {
  let total = 0;
  for (const line of stream.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const payload = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
    if (payload === '[DONE]') continue;
    try {
      total += countChars(textOf(format, JSON.parse(payload)));
    } catch {
      // not JSON: no tokens
    }
  }
  return total;
}

const openAI = (text: string, extra = ''): string => `data: {"id":"c1","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":${JSON.stringify(text)},"finish_reason":null}]${extra}}\n\n`;

const utf8 = new TextDecoder();

/** `fromBytes`: pieces without escapes go to a byte counter (`bytePieces`), as the gateway's relay counts them. */
function scan(format: StreamFormat, events: string[], fromBytes = false): { total: number; done: boolean; texts: string[]; bytePieces: string[] } {
  const texts: string[] = [];
  const bytePieces: string[] = [];
  const countUtf8 = (bytes: Uint8Array, from: number, to: number): number => {
    const text = utf8.decode(bytes.subarray(from, to));
    bytePieces.push(text);
    return countChars(text);
  };
  const scanner = new EventTextScanner(
    format,
    (text) => {
      texts.push(text);
      return countChars(text);
    },
    fromBytes ? countUtf8 : undefined,
  );
  let total = 0;
  for (const event of events) total += scanner.tokensIn(encoder.encode(event));
  return { total, done: scanner.sawDone, texts, bytePieces };
}

describe('EventTextScanner', () => {
  it('reads the same text as JSON.parse from a stream of same-shaped events, escapes and non-ASCII included', () => {
    const pieces = ['Hello', ' wörld', ' "q"', ' back\\slash', ' tab\t', ' \u2028', ' 🙂', ' \\"', '', ' end'];
    const events = [...pieces.map((p) => openAI(p)), `data: {"id":"c1","choices":[{"index":0,"text":"","finish_reason":"stop"}],"usage":{"completion_tokens":9}}\n\n`, 'data: [DONE]\n\n'];
    const { total, done, texts } = scan('openai', events);
    expect(texts).toEqual(pieces.filter((p) => p !== ''));
    expect(total).toBe(parsedTotal('openai', events.join('')));
    expect(done).toBe(true);
  });

  it('parses the first event of a shape, not the ones after it (the point of the template)', () => {
    const events = Array.from({ length: 50 }, (_, i) => openAI(` t${i}`));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(scan('openai', events).total).toBe(events.reduce((sum, _, i) => sum + ` t${i}`.length, 0));
      // The first event, and the probe that proves the template.
      expect(parse.mock.calls.length).toBe(2);
    } finally {
      parse.mockRestore();
    }
  });

  it('never takes a look-alike event for the template: bare quotes, other fields, changed heads or tails are parsed', () => {
    const events = [
      openAI('a'),
      openAI('b'),
      // Same head and tail bytes, but the middle closes the string and adds a field: JSON.parse rejects it as a whole.
      'data: {"id":"c1","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":"x","text":"yy","finish_reason":null}]}\n\n',
      // A different id: not the template; parsed.
      'data: {"id":"c2","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":"zz","finish_reason":null}]}\n\n',
      // A control character inside the literal: invalid JSON, no tokens either way.
      `data: {"id":"c1","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":"a\u0001b","finish_reason":null}]}\n\n`,
      // An escape sequence that is not valid JSON.
      'data: {"id":"c1","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":"bad \\x escape","finish_reason":null}]}\n\n',
      openAI('c'),
    ];
    for (const event of events) expect(scan('openai', [events[0]!, event]).total, event).toBe(parsedTotal('openai', events[0]! + event));
    expect(scan('openai', events).total).toBe(parsedTotal('openai', events.join('')));
  });

  it('does not learn a template where the text\'s literal also appears elsewhere in the event', () => {
    // The text "m" is also the model's name: the probe cannot tell which "m" is the text, so nothing is learnt.
    const events = [openAI('m'), openAI('nn'), openAI('ooo')];
    expect(scan('openai', events).total).toBe(parsedTotal('openai', events.join('')));
  });

  it('reads chat deltas and generate_stream events', () => {
    const chat = ['Hi', ' there', ' ✓'].map((t) => `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}},"finish_reason":null}]}\n\n`);
    expect(scan('openai', chat).texts).toEqual(['Hi', ' there', ' ✓']);
    const generate = ['a', ' b"', ' c'].map((t) => `data: {"model_name":"m","model_version":"1","text_output":${JSON.stringify(t)}}\n\n`);
    const { texts, done } = scan('generate', generate);
    expect(texts).toEqual(['a', ' b"', ' c']);
    expect(done).toBe(false);
  });

  it('equals JSON.parse over random streams of same-shaped events with random texts', () => {
    let seed = 42;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const alphabet = ['a', ' ', '"', '\\', '\n', '\t', 'é', '🙂', '\u0000', '/', 'u', '{', '}', ','];
    for (let round = 0; round < 200; round++) {
      const events: string[] = [];
      for (let i = 0; i < 20; i++) {
        let text = '';
        const length = Math.floor(random() * 6);
        for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)];
        events.push(random() < 0.1 ? `data: {"raw":"${text}"}\n\n` : openAI(text));
      }
      expect(scan('openai', events).total).toBe(parsedTotal('openai', events.join('')));
      expect(scan('openai', events, true).total).toBe(parsedTotal('openai', events.join('')));
    }
  });

  it('counts pieces without escapes from their bytes (no string made), escaped ones from their parsed text', () => {
    const pieces = ['Hello', ' wörld', ' "q"', ' back\\slash', ' 🙂', '', ' end'];
    const events = pieces.map((p) => openAI(p));
    const { total, texts, bytePieces } = scan('openai', events, true);
    expect(total).toBe(parsedTotal('openai', events.join('')));
    // The first event is parsed (it teaches the template); after it, only escaped literals make a string.
    expect(texts).toEqual(['Hello', ' "q"', ' back\\slash']);
    expect(bytePieces).toEqual([' wörld', ' 🙂', ' end']);
  });
});
