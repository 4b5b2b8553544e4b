/**
 * The import boundaries of docs/architecture.md are lint rules (eslint.config.js); this proves they
 * bite. Each case plants a small file in a temporary folder where the rule applies, lints that folder
 * with ESLint's Node API as `npm run lint` would, and expects the import to be refused by
 * no-restricted-imports (or, for the controls, accepted). The folder is removed whatever happens.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

/** The no-restricted-imports messages for `source` planted in a new folder under `folder`. */
async function boundaryErrors(folder: string, source: string): Promise<string[]> {
  const dir = mkdtempSync(join(ROOT, folder, '__planted-'));
  try {
    writeFileSync(join(dir, 'planted.ts'), source);
    const [result] = await eslint.lintFiles([dir]);
    expect(result, 'the planted file is linted (not ignored)').toBeDefined();
    return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Planted folders sit one level below `folder`, so `../` reaches `folder` itself.
const refused: Array<[string, string, string, RegExp]> = [
  ['core → node:*', 'gateway/src/core', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", /'node:fs'.*no Node built-ins/],
  ['core → a bare Node built-in', 'gateway/src/core/auth', "import { createHash } from 'crypto';\nexport const hash = createHash;\n", /'crypto'.*no Node built-ins/],
  ['core → pino', 'gateway/src/core', "import { pino } from 'pino';\nexport const p = pino;\n", /'pino'.*no driver/],
  ['core → ioredis', 'gateway/src/core', "import { Redis } from 'ioredis';\nexport const r = Redis;\n", /'ioredis'.*no driver/],
  ['core → @grpc/*', 'gateway/src/core', "import type { Metadata } from '@grpc/grpc-js';\nexport type M = Metadata;\n", /'@grpc\/grpc-js'.*no driver/],
  ['core → bullmq', 'gateway/src/core', "export { Queue } from 'bullmq';\n", /'bullmq'.*no driver/],
  ['core → prom-client', 'gateway/src/core', "import { Registry } from 'prom-client';\nexport const r = Registry;\n", /'prom-client'.*no driver/],
  ['core → adapters', 'gateway/src/core', "import { createMemoryTenantStore } from '../../adapters/memory/index.js';\nexport const s = createMemoryTenantStore;\n", /adapters.*never imports gateway\/src\/adapters/],
  ['core → an entry file', 'gateway/src/core', "import { startGateway } from '../../entry-node.js';\nexport const s = startGateway;\n", /entry-node\.js.*never imports an entry file/],
  ['core → the jobs entry', 'gateway/src/core', "export * from '../../jobs-entry.js';\n", /jobs-entry\.js.*never imports an entry file/],
  ['core → the CLI options', 'gateway/src/core', "import { parseGatewayArgs } from '../../cli/cli-options.js';\nexport const p = parseGatewayArgs;\n", /cli-options\.js.*command-line options/],
  ['gateway → gpu-node', 'gateway/src/adapters', "import type { X } from '../../../../gpu-node/src/server/index.js';\nexport type Y = X;\n", /gpu-node.*never import each other/],
  ['gateway core → gpu-node', 'gateway/src/core', "export * from '../../../../gpu-node/src/index.js';\n", /gpu-node.*never import each other/],
  ['gateway tests → gpu-node', 'gateway/test', "export * from '../../../gpu-node/src/index.js';\n", /gpu-node.*never import each other/],
  ['gpu-node → gateway', 'gpu-node/src', "import { createGatewayApp } from '../../../gateway/src/core/app/index.js';\nexport const c = createGatewayApp;\n", /gateway.*never import each other/],
  ['shared → gateway', 'shared/src', "import type { Tier } from '../../../gateway/src/core/ports/index.js';\nexport type T = Tier;\n", /shared\/ imports neither/],
  ['shared → gpu-node', 'shared/src', "export * from '../../../gpu-node/src/index.js';\n", /shared\/ imports neither/],
  ['node scheduler → ensemble', 'gpu-node/src/scheduler', "import { createEnsembleScheduler } from '../../ensemble/ensemble-scheduler.js';\nexport const c = createEnsembleScheduler;\n", /'\.\.\/\.\.\/ensemble\/.*register by name/],
  ['node scheduler → models', 'gpu-node/src/scheduler/sequence', "import { validateInferRequest } from '../../../models/request-validator.js';\nexport const v = validateInferRequest;\n", /models\/request-validator\.js.*register by name/],
  ['node scheduler → repository', 'gpu-node/src/scheduler', "import type { RepositoryManager } from '../../repository/repository-manager.js';\nexport type R = RepositoryManager;\n", /repository-manager\.js.*register by name/],
  ['node models → server-api', 'gpu-node/src/models', "import type { NodeCore } from '../../server-api/index.js';\nexport type N = NodeCore;\n", /server-api.*never imports server\/, server-api\/ or cli\//],
  ['node models → server', 'gpu-node/src/models', "import { createHttpServer } from '../../server/http/http-server.js';\nexport const s = createHttpServer;\n", /server\/http.*never imports server\//],
  ['node repository → cli', 'gpu-node/src/repository', "import { parseNodeArgs } from '../../cli/node-options.js';\nexport const p = parseNodeArgs;\n", /cli\/node-options.*never imports server\//],
  ['node scheduler → server-api', 'gpu-node/src/scheduler', "import type { InferOptions } from '../../server-api/node-core.js';\nexport type O = InferOptions;\n", /server-api.*never imports server\//],
];

const accepted: Array<[string, string, string]> = [
  ['adapters → node:*', 'gateway/src/adapters', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n"],
  ['core → shared', 'gateway/src/core', "import { TesseraError } from '../../../../shared/src/errors/index.js';\nexport const e = TesseraError;\n"],
  ['core → core ports', 'gateway/src/core', "import type { Tier } from '../ports/index.js';\nexport type T = Tier;\n"],
  ['entries → adapters', 'gateway/src', "import { createMemoryTenantStore } from '../adapters/memory/index.js';\nexport const s = createMemoryTenantStore;\n"],
  ['node repository → ensemble', 'gpu-node/src/repository', "import { registerEnsembleScheduler } from '../../ensemble/ensemble-registration.js';\nexport const r = registerEnsembleScheduler;\n"],
  ['node server-api → repository', 'gpu-node/src/server-api', "import { RepositoryManager } from '../../repository/repository-manager.js';\nexport const r = RepositoryManager;\n"],
  ['node scheduler → test support', 'gpu-node/src/scheduler/dynamic', "import { FakeInstance } from '../../../../test/support/batcher-test-support.js';\nexport const f = FakeInstance;\n"],
];

describe('import boundaries (eslint no-restricted-imports)', () => {
  it.each(refused)('refuses %s', async (_name, folder, source, message) => {
    const errors = await boundaryErrors(folder, source);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  it.each(accepted)('allows %s', async (_name, folder, source) => {
    expect(await boundaryErrors(folder, source)).toEqual([]);
  });
});
