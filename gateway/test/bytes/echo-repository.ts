/**
 * Test support: a model repository of `echo_<datatype>` models, one per KServe datatype (BYTES
 * included), each a typescript-backend model that returns INPUT0 as OUTPUT0 unchanged (rank 2, any
 * sizes, no batching). What the model produces is exactly what the client sent, so a test can check
 * that the bytes a client gets back are the bytes the model produced.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ECHO_DATATYPES = ['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BF16', 'BYTES'] as const;
export type EchoDatatype = (typeof ECHO_DATATYPES)[number];

export const echoModel = (datatype: EchoDatatype): string => `echo_${datatype.toLowerCase()}`;

const configType = (datatype: EchoDatatype): string => (datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`);

const ECHO_MODEL = `export function initialize() {}
export async function execute(requests) {
  return requests.map((r) => {
    const input = r.inputs.INPUT0;
    return { outputs: { OUTPUT0: { datatype: input.datatype, shape: [...input.shape], data: input.data } } };
  });
}
`;

export async function writeEchoRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-echo-'));
  for (const datatype of ECHO_DATATYPES) {
    const name = echoModel(datatype);
    await mkdir(join(dir, name, '1'), { recursive: true });
    await writeFile(
      join(dir, name, 'config.pbtxt'),
      `name: "${name}"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 0
input [ { name: "INPUT0" data_type: ${configType(datatype)} dims: [ -1, -1 ] } ]
output [ { name: "OUTPUT0" data_type: ${configType(datatype)} dims: [ -1, -1 ] } ]
`,
    );
    await writeFile(join(dir, name, '1', 'model.js'), ECHO_MODEL);
    await writeFile(join(dir, name, '1', 'package.json'), '{ "type": "module" }\n');
  }
  return dir;
}
