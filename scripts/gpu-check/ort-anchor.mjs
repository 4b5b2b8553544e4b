// The anchor of the GPU check: onnxruntime-node alone, no Tessera, running one model at one batch size
// in a loop for a few seconds on each provider asked for. Its inferences per second are the ceiling
// the node is measured against.
//
//   node ort-anchor.mjs --app DIR --model FILE [--batch 64] [--seconds 3] [--threads N] [--providers webgpu,cpu]
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    app: { type: 'string' },
    model: { type: 'string' },
    batch: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '3' },
    threads: { type: 'string', default: '1' },
    providers: { type: 'string', default: 'webgpu,cpu' },
  },
});
const ort = createRequire(join(resolve(values.app), 'package.json'))('onnxruntime-node');
const batch = Number(values.batch);
const results = [];
for (const provider of values.providers.split(',')) {
  try {
    const session = await ort.InferenceSession.create(resolve(values.model), {
      executionProviders: [provider],
      intraOpNumThreads: Number(values.threads),
      extra: { 'session.intra_op.allow_spinning': '0' },
    });
    // Every input, its batch dimension set to --batch and other symbolic dimensions to 1; random values.
    const feeds = {};
    for (const input of session.inputMetadata) {
      const shape = input.shape.map((d, i) => (i === 0 ? batch : typeof d === 'number' && d > 0 ? d : 1));
      const length = shape.reduce((a, b) => a * b, 1);
      feeds[input.name] =
        input.type === 'int32'
          ? new ort.Tensor('int32', Int32Array.from({ length }, (_, i) => i), shape)
          : new ort.Tensor('float32', Float32Array.from({ length }, () => Math.random()), shape);
    }
    for (let i = 0; i < 5; i++) await session.run(feeds);
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    let runs = 0;
    while (Number(process.hrtime.bigint() - start) < Number(values.seconds) * 1e9) {
      await session.run(feeds);
      runs++;
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpuStart);
    results.push({
      provider,
      batch,
      threads: Number(values.threads),
      runsPerSec: Math.round(runs / seconds),
      inferencesPerSec: Math.round((runs * batch) / seconds),
      cpuUsPerInference: Math.round((cpu.user + cpu.system) / (runs * batch)),
    });
    await session.release();
  } catch (error) {
    results.push({ provider, error: String(error?.message ?? error).slice(0, 400) });
  }
}
process.stdout.write(`${JSON.stringify(results)}\n`);
