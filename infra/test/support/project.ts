/**
 * The project's own parsers, so the infra files are checked by the code that will read them: the
 * node's command line, the gateway's command line and its configuration file.
 */
import { parseNodeArgs } from '../../../gpu-node/src/cli/node-options.js';
import { parseGatewayArgs } from '../../../gateway/src/cli/cli-options.js';
import { loadGatewayConfig } from '../../../gateway/src/config/index.js';

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

const RESTRICTED_FLAGS = ['--http-restricted-api', '--grpc-restricted-protocol'] as const;

/** Whether this checkout's node parser knows the restricted-API flags (the node half of issue 14). */
export function nodeKnowsRestrictedApis(): boolean {
  return parseNodeArgs(['--model-repository', '/m', `${RESTRICTED_FLAGS[0]}=model-repository:k=v`], {}).kind === 'options';
}

/** The restricted-API flags of a node command line (checked by tests/security/gateway-deployments.test.ts). */
export function restrictedApiFlags(args: readonly string[]): string[] {
  return args.filter((a) => RESTRICTED_FLAGS.some((flag) => a.startsWith(`${flag}=`)));
}

/**
 * A node command line for this checkout's parser: as is once the node knows the restricted-API flags,
 * without them until then (they come with the node half of issue 14, merged separately).
 */
export function nodeArgsForParser(args: readonly string[]): string[] {
  return nodeKnowsRestrictedApis() ? [...args] : args.filter((a) => !restrictedApiFlags([a]).length);
}
