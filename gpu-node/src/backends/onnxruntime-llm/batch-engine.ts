/**
 * Continuous batching for one model instance: every decode step runs over all active sequences, one
 * model run per length bucket (length-bucket.ts: sequences grouped by cached length, each bucket's cache
 * padded only to its own longest; with one bucket and cut runs, the buckets are length lanes sorted at
 * each step so each run holds rows of similar length: length-lanes.ts). The requests waiting when the engine gets to them are prefilled
 * together, one run per group of up to `maxBatchedTokens` padded tokens (`busyPrefillTokens` while other
 * work waits for the run: prefill-cap.ts; prefill-batch.ts: right-padded rows, each computing what it would
 * alone), their first tokens go out at once, and they join the next step; requests that arrive during a step
 * are prefilled between its runs (one per bucket, cut into runs of at most `decodeRunRows` rows:
 * decode-split.ts), so a newcomer waits for one run, not a whole step. A finished or cancelled sequence leaves right after the run that ends
 * it and its cache row goes back. Admission takes the waiting requests in priority order, then in the
 * configured prefill order (prefill-order.ts: arrival, or shortest requested work first with aging),
 * while fewer than `maxNumSeqs` run and the KV budget holds each one's worst case (prompt + max_tokens),
 * so a running sequence never runs out of cache; a request that cannot wait (policy `reject`) or would
 * never fit is refused with the reason.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { DecoderLayout } from './decoder-layout.js';
import { KvCache, type CopyCounters } from './kv-cache.js';
import { bucketIndexOf, bucketLimits } from './length-bucket.js';
import { laneCount, nextLaneMove } from './length-lanes.js';
import type { EngineStats } from './engine-stats.js';
import { chunkFeeds, paddedTokens, prefillFeeds, presentRow } from './prefill-batch.js';
import { DEFAULT_PREFILL_AGING_MS, DEFAULT_PREFILL_ORDER, joinsGroup, nextToPrefill, type PrefillPolicy, type WaitingKey } from './prefill-order.js';
import { sampleToken, seededRandom } from './sampling.js';
import { TextStream, type Detokenizer } from './text-stream.js';
import { FirstTokenTracer, type ArrivalMark } from './first-token-trace.js';
import { subRunRanges } from './decode-split.js';
import { requestSize } from './request-size.js';
import { prefillGroupCap, prefillRunCap } from './prefill-cap.js';
import { DecodeFeeds } from './decode-feeds.js';
import type { AddRequest, DecoderRunner, EngineOptions, FinishReason, RunnerTensors, SequenceEvent } from './engine-api.js';

export type { AddRequest, DecoderRunner, EngineOptions, FinishReason, RunnerTensors, SequenceEvent } from './engine-api.js';

interface Sequence extends WaitingKey {
  readonly request: AddRequest;
  readonly reservedBytes: number;
  readonly stream: TextStream;
  readonly random: () => number;
  generated: number;
  nextToken: number;
  cancelled: boolean;
  readonly mark: ArrivalMark;
}

/** A prompt longer than a prefill run's budget, prefilled a chunk per admission round: its cache so far ([1, heads, done, head_dim] per past input). */
interface Chunking {
  readonly s: Sequence;
  done: number;
  past: Float32Array[];
}

/** The sequences of one length bucket and their cache (row r of the cache = rows[r]). */
interface Bucket {
  /** Sequences here have fewer cached positions than this. */
  readonly limit: number;
  readonly cache: KvCache;
  readonly rows: Sequence[];
}

/** The priority of a request's `priority` 0 (the default level) sits below every explicit level. */
const DEFAULT_LEVEL = Number.MAX_SAFE_INTEGER;

export class BatchEngine {
  private readonly waiting: Sequence[] = [];
  private readonly buckets: Bucket[];
  private readonly limits: readonly number[];
  /** Whether the buckets are length lanes of one bucket (length-lanes.ts). */
  private readonly laned: boolean;
  private active = 0;
  /** Events not yet emitted (emitted after each admission round and each step). */
  private pending: SequenceEvent[] = [];
  /** The requests whose prefill is in flight (neither waiting nor in a bucket: a cancel must still find them). */
  private prefilling: Sequence[] = [];
  private reservedBytes = 0;
  private arrivals = 0;
  private running = false;
  /** The engine's counters (EngineStats: what each one counts). */
  private readonly counts = {
    steps: 0, stepSequences: 0, stepCopyNs: 0, stepModelNs: 0, stepRuns: 0, stepFetchedBytes: 0, stepPaddedPositions: 0, stepCachedPositions: 0, bucketMoves: 0, prefillsBetweenRuns: 0, prefills: 0,
    prefillRuns: 0, prefillTokens: 0, prefillPaddedTokens: 0, prefillChunks: 0, admissionWaitNs: 0, prefillNs: 0, firstTokenNs: 0,
    eventMessages: 0, events: 0,
  };
  /** The long prompt being prefilled in chunks, if any (admitted: counted in `active`). */
  private chunking: Chunking | undefined;
  readonly bytesPerToken: number;
  private readonly policy: PrefillPolicy;
  private readonly decodeFeeds: DecodeFeeds;
  private readonly tracer = new FirstTokenTracer();

