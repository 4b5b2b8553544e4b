/**
 * Two anchors of `npm run bench -- llm` that say what any process pays per streamed token on this box
 * (issue 20), both on core 0 like the gateway:
 * - nginx as an SSE relay in front of the node's HTTP port: one worker, `proxy_buffering off` (each
 *   event goes out as it arrives), HTTP/1.1 keep-alive upstream, access log on. What a real proxy pays.
 * - the write floor: a process with no upstream that only writes the node's own events (captured once
 *   from a direct stream) to its clients, chunked as the gateway sends them, one write per event at the
 *   engine's pace. What the kernel (and a minimal Node event loop) costs per event written.
 * Both skip-free here: the bench checks `nginxAvailable()` first and notes when nginx is absent.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sleep } from '../load/load-window.js';
import { pinnedCommand } from '../per-core/index.js';
import { launchServer, type RunningServer } from './server-process.js';
import { nginxConfPreamble } from './nginx-conf.js';

/** A measured anchor: its port and the processes whose CPU counts (nginx: master and worker). */
export interface LlmAnchor {
  readonly name: string;
  readonly port: number;
  pids(): Promise<number[]>;
  stop(): Promise<void>;
}

export function nginxAvailable(): boolean {
  const probe = spawnSync('nginx', ['-v']);
  return probe.error === undefined && probe.status === 0;
}

/** nginx's fixed port: BENCH_PORT_BASE + 90 and on (default base 21000), so parallel runs keep apart. */
const nginxPortBase = (): number => Number(process.env.BENCH_PORT_BASE ?? 21000) + 90;
const NGINX_PORT_TRIES = 10;

export async function startSseNginx(work: string, core: number, upstreamPort: number): Promise<LlmAnchor> {
  for (let i = 0; ; i++) {
    try {
      return await startSseNginxOn(work, core, upstreamPort, nginxPortBase() + i);
    } catch (error) {
      if (i + 1 >= NGINX_PORT_TRIES || !String(error).includes('Address already in use')) throw error;
    }
  }
}

async function startSseNginxOn(work: string, core: number, upstreamPort: number, port: number): Promise<LlmAnchor> {
  const dir = join(work, 'nginx-sse');
  await mkdir(join(dir, 'tmp'), { recursive: true });
  await writeFile(
    join(dir, 'nginx.conf'),
    `${nginxConfPreamble(dir)}  keepalive_requests 100000;
  upstream node { server 127.0.0.1:${upstreamPort}; keepalive 256; keepalive_requests 100000; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://node;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 60s;
    }
  }
}
`,
  );
  const [cmd, args] = pinnedCommand(core, 'nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v2/health/live`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    if (i >= 100) {
      child.kill('SIGQUIT'); // not left running behind a failed bench
      await exited;
      throw new Error(`nginx did not answer on ${port}: ${stderr}`);
    }
    await sleep(100);
  }
  const master = child.pid as number;
  return {
    name: 'nginx',
    port,
    async pids() {
      const children = await readFile(`/proc/${master}/task/${master}/children`, 'utf8').catch(() => '');
      return [master, ...children.split(' ').filter((s) => s !== '').map(Number)];
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGQUIT');
      await exited;
    },
  };
}

/**
 * The floor's script: a raw `net` server (HTTP/1.1 keep-alive, request head and body read, nothing
 * parsed beyond content-length) that answers each request with the captured events, each one chunk
 * (`<hex length>\r\n<event>\r\n`) prebuilt once, written one per tick of a per-stream interval.
 */
const FLOOR_SOURCE = `import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
const itlMs = Number(process.env.FLOOR_ITL_MS);
const events = JSON.parse(readFileSync(process.env.FLOOR_EVENTS_FILE, 'utf8'));
const chunk = (text) => { const b = Buffer.from(text); return Buffer.concat([Buffer.from(b.length.toString(16) + '\\r\\n'), b, Buffer.from('\\r\\n')]); };
const head = Buffer.from('HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\ncache-control: no-cache\\r\\nconnection: keep-alive\\r\\ntransfer-encoding: chunked\\r\\n\\r\\n');
const framed = events.map(chunk);
framed[framed.length - 1] = Buffer.concat([framed[framed.length - 1], Buffer.from('0\\r\\n\\r\\n')]);
const first = Buffer.concat([head, framed[0]]);
const server = createServer({ noDelay: true }, (socket) => {
  let pending = Buffer.alloc(0);
  let streaming = false;
  let timer;
  const stream = () => {
    streaming = true;
    let i = 0;
    // The first event after the engine's first interval, with the status line, as the gateway sends it.
    timer = setInterval(() => {
      socket.write(i === 0 ? first : framed[i]);
      i += 1;
      if (i === framed.length) { clearInterval(timer); streaming = false; next(); }
    }, itlMs);
  };
  const next = () => {
    if (streaming) return;
    const end = pending.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    const match = /content-length: *(\\d+)/i.exec(pending.subarray(0, end).toString('latin1'));
    const total = end + 4 + (match === null ? 0 : Number(match[1]));
    if (pending.length < total) return;
    pending = pending.subarray(total);
    stream();
  };
  socket.on('data', (data) => { pending = Buffer.concat([pending, data]); next(); });
  socket.on('error', () => {});
  socket.on('close', () => clearInterval(timer));
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'floor started', port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
`;

/** The events of one stream as the node sends them (each ending in a blank line). */
export function splitEvents(body: string): string[] {
  return body.split('\n\n').filter((event) => event !== '').map((event) => `${event}\n\n`);
}

export async function launchWriteFloor(work: string, core: number, events: readonly string[], itlMs: number): Promise<RunningServer> {
  const script = join(work, 'llm-write-floor.mjs');
  const eventsFile = join(work, 'llm-write-floor-events.json');
  await writeFile(script, FLOOR_SOURCE);
  await writeFile(eventsFile, JSON.stringify(events));
  return launchServer({
    name: 'write floor',
    args: [script],
    startedMsg: 'floor started',
    env: { FLOOR_ITL_MS: String(itlMs), FLOOR_EVENTS_FILE: eventsFile },
    wrap: (cmd, args) => pinnedCommand(core, cmd, args),
  });
}

/** User and system CPU of whole processes (every thread), from /proc/PID/stat, in µs. */
export interface UserSys {
  readonly userUs: number;
  readonly sysUs: number;
}

const CLK_TCK = 100;

export async function readUserSys(pids: readonly number[]): Promise<UserSys> {
  let user = 0;
  let sys = 0;
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    user += Number(fields[11] ?? 0);
    sys += Number(fields[12] ?? 0);
  }
  return { userUs: (user / CLK_TCK) * 1e6, sysUs: (sys / CLK_TCK) * 1e6 };
}
