/**
 * The ceiling in a process of its own, so the per-core bench can run it pinned to the node's core
 * (`taskset -c 0`) while the bench itself stays on the load generator's core. Prints one JSON line:
 * the CeilingResult. Usage: ort-ceiling-cli.ts MODEL INPUT ROW_ELEMENTS THREADS SIZES WARMUP_MS MEASURE_MS
 */
import { measureOrtCeiling } from './ort-ceiling.js';

const [modelPath, inputName, row, threads, sizes, warmupMs, measureMs] = process.argv.slice(2);
if (measureMs === undefined) {
  process.stderr.write('usage: ort-ceiling-cli.ts MODEL INPUT ROW_ELEMENTS THREADS SIZES WARMUP_MS MEASURE_MS\n');
  process.exit(2);
}
const result = await measureOrtCeiling({
  modelPath: modelPath as string,
  inputName: inputName as string,
  rowShape: [Number(row)],
  intraOpThreads: Number(threads),
  batchSizes: (sizes as string).split(',').map(Number),
  warmupMs: Number(warmupMs),
  measureMs: Number(measureMs),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
