// CPU per batch signature for the wave's request ([1, 1024] FP32 'INPUT0'): rebuilt each time vs remembered.
import { batchSignature, type InputShape } from '../../../gpu-node/src/scheduler/dynamic/batcher-request.js';

/** The memo tried at 6e62e31 (reverted, not kept): the last single-input key, reused while name and shape repeat. */
class BatchSignatures {
  private lastName: string | undefined = undefined;
  private lastShape: number[] = [];
  private lastKey = '';
  constructor(private readonly raggedInputs: ReadonlySet<string>, private readonly hasBatchDim: boolean) {}
  of(inputs: readonly InputShape[]): string {
    if (inputs.length !== 1) return batchSignature(inputs, this.raggedInputs, this.hasBatchDim);
    const input = inputs[0]!;
    if (input.name === this.lastName && this.sameShape(input.shape)) return this.lastKey;
    this.lastKey = batchSignature(inputs, this.raggedInputs, this.hasBatchDim);
    this.lastName = input.name;
    this.lastShape = input.shape.slice();
    return this.lastKey;
  }
  private sameShape(shape: readonly number[]): boolean {
    if (shape.length !== this.lastShape.length) return false;
    for (let i = this.hasBatchDim ? 1 : 0; i < shape.length; i++) if (shape[i] !== this.lastShape[i]) return false;
    return true;
  }
}
const N = 1_000_000;
const ragged = new Set<string>();
const memo = new BatchSignatures(ragged, true);
let sink = 0;
for (let round = 0; round < 3; round++) {
  let t = process.cpuUsage();
  for (let i = 0; i < N; i++) sink += batchSignature([{ name: 'INPUT0', shape: [1, 1024] }], ragged, true).length;
  const rebuilt = process.cpuUsage(t);
  t = process.cpuUsage();
  for (let i = 0; i < N; i++) sink += memo.of([{ name: 'INPUT0', shape: [1, 1024] }]).length;
  const remembered = process.cpuUsage(t);
  const ns = (u: NodeJS.CpuUsage): string => ((1000 * (u.user + u.system)) / N).toFixed(0);
  console.log(`round ${round}: rebuilt ${ns(rebuilt)} ns, remembered ${ns(remembered)} ns per request`);
}
if (sink === 0) console.log('');