  constructor(
    private readonly runner: DecoderRunner,
    private readonly layout: DecoderLayout,
    private readonly vocab: number,
    private readonly tokenizer: Detokenizer,
    private readonly options: EngineOptions,
    private readonly emit: (events: SequenceEvent[]) => void,
  ) {
    // One bucket with its rows in length lanes (length-lanes.ts): lanes are buckets of the same limit.
    const lanes = laneCount(options.lengthBuckets, options.decodeRunRows ?? 0, options.maxNumSeqs);
    this.laned = lanes > 1;
    this.limits = lanes > 1 ? new Array<number>(lanes).fill(options.contextLength) : bucketLimits(options.lengthBuckets, options.contextLength);
    this.buckets = this.limits.map((limit) => ({
      limit,
      cache: new KvCache(layout, options.maxNumSeqs, limit, runner.lastPositionOutputs === undefined),
      rows: [],
    }));
    this.bytesPerToken = layout.layers * 2 * layout.heads * layout.headDim * 4;
    this.decodeFeeds = new DecodeFeeds(layout, vocab, options.maxNumSeqs, runner.lastPositionOutputs);
    this.policy = { order: options.prefillOrder ?? DEFAULT_PREFILL_ORDER, agingMs: options.prefillAgingMs ?? DEFAULT_PREFILL_AGING_MS };
  }

  /** Checks a request against the context and budget; refused ones get their error event at once. */
  add(request: AddRequest): void {
    const prompt = request.promptIds.length;
    const { kvCacheBytes } = this.options;
    const fail = (error: TesseraError) => this.send([{ id: request.id, text: '', tokens: 0, error }]);
    const sized = requestSize(prompt, request.params.maxTokens, this.options, this.bytesPerToken);
    if (sized instanceof TesseraError) return fail(sized);
    const { maxTokens, reservedBytes } = sized;
    if (this.options.admission === 'reject' && !this.fits(reservedBytes)) {
      return fail(TesseraError.unavailable(`the KV cache is full (${this.active} sequences running, ${this.reservedBytes} of ${kvCacheBytes} bytes held); try again later`));
    }
    if (this.options.maxQueueSize > 0 && this.waiting.length >= this.options.maxQueueSize) {
      return fail(TesseraError.unavailable('Exceeds maximum queue size'));
    }
    const seed = request.params.seed ?? Math.floor(Math.random() * 2 ** 32);
    this.waiting.push({
      request,
      maxTokens,
      promptLength: prompt,
      level: request.priority > 0 ? request.priority : DEFAULT_LEVEL,
      reservedBytes,
      arrival: this.arrivals++,
      arrivedNs: process.hrtime.bigint(),
      stream: new TextStream(this.tokenizer, request.params.stop),
      random: seededRandom(seed),
      generated: 0,
      nextToken: -1,
      cancelled: false,
      mark: this.tracer.arrived(request.sentAtMs),
    });
    this.kick();
  }

  /** A waiting request leaves now; a running one right after the step in flight. */
  cancel(id: number): void {
    const index = this.waiting.findIndex((s) => s.request.id === id);
    if (index >= 0) {
      this.waiting.splice(index, 1);
      this.send([{ id, text: '', tokens: 0, done: 'cancelled' }]);
      return;
    }
    for (const s of this.prefilling) if (s.request.id === id) s.cancelled = true;
    if (this.chunking?.s.request.id === id) this.chunking.s.cancelled = true;
    for (const bucket of this.buckets) {
      const sequence = bucket.rows.find((s) => s.request.id === id);
      if (sequence !== undefined) sequence.cancelled = true;
    }
  }

