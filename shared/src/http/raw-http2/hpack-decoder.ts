/**
 * HPACK header block decoder (RFC 7541) for one connection: the dynamic table (bounded by the 4,096 bytes
 * we never raise), size updates, indexed and literal fields, Huffman strings. Every block is decoded
 * whole even when its list is over the limit, so the table stays in step with the peer's encoder; the
 * fields past the limit are dropped and the result says so. Any malformed block is a COMPRESSION_ERROR
 * for the whole connection (`HpackError`).
 */
import { huffmanDecode } from './huffman.js';
import { RecentStrings } from './recent-strings.js';
import { STATIC_TABLE } from './static-table.js';

/** SETTINGS_HEADER_TABLE_SIZE's default, which the front keeps. */
export const HEADER_TABLE_BYTES = 4096;
/** What RFC 7541 §4.1 adds to each entry's name and value lengths. */
const ENTRY_OVERHEAD = 32;
/** Remembered Huffman literals per connection, and the longest remembered (coded bytes). */
const RECENT_STRINGS = 8;
const RECENT_STRING_BYTES = 96;

export class HpackError extends Error {}

export type HeaderField = readonly [name: string, value: string];

export interface DecodedBlock {
  readonly fields: HeaderField[];
  /** The list (names + values + 32 per field) went over `maxListBytes`: `fields` stops before that. */
  readonly overLimit: boolean;
}

export class HpackDecoder {
  /** Newest entry first. */
  private readonly table: HeaderField[] = [];
  private tableBytes = 0;
  private maxTableBytes = HEADER_TABLE_BYTES;
  /** Huffman literals sent again (a method's `:path` with every request) are compared, not decoded again. */
  private readonly recent = new RecentStrings(RECENT_STRINGS, RECENT_STRING_BYTES);

  constructor(private readonly maxListBytes: number) {}

  decode(block: Uint8Array): DecodedBlock {
    const fields: HeaderField[] = [];
    let listBytes = 0;
    let overLimit = false;
    const cursor = { at: 0 };
    let fieldSeen = false;
    while (cursor.at < block.length) {
      const byte = block[cursor.at]!;
      let field: HeaderField;
      if (byte & 0x80) field = this.entry(readInteger(block, cursor, 7));
      else if ((byte & 0xe0) === 0x20) {
        // A size update comes before the block's first field (RFC 7541 §4.2).
        if (fieldSeen) throw new HpackError('a table size update after a header field');
        this.resize(readInteger(block, cursor, 5));
        continue;
      } else {
        const indexing = (byte & 0xc0) === 0x40;
        const index = readInteger(block, cursor, indexing ? 6 : 4);
        const name = index === 0 ? readString(block, cursor, this.recent) : this.entry(index)[0];
        field = [name, readString(block, cursor, this.recent)];
        if (indexing) this.add(field);
      }
      fieldSeen = true;
      listBytes += field[0].length + field[1].length + ENTRY_OVERHEAD;
      if (listBytes > this.maxListBytes) overLimit = true;
      if (!overLimit) fields.push(field);
    }
    return { fields, overLimit };
  }

  private entry(index: number): HeaderField {
    if (index === 0) throw new HpackError('index 0');
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
    const field = this.table[index - STATIC_TABLE.length - 1];
    if (field === undefined) throw new HpackError(`index ${index} past the table`);
    return field;
  }

  private add(field: HeaderField): void {
    const bytes = field[0].length + field[1].length + ENTRY_OVERHEAD;
    if (bytes > this.maxTableBytes) {
      // Larger than the table: the table empties and the entry is not added (RFC 7541 §4.4).
      this.table.length = 0;
      this.tableBytes = 0;
      return;
    }
    this.table.unshift(field);
    this.tableBytes += bytes;
    this.evictTo(this.maxTableBytes);
  }

  private resize(max: number): void {
    if (max > HEADER_TABLE_BYTES) throw new HpackError(`table size ${max} over the setting`);
    this.maxTableBytes = max;
    this.evictTo(max);
  }

  private evictTo(max: number): void {
    while (this.tableBytes > max) {
      const [name, value] = this.table.pop()!;
      this.tableBytes -= name.length + value.length + ENTRY_OVERHEAD;
    }
  }
}

/** An HPACK integer with an N-bit prefix (RFC 7541 §5.1), bounded to 2^28 so it cannot overflow. */
function readInteger(block: Uint8Array, cursor: { at: number }, prefixBits: number): number {
  const mask = (1 << prefixBits) - 1;
  let value = block[cursor.at++]! & mask;
  if (value < mask) return value;
  for (let shift = 0; shift <= 21; shift += 7) {
    if (cursor.at >= block.length) throw new HpackError('an integer past the block');
    const byte = block[cursor.at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value;
  }
  throw new HpackError('an integer over 2^28');
}

function readString(block: Uint8Array, cursor: { at: number }, recent: RecentStrings): string {
  if (cursor.at >= block.length) throw new HpackError('a string past the block');
  const huffman = (block[cursor.at]! & 0x80) !== 0;
  const length = readInteger(block, cursor, 7);
  const start = cursor.at;
  const end = start + length;
  if (end > block.length) throw new HpackError('a string past the block');
  cursor.at = end;
  if (!huffman) return Buffer.from(block.buffer, block.byteOffset + start, length).toString('latin1');
  const known = recent.find(block, start, end);
  if (known !== undefined) return known;
  const text = huffmanDecode(block, start, end);
  if (text === undefined) throw new HpackError('a bad Huffman string');
  recent.remember(block, start, end, text);
  return text;
}
