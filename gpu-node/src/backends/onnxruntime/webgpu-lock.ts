/**
 * One WebGPU session at work at a time in the whole process. onnxruntime's WebGPU provider shares one
 * Dawn device between all sessions of a process, and on an H200 two sessions in two worker threads
 * crashed the process when created together and failed with std::bad_alloc when run together. The
 * lock is a word of shared memory that every instance's worker thread receives; a worker blocks on it
 * (Atomics.wait) around creating, running and releasing its session. The GPU runs one batch at a time
 * anyway; what instances still overlap is everything else (input and output conversion, transfers).
 */
const FREE = 0;
const HELD = 1;

/** The process's lock word, made once on the main thread and posted to each GPU worker. */
let shared: SharedArrayBuffer | undefined;
export function webGpuLockBuffer(): SharedArrayBuffer {
  shared ??= new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  return shared;
}

/** Runs `work` holding the lock in `buffer` (blocking this worker thread while another holds it). */
export async function withWebGpuLock<T>(buffer: SharedArrayBuffer, work: () => Promise<T>): Promise<T> {
  const word = new Int32Array(buffer);
  while (Atomics.compareExchange(word, 0, FREE, HELD) !== FREE) Atomics.wait(word, 0, HELD);
  try {
    return await work();
  } finally {
    Atomics.store(word, 0, FREE);
    Atomics.notify(word, 0, 1);
  }
}