  stats(): EngineStats {
    const copies: CopyCounters = { stepFloats: 0, prefillFloats: 0, compactFloats: 0, growFloats: 0, bucketFloats: 0 };
    for (const { cache } of this.buckets) for (const key of Object.keys(copies) as (keyof CopyCounters)[]) copies[key] += cache.copies[key];
    return {
      active: this.active,
      waiting: this.waiting.length,
      reservedBytes: this.reservedBytes,
      allocatedBytes: this.buckets.reduce((sum, b) => sum + b.cache.allocatedBytes, 0),
      copies,
      ...this.counts,
      recentFirstTokens: this.tracer.recent(),
    };
  }

  private fits(bytes: number): boolean {
    return this.active < this.options.maxNumSeqs && this.reservedBytes + bytes <= this.options.kvCacheBytes;
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    // From the next turn: requests that arrive together (one batch of messages) are prefilled together.
    setImmediate(() => void this.loop().finally(() => (this.running = false)));
  }

  private async loop(): Promise<void> {
    for (;;) {
      try {
        // The admitted requests' first tokens go out now, not after the step.
        await this.admit();
        this.flush();
        if (this.active > 0) await this.step();
      } catch (error) {
        this.failAll(error);
      }
      this.flush();
      if (this.active === 0 && !this.canAdmit()) return;
      // Let adds and cancels in: they arrive as messages between steps.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const events = this.pending;
    this.pending = [];
    this.send(events);
  }

  /** Every batch of events leaves through here, so the counters see each message the engine thread posts. */
  private send(events: SequenceEvent[]): void {
    this.counts.eventMessages += 1;
    this.counts.events += events.length;
    this.emit(events);
  }

  private canAdmit(): boolean {
    const next = this.nextWaiting();
    return next !== undefined && this.fits(next.reservedBytes);
  }

  private nextWaiting(): Sequence | undefined {
    return nextToPrefill(this.waiting, this.policy, process.hrtime.bigint());
  }

  /**
   * Prefills the waiting requests that fit, in admission order (stopping at the first that does not),
   * in groups of up to `maxBatchedTokens` padded tokens, one model run per group; returns how many it admitted.
   */
  private async admit(): Promise<number> {
    let admitted = 0;
    for (;;) {
      // A long prompt goes a chunk per round, so the decode steps of the others run between its chunks.
      if (this.chunking !== undefined) {
        await this.prefillChunk(this.chunking);
        if (this.chunking !== undefined) return admitted;
      }
      const taken = this.takeGroup();
      if (taken === undefined) return admitted;
      admitted += taken.count;
      if (taken.group.length > 0) await this.prefill(taken.group);
    }
  }

  /**
   * Takes the next prefill group off the queue, in admission order, reserving each member's cache:
   * members while they fit the budget and `maxNumSeqs`, padded tokens (rows × longest prompt) within
   * `maxBatchedTokens`; a longer prompt at the head of the queue is taken alone, to be prefilled in
   * chunks (`chunking`). Requests of max_tokens 0 end here. undefined when nothing can be admitted.
   */
  private takeGroup(): { group: Sequence[]; count: number } | undefined {
    const group: Sequence[] = [];
    let longest = 0;
    let taken = 0;
    // Decided once per group: whether anything but this group would wait for its run.
    const busy = this.isBusy(this.waiting.length > 1);
    const cap = this.prefillCap(busy);
    const groupCap = prefillGroupCap(cap, this.options.busyPrefillGroupTokens, busy);
    for (;;) {
      const next = this.nextWaiting();
      if (next === undefined || !this.fits(next.reservedBytes)) break;
      const length = next.request.promptIds.length;
      if (group.length > 0 && paddedTokens(group.length + 1, Math.max(longest, length)) > groupCap) break;
      if (group.length > 0 && !joinsGroup(group[0] as Sequence, next, this.policy)) break;
      this.waiting.splice(this.waiting.indexOf(next), 1);
      taken += 1;
      if (next.maxTokens === 0) {
        this.pending.push({ id: next.request.id, text: '', tokens: 0, done: 'length' });
        continue;
      }
      // Counted as running from now, so `fits` sees the group's rows and cache.
      this.reservedBytes += next.reservedBytes;
      this.active += 1;
      if (group.length === 0 && length > cap) {
        this.chunking = { s: next, done: 0, past: [] };
        break;
      }
      group.push(next);
      longest = Math.max(longest, length);
    }
    return taken === 0 ? undefined : { group, count: taken };
  }

  /** One chunk of the long prompt being prefilled; after its last chunk it joins its bucket and its first token goes out. */
  private async prefillChunk(c: Chunking): Promise<void> {
    const { s } = c;
    const events = this.pending;
    const ids = s.request.promptIds;
    if (s.cancelled) {
      this.chunking = undefined;
      this.endCancelled(s, events);
      this.flush();
      return;
    }
    const to = Math.min(ids.length, c.done + this.prefillCap(this.isBusy(this.waiting.length > 0)));
    const feeds = chunkFeeds(ids, c.done, to);
    const empty = new Float32Array(0);
    const { pastNames, presentNames } = (this.buckets[0] as Bucket).cache;
    pastNames.forEach((name, i) => (feeds[name] = { data: c.past[i] ?? empty, dims: [1, this.layout.heads, c.done, this.layout.headDim] }));
    if (c.done === 0) {
      this.tracer.prefillStarting(s.mark);
      this.counts.prefills += 1;
      this.counts.admissionWaitNs += Number(process.hrtime.bigint() - s.arrivedNs);
    }
    this.counts.prefillChunks += 1;
    this.counts.prefillTokens += to - c.done;
    this.counts.prefillPaddedTokens += to - c.done;
    const ran = await this.runPrefill([s], feeds, 'chunk');
    if (ran === undefined) {
      this.chunking = undefined;
      return;
    }
    const { outputs } = ran;
    c.past = presentNames.map((n) => (outputs[n] as { data: Float32Array }).data);
    const chunk = to - c.done;
    c.done = to;
    if (to < ids.length) return;
    this.chunking = undefined;
    this.counts.firstTokenNs += Number(process.hrtime.bigint() - s.arrivedNs);
    this.tracer.firstToken(s.request.id, ids.length, s.maxTokens, s.mark, 1, ids.length);
    if (s.cancelled) this.endCancelled(s, events);
    else this.seat(s, c.past, ids.length, undefined, outputs['logits']!.data, (chunk - 1) * this.vocab, events);
    this.flush();
  }

  /** One model run over a group's prompts; each member's cache joins its bucket and its first token goes out. */
  private async prefill(group: Sequence[]): Promise<void> {
    const events = this.pending;
    const { feeds, longest } = prefillFeeds(group.map((s) => s.request.promptIds));
    const rows = group.length;
    const empty = new Float32Array(0);
    for (const name of (this.buckets[0] as Bucket).cache.pastNames) feeds[name] = { data: empty, dims: [rows, this.layout.heads, 0, this.layout.headDim] };
    const arrived = process.hrtime.bigint();
    for (const s of group) this.counts.admissionWaitNs += Number(arrived - s.arrivedNs);
    this.counts.prefills += rows;
    this.counts.prefillTokens += group.reduce((sum, s) => sum + s.request.promptIds.length, 0);
    this.counts.prefillPaddedTokens += paddedTokens(rows, longest);
    for (const s of group) this.tracer.prefillStarting(s.mark);
    const ran = await this.runPrefill(group, feeds, 'prefill');
    if (ran === undefined) return;
    const { outputs, ended } = ran;
    for (const s of group) {
      this.counts.firstTokenNs += Number(ended - s.arrivedNs);
      this.tracer.firstToken(s.request.id, s.promptLength, s.maxTokens, s.mark, rows, paddedTokens(rows, longest));
    }
    const logits = outputs['logits']!.data;
    group.forEach((s, r) => {
      // Cancelled while its prefill ran: its cache is never copied in.
      if (s.cancelled) return this.endCancelled(s, events);
      const length = s.request.promptIds.length;
      const past = this.buckets[0]!.cache.presentNames.map((n) => presentRow((outputs[n] as { data: Float32Array }).data, r, rows));
      this.seat(s, past, length, longest, logits, (r * longest + length - 1) * this.vocab, events);
    });
    // This group's first tokens go out now, not after the groups behind it.
    this.flush();
  }

  /** Whether other work would wait for the next prefill run: sequences decoding, or `othersWait`. */
  private isBusy(othersWait: boolean): boolean {
    return othersWait || this.buckets.some((b) => b.rows.length > 0);
  }

  /** The padded-token cap of the next prefill run (prefill-cap.ts). */
  private prefillCap(busy: boolean): number {
    return prefillRunCap(this.options.maxBatchedTokens, this.options.busyPrefillTokens, busy);
  }

  /** A prefill run over `rows`; on failure each row ends with the error (sent) and undefined comes back. */
  private async runPrefill(rows: Sequence[], feeds: RunnerTensors, kind: 'prefill' | 'chunk'): Promise<{ outputs: Awaited<ReturnType<DecoderRunner['run']>>; ended: bigint } | undefined> {
    const started = process.hrtime.bigint();
    this.counts.prefillRuns += 1;
    this.prefilling = rows;
    try {
      this.tracer.runStarted(kind);
      const outputs = await this.runner.run(feeds).finally(() => this.tracer.runEnded());
      const ended = process.hrtime.bigint();
      this.counts.prefillNs += Number(ended - started);
      return { outputs, ended };
    } catch (error) {
      for (const s of rows) {
        this.free(s);
        this.pending.push({ id: s.request.id, text: '', tokens: 0, error: TesseraError.internal(`prefill failed: ${message(error)}`) });
      }
      this.flush();
      return undefined;
    } finally {
      this.prefilling = [];
    }
  }

  /** A prefilled sequence takes a row of the bucket for its length; its first token is sampled. */
  private seat(s: Sequence, past: readonly Float32Array[], length: number, stride: number | undefined, logits: Float32Array, offset: number, events: SequenceEvent[]): void {
    const bucket = this.buckets[bucketIndexOf(this.limits, length)] as Bucket;
    const row = bucket.cache.addRow(past, length, stride ?? length);
    bucket.rows[row] = s;
    this.advance(s, logits, offset, events);
    if (s.generated < 0) this.leave(bucket, row);
  }

  private endCancelled(s: Sequence, events: SequenceEvent[]): void {
    this.free(s);
    events.push({ id: s.request.id, text: '', tokens: 0, done: 'cancelled' });
  }

  /**
   * One decode step: length lanes sorted first; a run per non-empty bucket (in order of length), each cut
   * into runs of at most `decodeRunRows` rows; requests that arrived meanwhile are prefilled between runs;
   * then sequences that outgrew their bucket move to the next.
   */
  private async step(): Promise<void> {
    this.sortLanes();
    let ran = false;
    for (const bucket of this.buckets) {
      const rows = bucket.rows.length;
      if (rows === 0) continue;
      ran = true;
      // Room for this step's token in every row (rarely: the buffer doubles).
      bucket.cache.prepareStep(0, 0);
      const runs = subRunRanges(rows, this.options.decodeRunRows ?? 0);
      for (const [from, to] of runs) {
        await this.stepRows(bucket, from, to);
        // A cut step's tokens (runs or lanes) go out run by run, not once the whole step is done.
        if (runs.length > 1 || this.laned) this.flush();
        // A sequence admitted here into a bucket not yet run this step is stepped with it: its prefill gave
        // it its next token, so that is its next step, not a second one. One admitted into this bucket sits
        // past `rows` and waits for the next step.
        if (this.waiting.length > 0 && this.canAdmit()) {
          // What this run ended goes out before what the admission starts.
          this.flush();
          this.counts.prefillsBetweenRuns += await this.admit();
          this.flush();
        }
      }
      // Ended rows leave once the bucket's runs are done (a hole filled from the end would move a row across
      // the runs still to come); from the last row down, so a row moved into a hole has already been seen.
      // A row cancelled meanwhile is ended by its next advance, which sends its event.
      for (let r = bucket.rows.length - 1; r >= 0; r--) if ((bucket.rows[r] as Sequence).generated < 0) this.leave(bucket, r);
    }
    // Only a prompt being chunked was active: no step ran.
    if (!ran) return;
    this.counts.steps += 1;
    this.moveOutgrown();
  }

  /** One model run over rows from..to-1 of a bucket. */
  private async stepRows(bucket: Bucket, from: number, to: number): Promise<void> {
    const { cache } = bucket;
    const events = this.pending;
    const rows = to - from;
    const { feeds, into, presents, presentLength, logits } = this.decodeFeeds.build(cache, from, to, (r) => (bucket.rows[r] as Sequence).nextToken);
    const started = process.hrtime.bigint();
    this.tracer.runStarted('decode');
    await this.runner.run(feeds, into).finally(() => this.tracer.runEnded());
    const ran = process.hrtime.bigint();
    cache.appendStep(presents, from, to, presentLength);
    this.counts.stepCopyNs += Number(process.hrtime.bigint() - ran);
    this.counts.stepModelNs += Number(ran - started);
    this.counts.stepRuns += 1;
    this.counts.stepFetchedBytes += this.decodeFeeds.fetchedBytes(cache, rows);
    this.counts.stepSequences += rows;
    this.counts.stepPaddedPositions += rows * cache.capacity;
    for (let r = from; r < to; r++) this.counts.stepCachedPositions += (cache.lengths[r] as number) - 1;
    for (let r = from; r < to; r++) this.advance(bucket.rows[r] as Sequence, logits, (r - from) * this.vocab, events);
  }

  /** Sequences whose next step would not fit their bucket move to the next one (longest buckets first). */
  private moveOutgrown(): void {
    for (let b = this.buckets.length - 2; b >= 0; b--) {
      const from = this.buckets[b] as Bucket;
      for (let r = from.rows.length - 1; r >= 0; r--) if ((from.cache.lengths[r] as number) >= from.limit) this.moveRow(from, r, this.buckets[b + 1] as Bucket);
    }
  }

  /** With length lanes, rows move until each lane holds its run's share of the step, shortest first (length-lanes.ts). */
  private sortLanes(): void {
    if (!this.laned) return;
    // Each move settles a row; the bound only guards against a plan that would not end.
    for (let moves = 0; moves < 4 * this.options.maxNumSeqs; moves++) {
      const move = nextLaneMove(this.buckets.map((b) => b.cache.lengths), this.options.decodeRunRows ?? 0);
      if (move === undefined) return;
      this.moveRow(this.buckets[move.from] as Bucket, move.row, this.buckets[move.to] as Bucket);
    }
  }

  /** A row's sequence and cache move to another bucket (a copy of its cached positions, counted as a bucket move). */
  private moveRow(from: Bucket, r: number, to: Bucket): void {
    const row = to.cache.addRow(from.cache.rowSources(r), from.cache.lengths[r] as number, from.cache.capacity, 'bucket');
    to.rows[row] = from.rows[r] as Sequence;
    this.removeRow(from, r);
    this.counts.bucketMoves += 1;
  }

  /** Samples the sequence's next token from its logits row and records what that means. */
  private advance(s: Sequence, logits: Float32Array, offset: number, events: SequenceEvent[]): void {
    if (s.cancelled) {
      events.push({ id: s.request.id, text: s.stream.flush(), tokens: 0, done: 'cancelled' });
      s.generated = -1;
      return;
    }
    const eos = this.options.eosId;
    const token = sampleToken(s.request.params, s.random, logits, offset, this.vocab, s.request.params.ignoreEos && eos !== undefined ? eos : -1);
    let done: FinishReason | undefined;
    let text = '';
    if (token === eos) done = 'stop';
    else {
      const { piece, stopped } = s.stream.push(token);
      text = piece;
      s.generated += 1;
      if (stopped) done = 'stop';
      else if (s.generated >= s.maxTokens) done = 'length';
    }
    // Ending other than at a stop string: what the stream still holds goes out with the last event.
    const atStopString = done === 'stop' && token !== eos;
    if (done !== undefined && !atStopString) text += s.stream.flush();
    events.push({ id: s.request.id, text, tokens: token === eos ? 0 : 1, ...(done === undefined ? {} : { done }) });
    if (done !== undefined) s.generated = -1;
    else s.nextToken = token;
  }

  private leave(bucket: Bucket, row: number): void {
    this.free(bucket.rows[row] as Sequence);
    this.removeRow(bucket, row);
  }

  /** A sequence stops counting against the budget and `maxNumSeqs`. */
  private free(s: Sequence): void {
    this.reservedBytes -= s.reservedBytes;
    this.active -= 1;
  }

  /** Takes a row out of a bucket; its last row moves into the hole (rows stay dense). */
  private removeRow(bucket: Bucket, row: number): void {
    const moved = bucket.cache.removeRow(row);
    if (moved >= 0) bucket.rows[row] = bucket.rows[moved] as Sequence;
    bucket.rows.pop();
  }

  private failAll(error: unknown): void {
    const failure = error instanceof TesseraError ? error : TesseraError.internal(`decode step failed: ${message(error)}`);
    if (this.chunking !== undefined) {
      this.free(this.chunking.s);
      this.pending.push({ id: this.chunking.s.request.id, text: '', tokens: 0, error: failure });
      this.chunking = undefined;
    }
    for (const bucket of this.buckets) {
      for (let r = bucket.rows.length - 1; r >= 0; r--) {
        const s = bucket.rows[r] as Sequence;
        if (s.generated >= 0) this.pending.push({ id: s.request.id, text: '', tokens: 0, error: failure });
        this.leave(bucket, r);
      }
    }
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
