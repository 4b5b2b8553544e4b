/**
 * Single-flight: identical concurrent work (same key) runs once; everyone who asks while it runs
 * gets the same outcome, value or error.
 *
 * Cancellation is per waiter, not per flight. The work gets the flight's own AbortSignal, which
 * aborts only when the LAST waiter leaves. A waiter whose signal aborts leaves at once (its promise
 * rejects with CANCELLED) and the others keep waiting, so a cancelled leader never cancels its
 * followers' work. A flight whose waiters all left is removed from the map right away, so later
 * arrivals start fresh work instead of joining an aborted one.
 */
import type { CancelSignal } from '../http/cancellation.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';

export interface FlightTicket<T> {
  /** True for the caller that started the work. */
  readonly leader: boolean;
  readonly result: Promise<T>;
}

interface Flight<T> {
  readonly controller: AbortController;
  readonly promise: Promise<T>;
  waiters: number;
  settled: boolean;
}

export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** Flights running now (for tests and diagnostics). */
  get size(): number {
    return this.flights.size;
  }

  /** Joins the flight for `key`, or starts one with `work`. */
  join(key: string, work: (signal: AbortSignal) => Promise<T>, signal?: CancelSignal): FlightTicket<T> {
    if (signal?.aborted) return { leader: false, result: Promise.reject(cancelledBy(signal)) };
    const existing = this.flights.get(key);
    const flight = existing ?? this.start(key, work);
    return { leader: existing === undefined, result: this.wait(key, flight, signal) };
  }

  private start(key: string, work: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const controller = new AbortController();
    // new Promise(...) turns a synchronous throw of `work` into a rejection, like an async throw.
    const promise = new Promise<T>((resolve) => resolve(work(controller.signal)));
    const flight: Flight<T> = { controller, promise, waiters: 0, settled: false };
    const settle = (): void => {
      flight.settled = true;
      if (this.flights.get(key) === flight) this.flights.delete(key);
    };
    // Attached before any waiter's handlers, so the map is clean when waiters resume; it also keeps an
    // abandoned flight's rejection from being reported as unhandled.
    promise.then(settle, settle);
    this.flights.set(key, flight);
    return flight;
  }

  private wait(key: string, flight: Flight<T>, signal: CancelSignal | undefined): Promise<T> {
    flight.waiters += 1;
    if (signal === undefined) return flight.promise;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        this.leave(key, flight);
        reject(cancelledBy(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  private leave(key: string, flight: Flight<T>): void {
    flight.waiters -= 1;
    if (flight.waiters > 0 || flight.settled) return;
    if (this.flights.get(key) === flight) this.flights.delete(key);
    flight.controller.abort(TesseraError.cancelled('every request waiting for this result was cancelled'));
  }
}

/** The abort reason when it is already a TesseraError (e.g. a deadline), else CANCELLED. */
export function cancelledBy(signal: CancelSignal): TesseraError {
  const reason: unknown = signal.reason;
  return reason instanceof TesseraError ? reason : TesseraError.cancelled('the request was cancelled');
}
