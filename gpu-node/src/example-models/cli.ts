/**
 * `tessera-models --out DIR [--only a,b]`: writes the example model repository.
 * Exit codes: 0 done (or --help), 1 writing failed, 2 bad usage (unknown flag, missing --out, unknown model).
 */
import { parseArgs } from 'node:util';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { EXAMPLE_MODELS, writeExampleRepository } from './example-repository.js';

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

export function usage(): string {
  const models = EXAMPLE_MODELS.map((m) => `  ${m.name.padEnd(16)} ${m.description}`).join('\n');
  return [
    'Usage: tessera-models --out DIR [--only NAME[,NAME...]] [--help]',
    '',
    'Writes example models as a Triton model repository: DIR/<name>/config.pbtxt and DIR/<name>/1/<model>.',
    'Existing folders of the same names are replaced; nothing else in DIR is touched.',
    '',
    'Models:',
    models,
    '',
  ].join('\n');
}

export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let values: { out?: string; only?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { out: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\n${usage()}`);
    return 2;
  }
  if (values.help === true) {
    io.out(usage());
    return 0;
  }
  if (values.out === undefined || values.out === '') {
    io.err(`--out DIR is required\n\n${usage()}`);
    return 2;
  }
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  try {
    const started = performance.now();
    for (const model of await writeExampleRepository(values.out, { only })) {
      io.out(`wrote ${model.dir} (${model.files.join(', ')})\n`);
    }
    io.out(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return 0;
  } catch (error) {
    if (error instanceof TesseraError && error.code === 'INVALID_ARG') {
      io.err(`${error.message}\n\n${usage()}`);
      return 2;
    }
    io.err(`tessera-models: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
