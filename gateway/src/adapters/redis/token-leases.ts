/**
 * Rate-limit tokens a gateway took from a tenant's Redis buckets ahead of need, spent locally.
 *
 * Why: deciding every request in Redis put a Redis round trip on every request's path, about 0.2 ms
 * of the gateway's 0.8 ms added latency at low load, and a script call per cache hit at high load.
 * With leasing, the script call that decides a request also takes a lease of up to `leaseMs` worth of
 * the tenant's rate (token-bucket.lua), and the following requests of that tenant on this gateway
 * are decided here, in memory, until the lease runs out or expires; then the next request goes to
 * Redis again (with a new lease).
 *
 * What stays true: every request allowed spent a token taken from the shared bucket, so a tenant never
 * gets more than its buckets grant, whatever the number of gateways; the buckets and their Lua script
 * are the only shared state. What changes, bounded by the lease size (at most `rate x leaseMs`, and
 * at most half the burst): tokens are spent up to `leaseMs` after Redis counted them (`keepWarmMs` for
 * a holding kept warm, below), so over a window a tenant may see up to one lease per gateway more than
 * its burst; and tokens one gateway holds unused are not available to another, and expire. A tier
 * whose lease would be under MIN_LEASE tokens (low rates: 10 requests/s at 100 ms) is not leased at
 * all and stays decided in Redis request by request.
 * `leaseMs` 0 turns leasing off (gateway config `rateLimitLeaseMs`).
 *
 * RateLimit-Remaining for a request decided locally is the bucket's remainder after the lease plus
 * what this gateway still holds: the tenant's tokens as this gateway knows them.
 *
 * Renewal ahead of time (`keepWarmMs` > 0): a holding used since its last grant is renewed before it
 * runs out, in the background (`dueForRenewal`, `renewed`), so a tenant's next request, or the one after
 * its holding ran low, does not wait for Redis. A renewal gives back to the bucket what the holding has
 * when the call leaves and leases the full target afresh in the same script call (what was spent
 * locally while it was in flight comes out of the new grant). A warm holding stays spendable past its
 * expiry until a renewal comes back (a late timer on a busy core, a Redis slow to answer), and only
 * down to zero: it never grows before a grant is in, so what it spends was granted by Redis.
 *
 * Renewals follow use, not time: a holding is named for renewal only when it was spent from since its
 * last grant, and then when it fell under half its target or is past half its life. One not spent
 * from is left as it is: it costs no script call and no timer tick, and stays spendable while warm
 * (`keepWarmMs` after its last use), so the first request after a pause shorter than that is still
 * decided here, without Redis, and its take makes the holding due at once. So a tenant costs at most one script call
 * per bucket per half lease while busy, about one per request (or per completion charge) while slow,
 * and none while idle; before, every warm bucket was renewed every half lease whether spent or not
 * (about 40 script calls a second for an idle LLM tenant's two buckets, 19 ms of gateway CPU a second).
 * The trade-off: tokens not renewed were counted in Redis up to `keepWarmMs` (not `leaseMs`) before they
 * are spent, so a tenant back from a pause finds its refilled bucket plus what this gateway still holds:
 * at most one lease per gateway beyond its burst, the bound stated above (a renewal would have given
 * those tokens back to a full bucket, which drops them). And a holding a tenant stopped using keeps its
 * tokens from other gateways until it lapses, `keepWarmMs` after its last use, as a renewed one did.
 */
import type { RateLimitDecision, RateLimits } from '../../core/ports/index.js';

/** Fewer tokens than this per lease are not worth the bookkeeping: the tier is decided in Redis. */
export const MIN_LEASE = 2;

export interface LeaseSize {
  readonly requests: number;
  readonly elements: number;
}

/** What one lease takes for these limits: `leaseMs` of each rate, at most half its burst (0: none). */
export function leaseTarget(limits: RateLimits, leaseMs: number): LeaseSize {
  const size = (perSecond: number, burst: number): number => {
    if (perSecond <= 0 || leaseMs <= 0) return 0;
    const tokens = Math.min(Math.floor((perSecond * leaseMs) / 1000), Math.floor(burst / 2));
    return tokens >= MIN_LEASE ? tokens : 0;
  };
  return { requests: size(limits.requestsPerSecond, limits.burst), elements: size(limits.elementsPerSecond, limits.elementsBurst) };
}

/** What Redis answered about a lease. */
export interface LeaseGrant extends LeaseSize {
  /** Requests left in the bucket after the lease (floor). */
  readonly remainingAfter: number;
  /** Seconds until the bucket is full again, as of the call. */
  readonly resetSeconds: number;
}

