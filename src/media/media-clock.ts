// A 20 ms clock shared by many listeners (every live session's output pacer, every RTP endpoint), so
// pacing costs one timer per process, not one per session, call or frame. It corrects its own drift
// against performance.now(), catches up the ticks of a short event-loop stall, and stops when nobody
// listens.
import { FRAME_MS } from './constants.js';

/** A timer this late (ms) means the loop was busy: the tick waits for the loop's pending I/O. */
const DEFER_LATE_MS = 2;

export type TickListener = (tick: number) => void;
/** What happens to an error thrown by a tick listener (the owner logs it; the clock carries on). */
export type TickErrorHook = (err: unknown, tick: number) => void;

/** What a pacer needs from a clock (tests drive a manual one). */
export interface TickSource {
  subscribe(fn: TickListener): () => void;
  /**
   * Calls `fn` on every tick after every `subscribe` listener has run for that tick: senders use it
   * so a frame released by a pacer in a tick leaves in the same tick, not one tick (20 ms) later.
   * Optional: a source without it gets its late work done in the ordinary phase.
   */
  subscribeLate?(fn: TickListener): () => void;
  /**
   * Calls `fn` on every tick before any `subscribe` listener: input read once per tick (batched RTP
   * sockets, MEDIA_IO=native) is in the jitter buffers before they play out. Optional like the late phase.
   */
  subscribeEarly?(fn: TickListener): () => void;
  /**
   * Calls `fn` on every tick after the `subscribe` listeners (the legs' playout) and before the late ones
   * (the senders): output pacers release there, so a frame a leg played out leaves in the same tick
   * whatever order the leg and the pacer subscribed in. Optional: a source without it uses `subscribe`.
   */
  subscribePace?(fn: TickListener): () => void;
  /**
   * True while the clock runs its listeners. Work they queue can go in a microtask after the tick;
   * work queued outside one (by a SIP request, say) can wait for the end of the loop turn and
   * go with the rest of that turn's. Optional: a source without it is taken as always ticking.
   */
  readonly ticking?: boolean;
}

export class MediaClock implements TickSource {
  private readonly earlyListeners = new Set<TickListener>();
  private readonly listeners = new Set<TickListener>();
  private readonly paceListeners = new Set<TickListener>();
  private readonly lateListeners = new Set<TickListener>();
  private timer: NodeJS.Timeout | null = null;
  /** Inside run(): a listener that subscribes then must not restart the timer (it would reset the tick grid). */
  private running = false;
  /** A late tick is waiting for setImmediate (see run): counts as a running timer. */
  private deferred: NodeJS.Immediate | null = null;
  private nextAt = 0;
  private tickNo = 0;
  /** Stalls longer than the catch-up allowance (their ticks were skipped); a health figure. */
  lateTicks = 0;
  /** Errors thrown by listeners so far (each also went to the hook). */
  listenerErrors = 0;
  private errorHook: TickErrorHook = () => {};

  /**
   * @param maxCatchUpTicks ticks fired back to back after a stall (default 25 = 500 ms), so a short
   *   stall delays output once instead of adding to every queue's latency for good; a longer one is skipped.
   */
  constructor(
    readonly periodMs: number = FRAME_MS,
    private readonly maxCatchUpTicks = 25,
  ) {}

  get ticking(): boolean {
    return this.running;
  }

  /** Ticks fired so far (monotonic across stops and starts). */
  get tick(): number {
    return this.tickNo;
  }

  get listenerCount(): number {
    return this.earlyListeners.size + this.listeners.size + this.paceListeners.size + this.lateListeners.size;
  }

  /** Routes listener errors somewhere visible (the composition root passes a logger's). */
  onListenerError(hook: TickErrorHook): this {
    this.errorHook = hook;
    return this;
  }

  /** Calls `fn` on every tick until the returned function is called. */
  subscribe(fn: TickListener): () => void {
    return this.add(this.listeners, fn);
  }

  subscribeLate(fn: TickListener): () => void {
    return this.add(this.lateListeners, fn);
  }

  subscribeEarly(fn: TickListener): () => void {
    return this.add(this.earlyListeners, fn);
  }

  subscribePace(fn: TickListener): () => void {
    return this.add(this.paceListeners, fn);
  }

  private add(set: Set<TickListener>, fn: TickListener): () => void {
    set.add(fn);
    if (!this.timer && !this.running && !this.deferred) {
      this.nextAt = performance.now() + this.periodMs;
      this.schedule();
    }
    return () => {
      set.delete(fn);
    };
  }

  private schedule(): void {
    const delay = Math.max(0, this.nextAt - performance.now());
    this.timer = setTimeout(this.onTimer, delay);
    this.timer.unref();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    // Fired late: the loop was busy, and the packets that arrived meanwhile are still unread (timers
    // run before the loop's I/O). Ticking now would play out and conceal the frames sitting in the
    // sockets (an underrun, then a jitter buffer grown by our own stall). setImmediate runs after the
    // I/O of this loop iteration, so the ticks see those packets.
    if (performance.now() - this.nextAt > DEFER_LATE_MS) {
      this.deferred = setImmediate(this.runDeferred);
      return;
    }
    this.run();
  };

  private readonly runDeferred = (): void => {
    this.deferred = null;
    this.deferredRuns++;
    this.run();
  };

  /** Ticks run after the loop's I/O because the timer fired late (a health figure, with lateTicks). */
  deferredRuns = 0;

  private readonly run = (): void => {
    this.running = true;
    const now = performance.now();
    let fired = 0;
    while (now >= this.nextAt && fired < this.maxCatchUpTicks) {
      this.tickNo++;
      fired++;
      this.nextAt += this.periodMs;
      for (const fn of this.earlyListeners) this.call(fn);
      for (const fn of this.listeners) this.call(fn);
      for (const fn of this.paceListeners) this.call(fn);
      for (const fn of this.lateListeners) this.call(fn);
    }
    if (now >= this.nextAt) {
      // Stalled too long: skip the rest rather than burst. The tick count still advances with real
      // time, so media timestamps keep matching the wall clock (the skip shows as a gap, like RTP).
      const skipped = Math.floor((now - this.nextAt) / this.periodMs) + 1;
      this.lateTicks++;
      this.tickNo += skipped;
      this.nextAt += skipped * this.periodMs;
    }
    this.running = false;
    if (this.listenerCount > 0) this.schedule();
  };

  private call(fn: TickListener): void {
    try {
      fn(this.tickNo);
    } catch (err) {
      // One session's fault must not stop the others' audio: count it, hand it on, carry on.
      this.listenerErrors++;
      try {
        this.errorHook(err, this.tickNo);
      } catch {
        // a failing hook must not stop the clock either
      }
    }
  }

  /** Stops the timer (tests, shutdown). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.deferred) clearImmediate(this.deferred);
    this.deferred = null;
    this.earlyListeners.clear();
    this.listeners.clear();
    this.paceListeners.clear();
    this.lateListeners.clear();
  }
}

/**
 * The one 20 ms clock of this process: RTP endpoints (jitter-buffer playout, sending) and session
 * pacers tick on it together. Within a tick the sockets are read, the endpoints play out, the pacers
 * release and the endpoints send, in that order (four phases), so a bridged frame leaves in the tick
 * it was played out instead of waiting for the phase of a second clock. Catch-up is
 * 10 ticks (200 ms): a longer stall is skipped rather than replayed as a burst into every queue.
 */
export const processMediaClock = new MediaClock(FRAME_MS, 10);
