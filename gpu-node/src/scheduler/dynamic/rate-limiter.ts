/**
 * `--rate-limit=execution_count` (reference 4.5), shared by every model of the node. A batcher with a
 * ready batch stages its idle instances; staged instances are ordered by exec_count × max(priority, 1)
 * (lower first, ties by staging order), and only the head may be allocated — when its resources are free.
 * That head-of-line rule is Triton's: a head that cannot get its resources blocks everyone behind it.
 * A model that unloads is unregistered, so it neither stays staged nor keeps its resource declarations
 * (pool sizes are recomputed from the models still registered).
 */
import type { GateGrant, InstanceGate, InstanceGateFactory } from './instance-gate.js';

export interface RateLimitResource {
  readonly name: string;
  /** One system-wide pool instead of one per device. */
  readonly global: boolean;
  readonly count: number;
}

export interface RateLimitedInstance {
  /** instance_group.rate_limiter.resources */
  readonly resources: readonly RateLimitResource[];
  /** instance_group.rate_limiter.priority; 0 is treated as 1. */
  readonly priority: number;
  /** GPU ordinal, -1 for CPU: the pool of per-device resources. */
  readonly device: number;
}

/** `--rate-limit-resource=<name>:<count>[:<device>]`; no device = every device (and the global pool). */
export interface ResourceOverride {
  readonly name: string;
  readonly count: number;
  readonly device?: number;
}

interface InstanceState {
  readonly spec: RateLimitedInstance;
  executions: number;
}

interface ModelState {
  readonly instances: InstanceState[];
  readonly wake: () => void;
  /** Idle instances staged for a ready batch, with the staging order; empty when not staged. */
  staged: readonly number[];
  stagedAt: number;
}

function poolKey(resource: RateLimitResource, device: number): string {
  return resource.global ? `global/${resource.name.toLowerCase()}` : `${device}/${resource.name.toLowerCase()}`;
}

interface Registration {
  readonly instances: readonly RateLimitedInstance[];
  /** The batcher's state, once it built its gate. */
  model: ModelState | undefined;
}

export class RateLimiter {
  private readonly models = new Set<ModelState>();
  private readonly registrations = new Map<InstanceGateFactory, Registration>();
  private declared = new Map<string, number>();
  private readonly used = new Map<string, number>();
  private stagingSeq = 0;
  private readonly toWake = new Set<ModelState>();

  constructor(private readonly overrides: readonly ResourceOverride[] = []) {}

  /** Adds one model's instances (in the batcher's order); returns the gate factory for its batcher. */
  register(instances: readonly RateLimitedInstance[]): InstanceGateFactory {
    const registration: Registration = { instances, model: undefined };
    const factory: InstanceGateFactory = (wake) => {
      const model: ModelState = {
        instances: instances.map((spec) => ({ spec, executions: 0 })),
        wake,
        staged: [],
        stagedAt: 0,
      };
      // A factory called after unregister() (misuse) must not bring the model back into the order.
      if (this.registrations.get(factory) === registration) {
        registration.model = model;
        this.models.add(model);
      }
      return this.gateFor(model);
    };
    this.registrations.set(factory, registration);
    this.redeclare();
    return factory;
  }

  /**
   * Forgets a model registered with `register` (its scheduler stopped: nothing of it runs or waits
   * any more). Its declarations stop counting toward pool sizes, and whoever it was blocking may go.
   */
  unregister(gate: InstanceGateFactory): void {
    const registration = this.registrations.get(gate);
    if (registration === undefined) return;
    this.registrations.delete(gate);
    if (registration.model !== undefined) this.models.delete(registration.model);
    this.redeclare();
    this.attempt();
  }

  /** Models registered now. */
  get size(): number {
    return this.registrations.size;
  }

  /** Pool sizes by default: the largest count any registered instance declares. */
  private redeclare(): void {
    const declared = new Map<string, number>();
    for (const { instances } of this.registrations.values()) {
      for (const inst of instances) {
        for (const r of inst.resources) {
          const key = poolKey(r, inst.device);
          declared.set(key, Math.max(declared.get(key) ?? 0, r.count));
        }
      }
    }
    this.declared = declared;
  }

  /** Total units of a resource pool: the override when given, else the largest declaration. */
  capacity(resource: RateLimitResource, device: number): number {
    const name = resource.name.toLowerCase();
    const override = this.overrides.find(
      (o) => o.name.toLowerCase() === name && (o.device === undefined || resource.global || o.device === device),
    );
    return override?.count ?? this.declared.get(poolKey(resource, device)) ?? 0;
  }

  private gateFor(model: ModelState): InstanceGate {
    return {
      tryAcquire: (idle) => {
        if (model.staged.length === 0) model.stagedAt = this.stagingSeq++;
        model.staged = idle;
        const head = this.head();
        if (head === undefined || !this.available(head.model, head.instance)) return undefined;
        if (head.model !== model) {
          this.wakeLater(head.model);
          return undefined;
        }
        return this.allocate(model, head.instance);
      },
      withdraw: () => {
        if (model.staged.length === 0) return;
        model.staged = [];
        this.attempt();
      },
    };
  }

  /** The staged instance with the lowest exec_count × priority (earliest staged on ties). */
  private head(): { model: ModelState; instance: number } | undefined {
    let best: { model: ModelState; instance: number; score: number } | undefined;
    for (const model of this.models) {
      for (const i of model.staged) {
        const state = model.instances[i];
        if (state === undefined) continue;
        const score = state.executions * Math.max(1, state.spec.priority);
        if (best === undefined || score < best.score || (score === best.score && model.stagedAt < best.model.stagedAt)) {
          best = { model, instance: i, score };
        }
      }
    }
    return best;
  }

  private available(model: ModelState, instance: number): boolean {
    const spec = model.instances[instance]!.spec;
    return spec.resources.every((r) => {
      const key = poolKey(r, spec.device);
      return (this.used.get(key) ?? 0) + r.count <= this.capacity(r, spec.device);
    });
  }

  private allocate(model: ModelState, instance: number): GateGrant {
    const state = model.instances[instance]!;
    state.executions += 1;
    model.staged = [];
    const keys = state.spec.resources.map((r) => [poolKey(r, state.spec.device), r.count] as const);
    for (const [key, count] of keys) this.used.set(key, (this.used.get(key) ?? 0) + count);
    // Resources may allow the next head too (e.g. a pool of several units).
    this.attempt();
    let released = false;
    return {
      instance,
      release: () => {
        if (released) return;
        released = true;
        for (const [key, count] of keys) this.used.set(key, (this.used.get(key) ?? 0) - count);
        this.attempt();
      },
    };
  }

  /** Resources freed or a head withdrew: let the new head's batcher ask again. */
  private attempt(): void {
    const head = this.head();
    if (head !== undefined && this.available(head.model, head.instance)) this.wakeLater(head.model);
  }

  /** Wakes on a fresh microtask so one batcher's pump never runs inside another's. */
  private wakeLater(model: ModelState): void {
    if (this.toWake.has(model)) return;
    this.toWake.add(model);
    queueMicrotask(() => {
      this.toWake.delete(model);
      model.wake();
    });
  }
}
