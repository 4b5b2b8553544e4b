// Inclusive share of busy samples (idle and program excluded from the total, GC counted) of the functions that
// frame an HTTP answer from the node's message, in one .cpuprofile: `node frame-share.mjs FILE`.
import { readFileSync } from 'node:fs';

const NAMES = ['readInferResponse', 'inferResponseFromProto', 'rememberReceivedResponse', 'encodeInferResponse', 'encodeInferResponseParts', 'assembleBody', 'validateTensorData', 'withResponseId', 'answerWithId'];
const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const counts = new Map();
let busy = 0;
for (const id of profile.samples) {
  const name = byId.get(id).callFrame.functionName;
  if (name === '(idle)' || name === '(program)') continue;
  busy++;
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const f = byId.get(at).callFrame.functionName;
    if (NAMES.includes(f) && !seen.has(f)) {
      seen.add(f);
      counts.set(f, (counts.get(f) ?? 0) + 1);
    }
  }
}
console.log(`busy samples ${busy}`);
for (const name of NAMES) console.log(`${name.padEnd(28)} ${(((counts.get(name) ?? 0) / busy) * 100).toFixed(2)}%`);
