/**
 * A token bucket for frames a peer can send cheaply and make us work or write for (RST_STREAM after
 * HEADERS: rapid reset; PING and SETTINGS: each asks for an ACK). `take()` answers false once the peer
 * has spent the burst faster than the refill: the connection then ends with ENHANCE_YOUR_CALM.
 */
export class RateBudget {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
