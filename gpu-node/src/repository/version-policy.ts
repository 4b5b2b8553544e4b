/**
 * Which of a model's version folders are served, per its `version_policy` (Triton's
 * ModelVersionPolicy): `latest { num_versions }` (the default, 1), `all {}`, or `specific { versions }`.
 */
import type { ModelVersionPolicy } from '../../../shared/src/gen/model_config_pb.js';

/** Version folders must be positive integers without leading zeros; anything else is ignored. */
export function parseVersionFolder(name: string): number | undefined {
  if (!/^[1-9][0-9]*$/.test(name)) return undefined;
  const version = Number(name);
  return Number.isSafeInteger(version) ? version : undefined;
}

/** The versions to serve, ascending. An empty result means the model has nothing to load. */
export function selectVersions(policy: ModelVersionPolicy | undefined, available: readonly number[]): number[] {
  const sorted = [...new Set(available)].sort((a, b) => a - b);
  const choice = policy?.policyChoice;
  switch (choice?.case) {
    case 'all':
      return sorted;
    case 'specific': {
      const wanted = new Set(choice.value.versions.map((v) => Number(v)));
      return sorted.filter((v) => wanted.has(v));
    }
    case 'latest': {
      const count = Math.max(1, Number(choice.value.numVersions) || 1);
      return sorted.slice(-count);
    }
    default:
      return sorted.slice(-1);
  }
}
