/**
 * `tessera-node`: parse the command line, start the node, and turn SIGTERM/SIGINT into Triton's
 * graceful shutdown (exit 0 once in-flight work is done or --exit-timeout-secs passed).
 */
import { createLogger } from '../../../shared/src/logging/index.js';
import { NODE_USAGE, parseNodeArgs } from './node-options.js';
import { startNode } from './start-node.js';
import { applyHeapGrowingPercent } from './heap-growth.js';

const parsed = parseNodeArgs(process.argv.slice(2), process.env);
if (parsed.kind === 'help') {
  process.stdout.write(NODE_USAGE);
  process.exit(0);
}
if (parsed.kind === 'error') {
  for (const problem of parsed.problems) process.stderr.write(`tessera-node: ${problem}\n`);
  process.stderr.write(`\n${NODE_USAGE}`);
  process.exit(2);
}

// Before any model loads: the process's V8 heap setting (heap-growth.ts).
applyHeapGrowingPercent(parsed.options.heapGrowingPercent);
const logger = createLogger({ verbosity: parsed.options.logVerbose, fields: { service: 'tessera-node' } });
try {
  const node = await startNode(parsed.options, logger);
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) return;
    signalled = true;
    logger.info(`received ${signal}`);
    node.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  logger.error('tessera-node failed to start', { error: message });
  // The reason as a plain line too: the first thing someone trying the node reads.
  process.stderr.write(`tessera-node: failed to start: ${message}\n`);
  process.exit(1);
}
