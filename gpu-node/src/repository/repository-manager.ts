/**
 * The node's model repository manager (Triton's ModelRepositoryManager): which models load, when, and
 * how requests find a version. Control modes (Triton's --model-control-mode):
 * - `none`: every model of the repository loads at start; nothing changes afterwards.
 * - `explicit`: only `loadModels` load at start (`*` = all); then loadModel / unloadModel.
 * - `poll`: everything loads at start, and `poll()` (run every `pollSecs`) loads added or changed
 *   models and versions side by side, and unloads removed ones once their accepted requests finished.
 */
import { join } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ComposingModels } from '../ensemble/composing-models.js';
import { registerEnsembleScheduler } from '../ensemble/ensemble-registration.js';
import { loadWaves } from '../ensemble/load-order.js';
import { assertValidModelName, isValidModelName, modelNameProblem, quoteName } from '../../../shared/src/names/index.js';
import { assertInsideRoots } from './contained-folder.js';
import { folderStamp } from './folder-stamp.js';
import type { LoadOptions } from './load-options.js';
import { listModelNames, readModelDirectory, type ModelDirectory } from './model-directory.js';
import { writeOverrideDirectory } from './override-directory.js';
import type { RepositoryIndexEntry } from './repository-index.js';
import {
  enqueueModelOperation,
  loadFailedError,
  newModelEntry,
  reconcileModel,
  type ModelEntry,
  type ReconcileOutcome,
} from './model-loader.js';
import type { ModelPlatform } from '../models/model-platform.js';
import type { ModelVersion } from '../models/model-version.js';
import { validateInferRequest } from '../models/request-validator.js';
import type { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import { SchedulerRegistry } from '../scheduler/scheduler-registry.js';

export type ControlMode = 'none' | 'explicit' | 'poll';

export interface RepositoryManagerOptions {
  readonly repositoryPath: string;
  /**
   * Folders a model folder may resolve into once symbolic links are followed; default the repository
   * itself. An s3:// mirror adds its store, which its repository folder links into.
   */
  readonly repositoryRoots?: readonly string[];
  readonly platform: ModelPlatform;
  /** Default 'none'. */
  readonly controlMode?: ControlMode;
  /** Explicit mode only: models to load at start; ['*'] loads all. Default none. */
  readonly loadModels?: readonly string[];
  /** Poll mode only: seconds between repository scans; 0 disables the timer (poll() still works). Default 15. */
  readonly pollSecs?: number;
  /** Disables auto-complete: a model folder must then hold a config.pbtxt. Default false. */
  readonly strict?: boolean;
  /** Models loaded at once at start and per poll (Triton's --model-load-thread-count). Default 4. */
  readonly loadThreadCount?: number;
  /** Told about failures nobody awaits (background polls). Default: ignored. */
  readonly onError?: (message: string) => void;
  /** `--rate-limit=execution_count`: one limiter shared by every model of the node. Default off. */
  readonly rateLimiter?: RateLimiter;
}

/**
 * Triton's answer when a model's folder cannot be read (absent, a name the file system refuses, ...):
 * INTERNAL, worded as Triton words it; the system's own text goes to the node's log, not to the client.
 */
function pollFailedError(name: string, cause: unknown): TesseraError {
  return new TesseraError('INTERNAL', `failed to load '${name}', failed to poll from model repository`, { cause });
}

export const LOAD_UNLOAD_NOT_ALLOWED = 'explicit model load / unload is not allowed if polling is enabled';

/** Models loaded at once at start and per poll (Triton's --model-load-thread-count default). */
const DEFAULT_LOAD_THREAD_COUNT = 4;

/** Runs `task` over `items`, at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class RepositoryManager {
  private readonly entries = new Map<string, ModelEntry>();
  /** Every version object that may still hold instances, draining ones included. */
  private readonly live = new Set<ModelVersion>();
  private readonly mode: ControlMode;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stopped = false;
  /** Repository folders skipped for their names, each logged once. */
  private readonly skippedFolders = new Set<string>();
  /** What ensembles' steps run on: the same resolve → validate → infer path as a client request. */
  private readonly composing: ComposingModels = {
    config: (name, version) => this.resolve(name, version).config,
    infer: (request, signal) => {
      const version = this.resolve(request.modelName, request.modelVersion);
      return version.infer(request, validateInferRequest(request, version.config, version.name), signal, undefined, {
        // Not yet: a decoupled step would have to feed each of its responses through the rest of the ensemble.
        refusal: `ensemble steps on decoupled models are not supported by Tessera yet (model '${version.name}')`,
      });
    },
  };
  /** Schedulers that live outside scheduler/: ensembles', whose steps run on `composing`. */
  private readonly schedulers = registerEnsembleScheduler(new SchedulerRegistry(), this.composing);

  constructor(private readonly options: RepositoryManagerOptions) {
    this.mode = options.controlMode ?? 'none';
    const names = options.loadModels ?? [];
    if (names.length > 0 && this.mode !== 'explicit') {
      throw TesseraError.invalidArg("Use of '--load-model' requires setting '--model-control-mode=explicit' as well.");
    }
    if (names.includes('*') && names.length > 1) {
      throw TesseraError.invalidArg("Wildcard model name '*' must be the ONLY startup model if specified at all.");
    }
  }

  get controlMode(): ControlMode {
    return this.mode;
  }

  /** Loads the startup models; failures leave those models UNAVAILABLE with a reason (see failures()). */
  async start(): Promise<void> {
    const startup = this.options.loadModels ?? [];
    const all = this.mode !== 'explicit' || (startup.length === 1 && startup[0] === '*');
    const names = all ? await this.listModels() : [...new Set(startup)].filter((name) => this.acceptStartupName(name));
    await this.loadInWaves(names);
    const secs = this.options.pollSecs ?? 15;
    if (this.mode === 'poll' && secs > 0 && !this.stopped) {
      this.timer = setInterval(() => {
        this.poll().catch((error: unknown) => {
          this.options.onError?.(`failed to poll model repository: ${error instanceof Error ? error.message : String(error)}`);
        });
      }, secs * 1000);
      this.timer.unref();
    }
  }

  /** One repository scan (poll mode's timer calls it; tests call it directly). Concurrent calls share one scan. */
  poll(): Promise<void> {
    this.polling ??= this.scan().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  async loadModel(name: string, options: LoadOptions = {}): Promise<void> {
    assertValidModelName(name);
    if (this.mode !== 'explicit') throw TesseraError.unavailable(LOAD_UNLOAD_NOT_ALLOWED);
    if (options.files?.size && options.configJson === undefined) {
      throw TesseraError.invalidArg(`failed to load '${name}': file overrides require a 'config' parameter`);
    }
    if (options.configJson === undefined && !options.files?.size) {
      await this.loadFromRepository(name, true);
      return;
    }
    // Written before the model gets an entry: files that cannot be written leave no trace (index, readiness).
    // A file the file system refuses (a name too long, ...) is Triton's poll failure, not raw errno text.
    const override = options.files?.size
      ? await writeOverrideDirectory(name, options.files).catch((error: unknown) => {
          throw error instanceof TesseraError ? error : pollFailedError(name, error);
        })
      : undefined;
    const entry = this.entry(name);
    const wasWanted = entry.wanted;
    entry.wanted = true;
    await enqueueModelOperation(entry, async () => {
      let directory: ModelDirectory;
      let outcome: ReconcileOutcome;
      try {
        try {
          directory = await this.readRepositoryFolder(name, override?.modelPath);
        } catch (error) {
          // Nothing was read, so nothing changed: a model never served leaves no entry behind to count against readiness.
          this.forgetIfNeverServed(entry, wasWanted);
          if (error instanceof TesseraError) throw error;
          throw pollFailedError(name, error);
        }
        outcome = await this.reconcile(entry, directory, options.configJson, true);
        if (options.configJson !== undefined && outcome.failures.some((f) => f.config === true)) {
          const detail = outcome.failures.map((f) => f.reason).join('; ');
          throw TesseraError.invalidArg(`failed to load '${name}', Invalid config override: ${detail}`);
        }
      } catch (error) {
        // Nothing may stay behind from a failed load: the uploaded files go with it.
        await override?.remove();
        throw error;
      }
      if (override && outcome.failures.length === 0) {
        const previous = entry.override;
        entry.override = override;
        void outcome.retired.then(() => previous?.remove());
      } else if (override) {
        await override.remove();
      }
      if (outcome.failures.length) throw loadFailedError(name, outcome);
    });
  }

  /** Marks every version UNLOADING now and returns; they close once their accepted requests finished. */
  async unloadModel(name: string): Promise<void> {
    assertValidModelName(name);
    if (this.mode !== 'explicit') throw TesseraError.unavailable(LOAD_UNLOAD_NOT_ALLOWED);
    const entry = this.entries.get(name);
    if (!entry) return;
    entry.wanted = false;
    void enqueueModelOperation(entry, async () => {
      entry.failure = undefined;
      const unloads = [...entry.versions.values()].map((version) => version.unload());
      const previous = entry.override;
      entry.override = undefined;
      void Promise.all(unloads).then(() => previous?.remove());
    });
  }

  /**
   * Triton's GetModel: the READY version asked for, or the highest READY one; Triton's errors otherwise.
   * A name the manager never loaded is INVALID_ARG (400), as Triton's repository manager answers for a
   * name it has no identifier of; a known model without the version, or without a ready one, is NOT_FOUND.
   */
  resolve(name: string, requested?: string): ModelVersion {
    const entry = this.entries.get(name);
    if (!entry || entry.versions.size === 0) {
      // Only an unknown name can be invalid (none is ever loaded), so served requests never pay for the check.
      assertValidModelName(name);
      throw TesseraError.invalidArg(`Request for unknown model: '${name}' is not found`);
    }
    if (requested === undefined || requested === '') {
      const ready = this.readyVersions(name);
      const latest = ready[ready.length - 1];
      if (!latest) throw TesseraError.notFound(`Request for unknown model: '${name}' has no available versions`);
      return latest;
    }
    if (!/^\d+$/.test(requested)) {
      throw TesseraError.invalidArg(
        `failed to get model version from specified version string '${requested}', version should be an integral value > 0`,
      );
    }
    const found = entry.versions.get(Number(requested));
    if (!found) throw TesseraError.notFound(`Request for unknown model: '${name}' version ${requested} is not found`);
    if (!found.isReady) {
      throw TesseraError.unavailable(`Request for unknown model: '${name}' version ${requested} is not at ready state`);
    }
    return found;
  }

  /** READY versions of a model, ascending. */
  readyVersions(name: string): ModelVersion[] {
    const entry = this.entries.get(name);
    if (!entry) return [];
    return [...entry.versions.values()].filter((v) => v.isReady).sort((a, b) => a.version - b.version);
  }

  /** Every model known, with its versions ascending. */
  models(): { name: string; versions: ModelVersion[]; failure: string | undefined; wanted: boolean }[] {
    return [...this.entries.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((entry) => ({
        name: entry.name,
        versions: [...entry.versions.values()].sort((a, b) => a.version - b.version),
        failure: entry.failure,
        wanted: entry.wanted,
      }));
  }

  /** Triton's strict readiness: every model that should be loaded is, and no version failed. */
  allReady(): boolean {
    for (const entry of this.entries.values()) {
      const versions = [...entry.versions.values()];
      if (entry.wanted && !versions.some((v) => v.isReady)) return false;
      if (versions.some((v) => !v.isReady && !v.isUnloaded)) return false;
    }
    return true;
  }

  /** The repository index: every model folder, plus loaded models whose folder went away or was an override. */
  async repositoryIndex(readyOnly: boolean): Promise<RepositoryIndexEntry[]> {
    const names = new Set(await this.listModels().catch(() => [] as string[]));
    for (const name of this.entries.keys()) names.add(name);
    const index: RepositoryIndexEntry[] = [];
    for (const name of [...names].sort()) {
      const entry = this.entries.get(name);
      const versions = entry ? [...entry.versions.values()].sort((a, b) => a.version - b.version) : [];
      for (const v of versions) {
        if (readyOnly && !v.isReady) continue;
        index.push({ name, version: String(v.version), state: v.state, ...(v.reason ? { reason: v.reason } : {}) });
      }
      if (versions.length === 0 && !readyOnly) {
        index.push(entry?.failure ? { name, state: 'UNAVAILABLE', reason: entry.failure } : { name });
      }
    }
    return index;
  }

  /**
   * Per model with a READY version: those versions, their capacity (instances × max(1, max_batch_size)
   * summed), and the model's execution-time EMA; what load reports need besides `workload`.
   */
  servingModels(): { name: string; versions: ModelVersion[]; capacity: number; execTimeEmaMs: number | null }[] {
    const serving = [];
    for (const entry of [...this.entries.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const versions = this.readyVersions(entry.name);
      if (versions.length === 0) continue;
      const capacity = versions.reduce((sum, v) => sum + v.capacity(), 0);
      serving.push({ name: entry.name, versions, capacity, execTimeEmaMs: entry.execTimeEma.valueMs });
    }
    return serving;
  }

  /** Queued and executing requests of a model, summed over its versions (draining ones included). */
  workload(name: string): { queued: number; inflight: number } {
    let queued = 0;
    let inflight = 0;
    for (const version of this.liveVersions()) {
      if (version.name !== name) continue;
      const load = version.workload();
      queued += load.queued;
      inflight += load.inflight;
    }
    return { queued, inflight };
  }

  /** Stops polling, then unloads everything; resolves when every accepted request finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.polling?.catch(() => undefined);
    const unloads = this.liveVersions().map((version) => version.unload());
    for (const entry of this.entries.values()) {
      const override = entry.override;
      entry.override = undefined;
      if (override) void Promise.all(unloads).then(() => override.remove());
    }
    await Promise.all(unloads);
  }

  private liveVersions(): ModelVersion[] {
    this.forgetClosedVersions();
    return [...this.live];
  }

  /** Drops versions that hold nothing any more (unloaded or failed), so loads and unloads keep no garbage. */
  private forgetClosedVersions(): void {
    for (const version of this.live) {
      if (version.state === 'UNAVAILABLE') this.live.delete(version);
    }
  }

  private entry(name: string): ModelEntry {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = newModelEntry(name);
      this.entries.set(name, entry);
    }
    return entry;
  }

  /** The repository's model folders whose names are valid; the others are skipped, each logged once. */
  private async listModels(): Promise<string[]> {
    const names = await listModelNames(this.options.repositoryPath);
    return names.filter((name) => {
      const problem = modelNameProblem(name);
      if (problem === undefined) return true;
      if (!this.skippedFolders.has(name)) {
        this.skippedFolders.add(name);
        this.options.onError?.(`skipping model repository folder ${quoteName(name)}: ${problem}`);
      }
      return false;
    });
  }

  /** A --load-model name: an invalid one is logged and skipped (it never becomes an entry or a report line). */
  private acceptStartupName(name: string): boolean {
    if (isValidModelName(name)) return true;
    this.options.onError?.(`skipping startup model ${quoteName(name)}: ${modelNameProblem(name) ?? ''}`);
    return false;
  }

  /**
   * Reads the model folder of `name`: `override` (a load's temporary folder) or the repository's
   * folder, which must resolve inside the repository (contained-folder.ts).
   */
  private async readRepositoryFolder(name: string, override?: string): Promise<ModelDirectory> {
    if (override !== undefined) return readModelDirectory(override, name);
    const folder = join(this.options.repositoryPath, name);
    await assertInsideRoots(folder, this.options.repositoryRoots ?? [this.options.repositoryPath], name);
    return readModelDirectory(folder, name);
  }

  /** Loads (or reloads what changed of) a model from its repository folder; throws Triton's load error. */
  private async loadFromRepository(name: string, force: boolean): Promise<void> {
    const entry = this.entry(name);
    const wasWanted = entry.wanted;
    entry.wanted = true;
    let pollError: unknown;
    const outcome = await enqueueModelOperation(entry, async () => {
      let directory: ModelDirectory;
      // Taken before the read: a change made while reading shows at the next poll.
      const stamp = await folderStamp(join(this.options.repositoryPath, name));
      try {
        directory = await this.readRepositoryFolder(name);
      } catch (error) {
        if (error instanceof TesseraError) {
          // There but refused (a link leading outside the repository): a failure the index shows.
          entry.failure = error.message;
          return { failures: [{ reason: entry.failure }], retired: Promise.resolve() } satisfies ReconcileOutcome;
        }
        // Not in the repository (or unreadable): like Triton, no model entry is made, so readiness is unaffected.
        pollError = error;
        this.forgetIfNeverServed(entry, wasWanted);
        return { failures: [], retired: Promise.resolve() } satisfies ReconcileOutcome;
      }
      entry.appliedStamp = stamp;
      if (!force && directory.fingerprint === entry.appliedFingerprint && !entry.override) {
        return { failures: [], retired: Promise.resolve() } satisfies ReconcileOutcome;
      }
      const result = await this.reconcile(entry, directory, undefined, force);
      if (force && entry.override) {
        // A plain load after a load with file overrides serves the repository folder again.
        const previous = entry.override;
        entry.override = undefined;
        void result.retired.then(() => previous.remove());
      }
      return result;
    });
    if (pollError !== undefined) {
      const error = pollFailedError(name, pollError);
      this.options.onError?.(error.message);
      throw error;
    }
    if (outcome.failures.length) {
      this.options.onError?.(`failed to load '${name}': ${outcome.failures.map((f) => f.reason).join('; ')}`);
      throw loadFailedError(name, outcome);
    }
  }

  /** Drops an entry that a failed read created: no version, no override, not wanted before. */
  private forgetIfNeverServed(entry: ModelEntry, wasWanted: boolean): void {
    if (entry.versions.size > 0 || entry.override !== undefined) return;
    if (wasWanted && entry.failure !== undefined) return;
    if (this.entries.get(entry.name) === entry) this.entries.delete(entry.name);
  }

  /** Loads `names`, ensembles after the models their steps name (see ensemble/load-order.ts); failures stay in the index. */
  private async loadInWaves(names: readonly string[]): Promise<void> {
    for (const wave of await loadWaves(this.options.repositoryPath, names)) {
      await forEachLimited(wave, this.options.loadThreadCount ?? DEFAULT_LOAD_THREAD_COUNT, (name) => this.loadFromRepository(name, false).catch(() => undefined));
    }
  }

  private reconcile(
    entry: ModelEntry,
    directory: ModelDirectory,
    configJson: string | undefined,
    force: boolean,
  ): Promise<ReconcileOutcome> {
    return reconcileModel(
      entry,
      {
        directory,
        strict: this.options.strict ?? false,
        configJson,
        force,
        rateLimiter: this.options.rateLimiter,
        schedulers: this.schedulers,
      },
      this.options.platform,
      (version) => {
        // Pruned on every load too: a node that only loads and unloads never asks for its live versions.
        this.forgetClosedVersions();
        this.live.add(version);
      },
    );
  }

  /**
   * The models of `names` whose folder stamp differs from the one of their last read (new ones
   * included). One model at a time: a poll's few stat calls then interleave with requests instead of
   * arriving as one burst of completions that requests wait behind.
   */
  private async changedModels(names: readonly string[]): Promise<string[]> {
    const changed: string[] = [];
    for (const name of names) {
      const entry = this.entries.get(name);
      const unchanged =
        entry?.appliedStamp !== undefined &&
        entry.override === undefined &&
        (await folderStamp(join(this.options.repositoryPath, name))) === entry.appliedStamp;
      if (!unchanged) changed.push(name);
    }
    return changed;
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    const present = new Set(await this.listModels());
    const work: Promise<unknown>[] = [];
    // Only models whose stamp changed are read again (and reload when their fingerprint changed too):
    // an unchanged model costs a few stat calls, and none of its files is read or parsed.
    work.push(this.loadInWaves(await this.changedModels([...present])));
    for (const [name, entry] of this.entries) {
      if (present.has(name)) continue;
      work.push(
        enqueueModelOperation(entry, async () => {
          // Removed from the repository: unload, and drop it from the index once it is gone.
          await Promise.all([...entry.versions.values()].map((version) => version.unload()));
          if (this.entries.get(name) === entry) this.entries.delete(name);
        }),
      );
    }
    await Promise.all(work);
  }
}
