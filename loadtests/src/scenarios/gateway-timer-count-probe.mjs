/**
 * Counts timer callbacks by where they were armed, in the process it is loaded into (`node --import`):
 * which setTimeout / setInterval / setImmediate wake an idle gateway, and how often. SIGUSR2 starts the
 * count over (after warm-up); at exit the rates go to /tmp/gateway-timers-<pid>.txt, busiest first.
 * Native timers (perf_hooks' event-loop delay monitor, node:http2 and socket timeouts) are not seen:
 * `strace -tt -e epoll_pwait` of the idle loop shows them as epoll timeouts.
 */
import { writeFileSync } from 'node:fs';

const counts = new Map();
const site = () => (new Error().stack ?? '').split('\n').slice(3, 6).map((line) => line.trim()).join(' | ');
for (const name of ['setTimeout', 'setInterval', 'setImmediate']) {
  const original = globalThis[name];
  globalThis[name] = function (fn, ms, ...rest) {
    if (typeof fn !== 'function') return original.call(this, fn, ms, ...rest);
    const where = `${name}(${typeof ms === 'number' ? ms : ''}) ${site()}`;
    const counted = function (...args) {
      counts.set(where, (counts.get(where) ?? 0) + 1);
      return fn.apply(this, args);
    };
    return original.call(this, counted, ms, ...rest);
  };
}
let since = Date.now();
process.on('SIGUSR2', () => {
  counts.clear();
  since = Date.now();
});
process.on('exit', () => {
  const seconds = (Date.now() - since) / 1000;
  const lines = [...counts].sort((a, b) => b[1] - a[1]).map(([where, n]) => `${(n / seconds).toFixed(2)}/s  ${where}`);
  writeFileSync(`/tmp/gateway-timers-${process.pid}.txt`, `${seconds.toFixed(1)} s\n${lines.join('\n')}\n`);
});