interface Holding {
  requests: number;
  elements: number;
  expiresAt: number;
  remainingAfter: number;
  resetSeconds: number;
  /** The limits the lease was taken under: a tier change drops the holding. */
  readonly limits: RateLimits;
  /** `leaseTarget(limits)`, kept: a take checks it (runningLow) and must not build it each time. */
  readonly target: LeaseSize;
  /** When a request last spent from it (or leased it): renewals stop `keepWarmMs` after. */
  lastUsedAt: number;
  /** A renewal for it is in flight. */
  renewing: boolean;
  /** Spent from since its last grant: only such a holding is renewed ahead of time. */
  used: boolean;
}

/** A holding due for renewal: what to lease afresh under which limits. */
export interface RenewalDue {
  readonly key: string;
  readonly limits: RateLimits;
}

/** Expired holdings of tenants that went quiet are swept at most this often. */
const SWEEP_EVERY_MS = 10_000;

export class TokenLeases {
  private readonly holdings = new Map<string, Holding>();
  private lastSweep: number;
  /** Set by `dueForRenewal`: a holding was spent from (due now or later) or is being renewed: the renewal tick must go on. */
  private inUse = false;

  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
    /** How long after its last use a holding is renewed ahead of time; 0: never (it expires). */
    private readonly keepWarmMs = 0,
  ) {
    this.lastSweep = now();
  }

  /** Bucket keys with tokens held (for tests and diagnostics). */
  get size(): number {
    return this.holdings.size;
  }

  /** Allows the request from held tokens, or answers undefined when they do not cover it (ask Redis). */
  take(key: string, elements: number, limits: RateLimits): RateLimitDecision | undefined {
    const held = this.valid(key, limits);
    if (held === undefined) return undefined;
    const requests = limits.requestsPerSecond > 0 ? 1 : 0;
    const tensorElements = limits.elementsPerSecond > 0 ? elements : 0;
    if (held.requests < requests || held.elements < tensorElements) return undefined;
    held.requests -= requests;
    held.elements -= tensorElements;
    held.lastUsedAt = this.now();
    held.used = true;
    return { allowed: true, retryAfterMs: 0, remaining: held.remainingAfter + held.requests, limit: limits.burst, resetSeconds: held.resetSeconds };
  }

  /** What to lease with the next script call for `key`: the target less what is held; undefined when none. */
  wanted(key: string, limits: RateLimits): LeaseSize | undefined {
    const target = leaseTarget(limits, this.leaseMs);
    if (target.requests === 0 && target.elements === 0) return undefined;
    const held = this.valid(key, limits);
    return { requests: Math.max(0, target.requests - (held?.requests ?? 0)), elements: Math.max(0, target.elements - (held?.elements ?? 0)) };
  }

  /** Adds what Redis leased; the holding lives `leaseMs` from now. */
  add(key: string, limits: RateLimits, grant: LeaseGrant): void {
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
    const expiresAt = now + this.leaseMs;
    const held = this.valid(key, limits);
    if (held === undefined) {
      if (grant.requests === 0 && grant.elements === 0) return;
      this.holdings.set(key, {
        requests: grant.requests,
        elements: grant.elements,
        expiresAt,
        remainingAfter: grant.remainingAfter,
        resetSeconds: grant.resetSeconds,
        limits,
        target: leaseTarget(limits, this.leaseMs),
        lastUsedAt: now,
        renewing: false,
        used: false,
      });
      return;
    }
    held.used = false;
    held.requests += grant.requests;
    held.elements += grant.elements;
    held.expiresAt = expiresAt;
    held.remainingAfter = grant.remainingAfter;
    held.resetSeconds = grant.resetSeconds;
  }

  /**
   * Holdings to renew now: warm, no renewal in flight, spent from since their last grant, and under half
   * their target or past half their life. Each is marked renewing until `renewed` or `endRenewal`. A
   * holding not spent from is not named, whatever its age or size (see the header): a tenant held at its
   * limit (an empty holding the bucket cannot refill) is not asked for again and again while idle.
   */
  dueForRenewal(): RenewalDue[] {
    this.inUse = false;
    if (this.keepWarmMs <= 0) return [];
    const now = this.now();
    const due: RenewalDue[] = [];
    for (const [key, held] of this.holdings) {
      if (held.renewing) {
        // Spent from while its renewal is out, most likely: the tick goes on rather than stop and restart.
        this.inUse = true;
        continue;
      }
      // Swept here too: the tick stops once no holding is left.
      if (this.lapsed(held, now)) {
        this.holdings.delete(key);
        continue;
      }
      if (!this.warm(held, now)) continue;
      if (!held.used) continue;
      this.inUse = true;
      if (this.runningLow(held) || held.expiresAt - now <= this.leaseMs / 2) {
        held.renewing = true;
        due.push({ key, limits: held.limits });
      }
    }
    return due;
  }

  /**
   * Whether the last `dueForRenewal` saw a holding spent from since its last grant (named due or not) or
   * with a renewal out: the tick must go on. Only a tick that finds every holding unspent lets it stop, so
   * a busy tenant keeps one timer instead of one per renewal (a stop after each renewal, a start at the next take).
   */
  get renewalAhead(): boolean {
    return this.inUse;
  }

  /** Whether the holding of `key` fell under half its target (a take may kick its renewal at once). */
  lowAndWarm(key: string): boolean {
    const held = this.holdings.get(key);
    return this.keepWarmMs > 0 && held !== undefined && !held.renewing && this.runningLow(held);
  }

  /** Marks `key` renewing (a renewal kicked by a take); false when it cannot be (gone, or already). */
  markRenewing(key: string): boolean {
    const held = this.holdings.get(key);
    if (held === undefined || held.renewing) return false;
    held.renewing = true;
    return true;
  }

  /** What a renewal leaving now gives back: the holding's tokens as they are (zero when none). */
  snapshot(key: string, limits: RateLimits): LeaseSize {
    const held = this.valid(key, limits);
    return { requests: held?.requests ?? 0, elements: held?.elements ?? 0 };
  }

  /** The full lease for `limits` (what a renewal asks for). */
  target(limits: RateLimits): LeaseSize {
    return leaseTarget(limits, this.leaseMs);
  }

  /**
   * A renewal came back: `gaveBack` went back to the bucket and `grant` was leased, so the holding is
   * the grant less what was spent while the call was out (never below zero); it lives `leaseMs` again.
   */
  renewed(key: string, limits: RateLimits, gaveBack: LeaseSize, grant: LeaseGrant): void {
    const held = this.valid(key, limits);
    if (held === undefined) {
      // Expired or dropped meanwhile: what it spent is unknown but at most what it gave back.
      this.add(key, limits, { ...grant, requests: Math.max(0, grant.requests - gaveBack.requests), elements: Math.max(0, grant.elements - gaveBack.elements) });
      return;
    }
    held.requests = Math.max(0, held.requests + grant.requests - gaveBack.requests);
    held.elements = Math.max(0, held.elements + grant.elements - gaveBack.elements);
    held.expiresAt = this.now() + this.leaseMs;
    held.remainingAfter = grant.remainingAfter;
    held.resetSeconds = grant.resetSeconds;
    held.renewing = false;
    held.used = false;
  }

  /** A renewal failed (Redis down) or went into a take's own lease call: the holding keeps what it has. */
  endRenewal(key: string): void {
    const held = this.holdings.get(key);
    if (held !== undefined) held.renewing = false;
  }

  /** Used within `keepWarmMs`: renewed, and not dropped at its expiry (a late tick renews it then). */
  private warm(held: Holding, now: number): boolean {
    return this.keepWarmMs > 0 && now - held.lastUsedAt <= this.keepWarmMs;
  }

  /** Past its expiry with no renewal coming: a cold holding, or one whose renewal is not out. */
  private lapsed(held: Holding, now: number): boolean {
    return now >= held.expiresAt && !held.renewing && !this.warm(held, now);
  }

  private runningLow(held: Holding): boolean {
    return held.requests * 2 < held.target.requests || held.elements * 2 < held.target.elements;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, held] of this.holdings) if (this.lapsed(held, now)) this.holdings.delete(key);
  }

  /**
   * The holding for `key` if it is still good for `limits`; a lapsed or stale one is dropped. A warm one
   * outlives its expiry until a renewal reconciles it (what it spends meanwhile comes out of that
   * renewal's grant, `renewed`), so a late timer or a slow Redis does not put requests back on its path.
   */
  private valid(key: string, limits: RateLimits): Holding | undefined {
    const held = this.holdings.get(key);
    if (held === undefined) return undefined;
    if (this.lapsed(held, this.now()) || !sameLimits(held.limits, limits)) {
      this.holdings.delete(key);
      return undefined;
    }
    return held;
  }
}

function sameLimits(a: RateLimits, b: RateLimits): boolean {
  return (
    a === b ||
    (a.requestsPerSecond === b.requestsPerSecond && a.burst === b.burst && a.elementsPerSecond === b.elementsPerSecond && a.elementsBurst === b.elementsBurst)
  );
}
