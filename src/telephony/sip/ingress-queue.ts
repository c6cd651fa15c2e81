// SIP requests and responses read from UDP are handled a few milliseconds per event-loop turn, so the
// 20 ms media clock runs between them. A burst of datagrams (a mass hang-up's BYEs, a flood) arrives
// 32 to a read, and each costs 0.2–1 ms to parse and handle: handled as read, one read held every
// live call's next frame back by up to 24 ms, and the survivors of a mass hang-up (100 of 200 calls)
// had a p99 of 46–125 ms against 25–47 ms in turn. Signalling can wait that long (UDP retransmits
// after 500 ms); audio cannot.
// Media servers keep signalling and media apart the same way (rtpengine's and FreeSWITCH's media
// threads). A full queue drops what comes next, as the kernel's receive buffer does when full.

/** The settings (sip.udpIngressBudgetMs, sip.udpIngressQueueMax). */
export interface IngressLimits {
  /** Time (ms) handled per turn before the loop is given back; 0: every datagram at once, as read. */
  budgetMs: number;
  /** Datagrams waiting at most; more are dropped (their senders retransmit). */
  maxQueued: number;
}

export interface IngressQueueOptions extends IngressLimits {
  /** A handler that threw (the stack reports its own errors; this is for what escapes it). */
  onError: (err: unknown) => void;
}

export class IngressQueue {
  private queue: (() => void)[] = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly o: IngressQueueOptions) {}

  get depth(): number {
    return this.queue.length - this.head;
  }

  /** Runs `work` now (no budget) or in turn; false when the queue is full and `work` was dropped. */
  push(work: () => void): boolean {
    if (this.o.budgetMs <= 0) {
      work();
      return true;
    }
    if (this.depth >= this.o.maxQueued) return false;
    this.queue.push(work);
    this.schedule();
    return true;
  }

  /** Forgets what waits (the transport closed: nothing of it could be answered). */
  clear(): void {
    this.queue = [];
    this.head = 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.drain);
  }

  /** At least one item per turn, then more while the budget lasts; the rest waits for the next turn. */
  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.depth === 0) return;
    const started = performance.now();
    do {
      const work = this.queue[this.head];
      this.queue[this.head++] = noop; // let the handled datagram go
      // One datagram's failure must not stop the ones behind it.
      try {
        work?.();
      } catch (err) {
        this.o.onError(err);
      }
    } while (this.head < this.queue.length && performance.now() - started < this.o.budgetMs);
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else {
      if (this.head > 1024) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.schedule();
    }
  };
}

const noop = (): void => undefined;
