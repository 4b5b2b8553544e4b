import os from 'node:os';
import { readdirSync } from 'node:fs';
for (const t of readdirSync('/proc/self/task')) {
  const tid = Number(t);
  if (tid !== process.pid) try { os.setPriority(tid, 19); } catch (e) { process.stderr.write(String(e) + '\n'); }
}
