/**
 * A cursor over protobuf wire bytes for the gateway's one-pass readers of the plain messages on its hot
 * path (the node's ModelInferResponse, a client's ModelInferRequest): every read either gives the
 * value protobuf-es would or throws NotPlain, and the reader's caller then takes the reference path
 * (protobuf-es and the codec's checks), so an unusual or hostile message always gets the reference's
 * answer or error.
 */
import { DATATYPES, type Datatype } from '../tensors/index.js';

// Fatal, as protobuf-es is: a string that is not UTF-8 is not plain (the reference names the error).
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The longest string read byte by byte when it is ASCII; longer ones go to TextDecoder. */
const SHORT_ASCII = 24;

/** A field, layout or value a one-pass reader leaves to the reference path. */
export class NotPlain extends Error {}

/**
 * Short ASCII strings of the last messages, by where they stood (a reader's own numbering: the model
 * name, each tensor's name): messages of one model repeat them, and comparing a few bytes is cheaper
 * than making a new string. Bounded: `slots` entries.
 */
export class RememberedStrings {
  private readonly texts: (string | undefined)[];
  constructor(readonly slots: number) {
    this.texts = new Array<string | undefined>(slots).fill(undefined);
  }

  /** The remembered text of `slot` when it is `bytes[start, end)`. */
  find(slot: number, bytes: Uint8Array, start: number, end: number): string | undefined {
    const text = slot < this.slots ? this.texts[slot] : undefined;
    return sameAscii(text, bytes, start, end) ? text : undefined;
  }

  remember(slot: number, text: string): void {
    if (slot < this.slots) this.texts[slot] = text;
  }
}

function sameAscii(text: string | undefined, bytes: Uint8Array, start: number, end: number): text is string {
  if (text === undefined || text.length !== end - start) return false;
  for (let i = start; i < end; i++) if (text.charCodeAt(i - start) !== bytes[i]) return false;
  return true;
}

export class WireCursor {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    /** Where reading stops: a reader narrows it to a sub-message's end and puts it back. */
    public end: number,
  ) {
    this.pos = start;
  }

  /** A varint of at most 7 bytes (below 2^49): longer ones (negatives, huge values) are not plain. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new NotPlain();
      const byte = this.bytes[this.pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new NotPlain();
  }

  /** Skips a length-delimited field's body and answers where it starts (it ends at `pos`). */
  delimited(): number {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new NotPlain();
    this.pos = start + length;
    return start;
  }

  /** A string field; its value is remembered in `slot` of `memo` when given. */
  string(memo?: RememberedStrings, slot = 0): string {
    const start = this.delimited();
    const end = this.pos;
    if (end - start > SHORT_ASCII) return this.decode(start, end);
    const known = memo?.find(slot, this.bytes, start, end);
    if (known !== undefined) return known;
    // Short ASCII read in JS skips TextDecoder's call into C++; ASCII is valid UTF-8: the same string either way.
    let text = '';
    for (let i = start; i < end; i++) {
      const byte = this.bytes[i]!;
      if (byte >= 0x80) return this.decode(start, end);
      text += String.fromCharCode(byte);
    }
    memo?.remember(slot, text);
    return text;
  }

  /** A datatype field as one of the protocol's names (the constant itself); any other text is not plain. */
  datatype(): Datatype {
    const start = this.delimited();
    for (const datatype of DATATYPES) if (sameAscii(datatype, this.bytes, start, this.pos)) return datatype;
    throw new NotPlain();
  }

  private decode(start: number, end: number): string {
    try {
      return utf8.decode(this.bytes.subarray(start, end));
    } catch {
      throw new NotPlain();
    }
  }
}

/** A tensor's shape as it is read: its dimensions and how many elements they hold. */
export interface ShapeRead {
  readonly shape: number[];
  elements: number;
}

/** Adds one dimension; past the safe integers the reference names the problem (elementCount). */
export function addDimension(read: ShapeRead, dim: number): void {
  read.shape.push(dim);
  read.elements *= dim;
  if (read.elements > Number.MAX_SAFE_INTEGER) throw new NotPlain();
}

/** Packed dimensions at the cursor (a length-delimited field), read in place. */
export function readPackedDimensions(c: WireCursor, read: ShapeRead): void {
  const outer = c.end;
  const start = c.delimited();
  const stop = c.pos;
  c.pos = start;
  c.end = stop;
  while (c.pos < stop) addDimension(read, c.varint());
  c.end = outer;
}
