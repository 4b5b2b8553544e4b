/**
 * The project's own parsers, so the infra files are checked by the code that will read them: the
 * node's command line, the gateway's command line and its configuration file.
 */
import { parseNodeArgs } from '../../../gpu-node/src/cli/node-options.js';
import { loadGatewayConfig, parseGatewayArgs } from '../../../gateway/src/config/index.js';

/** The node's options for `args` (after the image's ENTRYPOINT), or an error listing the problems. */
export function nodeOptions(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const parsed = parseNodeArgs(args, env);
  if (parsed.kind !== 'options') throw new Error(`tessera-node ${args.join(' ')}: ${parsed.kind === 'error' ? parsed.problems.join('; ') : 'prints help'}`);
  return parsed.options;
}

export function gatewayOptions(args: readonly string[]) {
  return parseGatewayArgs(args);
}

export function gatewayConfig(text: string) {
  return loadGatewayConfig(text);
}
