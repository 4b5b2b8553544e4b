const js = (text) => { let bytes = 0; const n = text.length; for (let i = 0; i < n; i++) { const unit = text.charCodeAt(i); if (unit < 0x80) bytes += 1; else if (unit < 0x800) bytes += 2; else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < n) { const next = text.charCodeAt(i + 1); if (next >= 0xdc00 && next <= 0xdfff) { bytes += 4; i++; } else bytes += 3; } else bytes += 3; } return bytes; };
const cases = ['', 'abc', '\ud800', '\udc00', '\ud800\udc00', 'a\ud800b', '\udc00\ud800', 'é', '€', '😀', 'x'.repeat(1000) + '\ud83d', '\ud83d\ud83d\ude00'];
for (const c of cases) { const a = js(c), b = Buffer.byteLength(c, 'utf8'), t = new TextEncoder().encode(c).length; if (a !== b || a !== t) console.log('DIFF', JSON.stringify(c), a, b, t); }
// random strings
for (let k = 0; k < 20000; k++) { let s = ''; const n = Math.floor(Math.random() * 12); for (let i = 0; i < n; i++) s += String.fromCharCode([0x41, 0xe9, 0x20ac, 0xd800 + Math.floor(Math.random() * 0x800), Math.floor(Math.random() * 0x10000)][Math.floor(Math.random() * 5)]); if (js(s) !== Buffer.byteLength(s, 'utf8')) { console.log('DIFF', JSON.stringify(s), js(s), Buffer.byteLength(s)); break; } }
// Flat strings, as JSON.parse makes a prompt (a repeat() result is a rope, slow to index).
const big = JSON.parse(JSON.stringify('the gateway relays a stream '.repeat(5000)));
for (const [name, f] of [['js', js], ['byteLength', (s) => Buffer.byteLength(s, 'utf8')]]) { for (let i = 0; i < 50; i++) f(big); const t = performance.now(); for (let i = 0; i < 500; i++) f(big); console.log(name, (((performance.now() - t) * 1000) / 500).toFixed(1), 'µs for', big.length, 'chars'); }
const uni = JSON.parse(JSON.stringify('ünïcødé 😀 текст '.repeat(5000)));
for (const [name, f] of [['js', js], ['byteLength', (s) => Buffer.byteLength(s, 'utf8')]]) { for (let i = 0; i < 50; i++) f(uni); const t = performance.now(); for (let i = 0; i < 500; i++) f(uni); console.log(name, 'non-ascii', (((performance.now() - t) * 1000) / 500).toFixed(1), 'µs for', uni.length, 'chars'); }
console.log('done');
