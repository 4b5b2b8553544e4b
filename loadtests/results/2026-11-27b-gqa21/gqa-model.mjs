// Helpers shared by the gqa21 probes: the writer emits only the default-domain opset, so a second
// OperatorSetIdProto (ModelProto field 8, repeated) naming com.microsoft version 1 is appended to its bytes.
export function withMicrosoftOpset(modelBytes) {
  const domain = new TextEncoder().encode('com.microsoft');
  const inner = [0x0a, domain.length, ...domain, 0x10, 0x01];
  const extra = Uint8Array.from([0x42, inner.length, ...inner]);
  const out = new Uint8Array(modelBytes.length + extra.length);
  out.set(modelBytes, 0);
  out.set(extra, modelBytes.length);
  return out;
}

// Deterministic values in [-1, 1) (mulberry32), so every run checks the same numbers.
export function seededFloats(count, seed) {
  const out = new Float32Array(count);
  let a = seed >>> 0;
  for (let i = 0; i < count; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}
