/**
 * Where a protobuf text-format error happened. @bufbuild/protobuf's text parser reports what went wrong
 * but not where, so we tokenize the text ourselves (positions only, no values) and find the first
 * token at which a prefix of the text fails with the same message as the whole text did.
 */

export interface TextToken {
  readonly text: string;
  /** Offset just past the token. */
  readonly end: number;
  readonly line: number;
  readonly column: number;
}

export interface TextPosition {
  readonly line: number;
  readonly column: number;
  /** The field whose name or value the error is at, when one precedes it. */
  readonly field?: string;
}

const PUNCTUATION = new Set(['{', '}', '<', '>', '[', ']', ':', ',', ';', '-']);

/** A forgiving tokenizer: it never throws, it only needs to split the text where the real parser would. */
export function tokenizeForPositions(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  const push = (start: number, end: number) =>
    tokens.push({ text: text.slice(start, end), end, line, column: start - lineStart + 1 });
  while (pos < text.length) {
    const c = text[pos]!;
    if (c === '\n') {
      pos++;
      line++;
      lineStart = pos;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      pos++;
    } else if (c === '#') {
      while (pos < text.length && text[pos] !== '\n') pos++;
    } else if (c === '"' || c === "'") {
      const start = pos++;
      while (pos < text.length && text[pos] !== c && text[pos] !== '\n') pos += text[pos] === '\\' ? 2 : 1;
      pos = Math.min(pos + 1, text.length);
      push(start, pos);
    } else if (PUNCTUATION.has(c)) {
      push(pos, pos + 1);
      pos++;
    } else {
      const start = pos;
      while (pos < text.length && /[\w.+]/.test(text[pos]!)) pos++;
      if (pos === start) pos++; // a stray character is a token of its own
      push(start, pos);
    }
  }
  return tokens;
}

/** Messages that only mean "the text stopped early": a cut-off prefix fails this way before the real error. */
function isEndOfInputError(message: string): boolean {
  return /end of input|got eof/i.test(message);
}

/**
 * Locates `errorMessage` (thrown by `parse(text)`) by binary search over token-aligned prefixes.
 * Returns the end of the text for errors that are about the text ending too early.
 */
export function locateTextError(
  text: string,
  errorMessage: string,
  parse: (prefix: string) => void,
): TextPosition {
  const tokens = tokenizeForPositions(text);
  const failsHere = (index: number): boolean => {
    try {
      parse(text.slice(0, tokens[index]!.end));
      return false;
    } catch (error) {
      // A shorter prefix fails differently (it ends early); from the bad token on, it fails the same way.
      return (error instanceof Error ? error.message : String(error)) === errorMessage;
    }
  };
  let found = -1;
  if (!isEndOfInputError(errorMessage) && tokens.length > 0) {
    let low = 0;
    let high = tokens.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (failsHere(mid)) {
        found = mid;
        high = mid - 1;
      } else {
        low = mid + 1;
      }
    }
  }
  if (found < 0) {
    const lines = text.split('\n');
    return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
  }
  const token = tokens[found]!;
  return { line: token.line, column: token.column, ...fieldAt(tokens, found) };
}

/** The nearest field name at or before the failing token: an identifier followed by ':', '{', '<' or '['. */
function fieldAt(tokens: readonly TextToken[], index: number): { field?: string } {
  for (let i = index; i >= 0; i--) {
    const next = tokens[i + 1]?.text;
    const isName = /^[A-Za-z_]\w*$/.test(tokens[i]!.text);
    // The failing token itself may be a field name with nothing after it yet (e.g. an unknown field).
    const followedLikeAName = next === ':' || next === '{' || next === '<' || next === '[';
    if (isName && (followedLikeAName || (i === index && i === tokens.length - 1))) return { field: tokens[i]!.text };
  }
  return {};
}
