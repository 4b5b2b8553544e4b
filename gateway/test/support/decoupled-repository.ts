/**
 * Test support: a model repository of decoupled models for a REAL node process (test-node-process.ts)
 * - `token_stream`, the example LLM-style model written by `tessera-models`, its tokens `tokenDelayMs`
 *   apart, appending `cancelled <n>` to `cancelLog` whenever a request saw its cancellation;
 * - `repeat_int32`, the example model for Triton's repeat client (also written by `tessera-models`),
 *   with two instances: one response per element of IN (OUT = IN[i], IDX = i), each after DELAY[i] ms,
 *   then, after WAIT ms, the bare final flag (no response);
 * - `flood` (when asked): a 1 MiB response every 5 ms until cancelled or 256 were sent, then writes
 *   `{ sent, aborted }` to `floodMarker`. Paced so that a gateway slowed by a busy machine still reads
 *   the node faster than it is fed: the budget under test is the gateway's towards its client, and an
 *   unpaced flood could overflow the node's budget towards the gateway first (an in-band error instead).
 * Any model can be renamed (`rename`), so a second node can serve one no other node has.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const floodConfig = (marker: string): string => `name: "flood"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "marker" value: { string_value: ${JSON.stringify(marker)} } }
`;

const FLOOD_MODEL = `import { renameSync, writeFileSync } from 'node:fs';
let marker = '';
export function initialize(args) { marker = args.parameters.marker; }
export async function execute(requests) {
  for (const request of requests) {
    let sent = 0;
    for (; sent < 256 && !request.signal.aborted; sent++) {
      request.sender.send({ outputs: { OUTPUT0: { datatype: 'FP32', shape: [262144], data: new Float32Array(262144) } } });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Written whole, then renamed: a reader polling for the file never sees half of it.
    writeFileSync(marker + '.tmp', JSON.stringify({ sent, aborted: request.signal.aborted }));
    renameSync(marker + '.tmp', marker);
    request.sender.close();
  }
}
`;

export interface DecoupledRepositoryOptions {
  /** Pause before each token_stream token (ms); default 10. */
  readonly tokenDelayMs?: number;
  /** File token_stream appends a line to per cancelled request. */
  readonly cancelLog?: string;
  /** Also write `flood`, reporting to this file. */
  readonly floodMarker?: string;
  /** New names for models (e.g. token_stream → doomed_stream). */
  readonly rename?: Readonly<Record<string, string>>;
}

async function writeModel(dir: string, name: string, config: string, source: string): Promise<void> {
  await mkdir(join(dir, name, '1'), { recursive: true });
  await writeFile(join(dir, name, 'config.pbtxt'), config);
  await writeFile(join(dir, name, '1', 'model.js'), source);
  await writeFile(join(dir, name, '1', 'package.json'), '{ "type": "module" }\n');
}

/** Writes the repository into a new temporary directory and returns its path. */
export async function writeDecoupledRepository(options: DecoupledRepositoryOptions = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-decoupled-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', dir, '--only', 'token_stream,repeat_int32']);
  const configPath = join(dir, 'token_stream', 'config.pbtxt');
  let config = (await readFile(configPath, 'utf8')).replace(
    /key: "token_delay_ms" value: \{ string_value: "\d+" \}/,
    `key: "token_delay_ms" value: { string_value: "${options.tokenDelayMs ?? 10}" }`,
  );
  if (options.cancelLog !== undefined) config += `parameters { key: "cancel_log" value: { string_value: ${JSON.stringify(options.cancelLog)} } }\n`;
  await writeFile(configPath, config);
  // Two instances, so that two requests run side by side (an instance runs one execute at a time).
  const repeatConfig = join(dir, 'repeat_int32', 'config.pbtxt');
  await writeFile(repeatConfig, `${await readFile(repeatConfig, 'utf8')}instance_group [ { count: 2 kind: KIND_CPU } ]\n`);
  if (options.floodMarker !== undefined) await writeModel(dir, 'flood', floodConfig(options.floodMarker), FLOOD_MODEL);
  for (const [from, to] of Object.entries(options.rename ?? {})) {
    const path = join(dir, from, 'config.pbtxt');
    await writeFile(path, (await readFile(path, 'utf8')).replace(`name: "${from}"`, `name: "${to}"`));
    await rename(join(dir, from), join(dir, to));
  }
  return dir;
}
