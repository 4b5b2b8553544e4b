/**
 * Brings one model's served versions in line with what its folder holds now (Triton's
 * ModelLifeCycle::AsyncLoad): versions that are new or whose files changed load side by side with the
 * ones serving; each replaces its predecessor only once READY, and the predecessor drains (requests it
 * accepted finish) before it closes. Versions the policy no longer selects unload only when every
 * selected version is READY, so a failed reload leaves the old model serving.
 */
import { join } from 'node:path';
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import type { ModelSource } from '../backends/backend.js';
import { ExecTimeEma } from '../load-report/exec-time-ema.js';
import type { ModelPlatform } from '../models/model-platform.js';
import { ModelVersion } from '../models/model-version.js';
import type { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import type { SchedulerRegistry } from '../scheduler/scheduler-registry.js';
import type { ModelDirectory } from './model-directory.js';
import type { OverrideDirectory } from './override-directory.js';
import { selectVersions } from './version-policy.js';

/** Everything the manager knows about one model name. */
export interface ModelEntry {
  readonly name: string;
  /** The version objects the index shows and requests resolve to. */
  readonly versions: Map<number, ModelVersion>;
  /** The folder fingerprint each entry of `versions` was loaded from. */
  readonly fingerprints: Map<number, string>;
  /** A failure of the whole model (unreadable config, no version to load); cleared by a good load. */
  failure: string | undefined;
  /** The folder fingerprint of the last reconcile, so that polling skips unchanged models (even broken ones). */
  appliedFingerprint: string | undefined;
  /**
   * The folder's stat-only stamp (folder-stamp.ts) taken before its last read from the repository, so
   * that a poll finding the same stamp reads nothing; undefined when it came from elsewhere (overrides).
   */
  appliedStamp: string | undefined;
  /** Whether the model should be loaded: strict readiness counts only those. */
  wanted: boolean;
  /** Loads and unloads of one model run one after the other. */
  queue: Promise<unknown>;
  /** The temporary folder of the last load with file overrides. */
  override: OverrideDirectory | undefined;
  /** Smoothed batch execution time for load reports: per model name, so every version feeds it. */
  readonly execTimeEma: ExecTimeEma;
}

export function newModelEntry(name: string): ModelEntry {
  return {
    name,
    versions: new Map(),
    fingerprints: new Map(),
    failure: undefined,
    appliedFingerprint: undefined,
    appliedStamp: undefined,
    wanted: false,
    queue: Promise.resolve(),
    override: undefined,
    execTimeEma: new ExecTimeEma(),
  };
}

/** Runs `task` after every earlier operation on this model. */
export function enqueueModelOperation<T>(entry: ModelEntry, task: () => Promise<T>): Promise<T> {
  const run = entry.queue.then(task, task);
  entry.queue = run.catch(() => undefined);
  return run;
}

export interface ReconcileRequest {
  readonly directory: ModelDirectory;
  readonly strict: boolean;
  /** The load API's config JSON, replacing config.pbtxt. */
  readonly configJson?: string;
  /** Reload every selected version even when its files did not change (load API overrides). */
  readonly force: boolean;
  /** The node's rate limiter (`--rate-limit=execution_count`); absent when off. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** Schedulers registered by name from outside scheduler/ (ensembles'). */
  readonly schedulers?: SchedulerRegistry | undefined;
}

export interface ReconcileOutcome {
  /** Empty when every selected version is READY. */
  readonly failures: readonly { readonly version?: number; readonly reason: string; readonly config?: boolean }[];
  /** Version objects that left the served set and are draining; settle when they are closed. */
  readonly retired: Promise<void>;
}

export async function reconcileModel(
  entry: ModelEntry,
  request: ReconcileRequest,
  platform: ModelPlatform,
  track: (version: ModelVersion) => void,
): Promise<ReconcileOutcome> {
  const { directory } = request;
  entry.appliedFingerprint = directory.fingerprint;
  let resolved;
  try {
    resolved = await platform.resolveModel({
      modelName: entry.name,
      modelPath: directory.path,
      configPath: directory.configPath,
      text: request.configJson ?? directory.configText,
      format: request.configJson === undefined ? 'pbtxt' : 'json',
      strict: request.strict,
      versions: directory.versions,
    });
  } catch (error) {
    return failWholeModel(entry, withFileName(toTesseraError(error).message, request, directory), true);
  }
  const { config, backend } = resolved;
  const selected = selectVersions(config.versionPolicy, directory.versions);
  if (selected.length === 0) {
    return failWholeModel(entry, `at least one version must be available under the version policy of model '${entry.name}'`);
  }
  const specs = platform.expandInstanceGroups(config, resolved.autoGroups);
  const filename = config.defaultModelFilename || backend.defaultModelFilename;
  const toLoad = selected.filter((version) => {
    const current = entry.versions.get(version);
    return request.force || !current || current.isUnloaded || entry.fingerprints.get(version) !== directory.fingerprints.get(version);
  });

  const loading = toLoad.map((version) => {
    const versionDir = join(directory.path, String(version));
    const source: ModelSource = {
      name: entry.name,
      version,
      modelDir: directory.path,
      versionDir,
      modelPath: join(versionDir, filename),
      config,
    };
    const candidate = new ModelVersion(source, backend, {
      execTimeEma: entry.execTimeEma,
      ...(request.rateLimiter === undefined ? {} : { rateLimiter: request.rateLimiter }),
      ...(request.schedulers === undefined ? {} : { schedulers: request.schedulers }),
    });
    track(candidate);
    // A version nobody is served by shows LOADING right away; a READY one keeps serving meanwhile.
    if (!entry.versions.get(version)?.isReady) entry.versions.set(version, candidate);
    return candidate;
  });
  await Promise.all(loading.map((candidate) => candidate.load(specs)));

  const failures: { version: number; reason: string }[] = [];
  const retiring: Promise<void>[] = [];
  for (const candidate of loading) {
    const previous = entry.versions.get(candidate.version);
    entry.fingerprints.set(candidate.version, directory.fingerprints.get(candidate.version) ?? '');
    if (candidate.isReady) {
      entry.versions.set(candidate.version, candidate);
      if (previous && previous !== candidate) retiring.push(previous.unload());
    } else {
      failures.push({ version: candidate.version, reason: candidate.reason });
      if (previous?.isReady && previous !== candidate) continue; // failed reload: the old one keeps serving
      entry.versions.set(candidate.version, candidate);
    }
  }
  if (selected.every((version) => entry.versions.get(version)?.isReady)) {
    for (const [version, old] of entry.versions) {
      if (!selected.includes(version)) retiring.push(old.unload());
    }
  }
  entry.failure = failures.length ? failures.map((f) => `version ${f.version}: ${f.reason}`).join('; ') : undefined;
  return { failures, retired: Promise.all(retiring).then(() => undefined) };
}

function failWholeModel(entry: ModelEntry, reason: string, config = false): ReconcileOutcome {
  entry.failure = reason;
  return { failures: [{ reason, ...(config ? { config } : {}) }], retired: Promise.resolve() };
}

/** A config error must say which file it is about; the reader usually does, this makes sure. */
function withFileName(message: string, request: ReconcileRequest, directory: ModelDirectory): string {
  if (request.configJson !== undefined || message.includes(directory.configPath)) return message;
  return `${directory.configPath}: ${message}`;
}

/** Triton's message for a failed load through the API. */
export function loadFailedError(name: string, outcome: ReconcileOutcome): TesseraError {
  const details = outcome.failures
    .map((f) => (f.version === undefined ? f.reason : `version ${f.version} is at UNAVAILABLE state: ${f.reason};`))
    .join(' ');
  return TesseraError.invalidArg(`load failed for model '${name}': ${details}`);
}
