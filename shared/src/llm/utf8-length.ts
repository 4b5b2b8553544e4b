/**
 * The length in bytes of a string's UTF-8 encoding (as TextEncoder writes it: a lone surrogate becomes
 * U+FFFD, 3 bytes), without encoding it: a prompt's token bound (token-counter.ts) costs one pass over
 * its code units and no allocation.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < n) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
