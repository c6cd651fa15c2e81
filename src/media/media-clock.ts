// A 20 ms clock shared by many listeners (every live session's output pacer, every RTP endpoint), so
// pacing costs one timer per process, not one per session, call or frame. It corrects its own drift
// against performance.now(), catches up the ticks of a short event-loop stall, and stops when nobody
// listens.
import { FRAME_MS } from './constants.js';

/** A timer this late (ms) means the loop was busy: the tick waits for the loop's pending I/O. */
const DEFER_LATE_MS = 2;

/** A run of the clock that starts this long (ms, a frame) after its first sub-tick's time is late (`lateRuns`). */
export const LATE_RUN_MS = 20;

/** `subTick`: which of the clock's sub-ticks of the frame is running (0 on a clock without sub-ticks). */
export type TickListener = (tick: number, subTick?: number) => void;

/**
 * The sub-tick of the 20 ms frame a listener runs in (0 to subTicks - 1), owned and moved by the
 * listener: a leg plays out just after its packets arrive, a pacer releases and a leg sends in the
 * sub-tick its frames came in. A moved listener still runs about once per frame: the interval of the
 * move is 10 to 25 ms, never two runs 5 ms apart nor a frame skipped (see MediaClock.runPhased).
 */
export interface TickPhase {
  readonly phase: number;
}

/**
 * The phase of a listener fed by another's frames (a pacer's lane by a leg's playout, a leg's sending
 * by a lane): it follows its source's phase as that moves, so the chain moves in one sub-tick and no
 * link runs once in between with nothing to take. Without a source, the frame's first (0).
 */
export class FollowingPhase implements TickPhase {
  private source: TickPhase | null = null;

  get phase(): number {
    return this.source === null ? 0 : this.source.phase;
  }

  /** Follows `source` from now on; ignored where it would follow itself, through others or not. */
  follow(source: TickPhase): void {
    if (source === this.source) return;
    for (let at: TickPhase | null = source; at instanceof FollowingPhase; at = at.source) if (at === this) return;
    this.source = source;
  }
}
/** What happens to an error thrown by a tick listener (the owner logs it; the clock carries on). */
export type TickErrorHook = (err: unknown, tick: number) => void;

/** What a pacer needs from a clock (tests drive a manual one). */
export interface TickSource {
  /**
   * `phase`: the sub-tick this listener runs in, read at every sub-tick (the listener may move it);
   * without one, the first of the frame. A source without sub-ticks ignores it.
   */
  subscribe(fn: TickListener, phase?: TickPhase): () => void;
  /**
   * Calls `fn` on every tick after every `subscribe` listener has run for that tick: senders use it
   * so a frame released by a pacer in a tick leaves in the same tick, not one tick (20 ms) later.
   * Optional: a source without it gets its late work done in the ordinary phase.
   */
  subscribeLate?(fn: TickListener, phase?: TickPhase): () => void;
  /**
   * Calls `fn` on every tick before any `subscribe` listener: input read once per tick (batched RTP
   * sockets, MEDIA_IO=native) is in the jitter buffers before they play out. Optional like the late phase.
   * Early listeners run in every sub-tick.
   */
  subscribeEarly?(fn: TickListener): () => void;
  /**
   * Calls `fn` on every tick after the `subscribe` listeners (the legs' playout) and before the late ones
   * (the senders): output pacers release there, so a frame a leg played out leaves in the same tick
   * whatever order the leg and the pacer subscribed in. Optional: a source without it uses `subscribe`.
   */
  subscribePace?(fn: TickListener, phase?: TickPhase): () => void;
  /**
   * True while the clock runs its listeners. Work they queue can go in a microtask after the tick;
   * work queued outside one (by a SIP request, say) can wait for the end of the loop turn and
   * go with the rest of that turn's. Optional: a source without it is taken as always ticking.
   */
  readonly ticking?: boolean;
  /** Sub-ticks per frame (1 or absent: none; the process clock's MEDIA_SUBTICKS). */
  readonly subTicks?: number;
  /** The first sub-tick whose time is at or after `performanceMs` (its phase in the frame). */
  phaseAt?(performanceMs: number): number;
  /** The time of that sub-tick. */
  subTickAt?(performanceMs: number): number;
  /** The phase of the phased listener running now (null: none, or an unphased one). */
  readonly runningPhase?: TickPhase | null;
}

interface Subscription {
  fn: TickListener;
  phase: TickPhase | null;
  /** The sub-tick (counted since start) it last ran in. */
  lastRun: number;
}

export class MediaClock implements TickSource {
  private readonly earlyListeners = new Set<Subscription>();
  private readonly listeners = new Set<Subscription>();
  private readonly paceListeners = new Set<Subscription>();
  private readonly lateListeners = new Set<Subscription>();
  private timer: NodeJS.Timeout | null = null;
  /** Inside run(): a listener that subscribes then must not restart the timer (it would reset the tick grid). */
  private running = false;
  /** A late tick is waiting for setImmediate (see run): counts as a running timer. */
  private deferred: NodeJS.Immediate | null = null;
  /** Time of the next sub-tick, and the count of sub-ticks run (the one running while `running`). */
  private nextAt = 0;
  private subNo = -1;
  private subTicksPerFrame = 1;
  private subMs: number;
  /**
   * A phased listener runs at least minGap sub-ticks after its last run (half a frame, rounded up) and,
   * when it can, at most maxGap (a frame and a sub-tick).
   */
  private minGap = 1;
  private maxGap = 1;
  private runningSub: Subscription | null = null;
  /** Stalls longer than the catch-up allowance (their ticks were skipped); a health figure. */
  lateTicks = 0;
  /** Errors thrown by listeners so far (each also went to the hook). */
  listenerErrors = 0;
  /**
   * Runs of the clock so far (each fires the sub-ticks due, caught up or skipped after a stall), and those
   * that started more than LATE_RUN_MS after their first sub-tick's time: the media path's own measure of
   * whether its loop keeps time (media/overload-guard.ts turns away new calls while it does not). A lone
   * stall is one late run however long it was; a loop that cannot keep up makes most runs late.
   */
  runs = 0;
  lateRuns = 0;
  private errorHook: TickErrorHook = () => {};

  /**
   * @param maxCatchUpTicks ticks fired back to back after a stall (default 25 = 500 ms), so a short
   *   stall delays output once instead of adding to every queue's latency for good; a longer one is skipped.
   * @param subTicks sub-ticks per frame (1: none): see setSubTicks.
   */
  constructor(
    readonly periodMs: number = FRAME_MS,
    private readonly maxCatchUpTicks = 25,
    subTicks = 1,
  ) {
    this.subMs = periodMs;
    this.setSubTicks(subTicks);
  }

  /**
   * Splits each frame into `n` sub-ticks (1, 2 or 4; MEDIA_SUBTICKS): early listeners (the socket
   * reads) run in every one, the others in the sub-tick their TickPhase names, once per frame, so a
   * leg's frame plays out a sub-tick after its packets arrive instead of waiting for the one instant
   * per frame every leg shares. Only while nobody listens (the grid would change under them).
   */
  setSubTicks(n: number): this {
    if (![1, 2, 4].includes(n)) throw new Error(`sub-ticks per frame: 1, 2 or 4, not ${n}`);
    if (this.listenerCount > 0) throw new Error('sub-ticks change only while the clock has no listeners');
    this.subTicksPerFrame = n;
    this.subMs = this.periodMs / n;
    this.minGap = Math.ceil(n / 2);
    this.maxGap = n + 1;
    // The next sub-tick starts a frame.
    this.subNo = Math.ceil((this.subNo + 1) / n) * n - 1;
    return this;
  }

  get subTicks(): number {
    return this.subTicksPerFrame;
  }

  get runningPhase(): TickPhase | null {
    return this.runningSub?.phase ?? null;
  }

  subTickAt(performanceMs: number): number {
    return this.nextAt + this.subTicksAfterNext(performanceMs) * this.subMs;
  }

  phaseAt(performanceMs: number): number {
    const n = this.subTicksPerFrame;
    return (((this.subNo + 1 + this.subTicksAfterNext(performanceMs)) % n) + n) % n;
  }

  /**
   * How many sub-ticks after the next one (subNo + 1, at nextAt, inside a tick or not; while stopped, the
   * one a start begins with) the first at or after `performanceMs` comes.
   */
  private subTicksAfterNext(performanceMs: number): number {
    return Math.ceil((performanceMs - this.nextAt) / this.subMs);
  }

  get ticking(): boolean {
    return this.running;
  }

  /** Ticks fired so far (monotonic across stops and starts); within a frame's sub-ticks, that frame's. */
  get tick(): number {
    return Math.floor(this.subNo / this.subTicksPerFrame) + 1;
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
  subscribe(fn: TickListener, phase?: TickPhase): () => void {
    return this.add(this.listeners, fn, phase);
  }

  subscribeLate(fn: TickListener, phase?: TickPhase): () => void {
    return this.add(this.lateListeners, fn, phase);
  }

  subscribeEarly(fn: TickListener): () => void {
    return this.add(this.earlyListeners, fn);
  }

  subscribePace(fn: TickListener, phase?: TickPhase): () => void {
    return this.add(this.paceListeners, fn, phase);
  }

  private add(set: Set<Subscription>, fn: TickListener, phase?: TickPhase): () => void {
    const sub: Subscription = { fn, phase: phase ?? null, lastRun: -Infinity };
    set.add(sub);
    if (!this.timer && !this.running && !this.deferred) {
      this.nextAt = performance.now() + this.subMs;
      this.schedule();
    }
    return () => {
      set.delete(sub);
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
    const n = this.subTicksPerFrame;
    this.runs++;
    if (now - this.nextAt > LATE_RUN_MS) this.lateRuns++;
    let fired = 0;
    while (now >= this.nextAt && fired < this.maxCatchUpTicks * n) {
      this.subNo++;
      fired++;
      this.nextAt += this.subMs;
      const tick = this.tick;
      const sub = this.subNo % n;
      for (const s of this.earlyListeners) this.call(s.fn, tick, sub);
      this.runPhased(this.listeners, tick, sub);
      this.runPhased(this.paceListeners, tick, sub);
      this.runPhased(this.lateListeners, tick, sub);
    }
    if (now >= this.nextAt) {
      // Stalled too long: skip the rest rather than burst. The tick count still advances with real
      // time, so media timestamps keep matching the wall clock (the skip shows as a gap, like RTP).
      const skipped = Math.floor((now - this.nextAt) / this.subMs) + 1;
      this.lateTicks++;
      this.subNo += skipped;
      this.nextAt += skipped * this.subMs;
    }
    this.running = false;
    if (this.listenerCount > 0) this.schedule();
  };

  /**
   * Each listener in its phase's sub-tick (unphased ones in the frame's first), never twice within half
   * a frame, and never more than a sub-tick past a frame since its last run: moved a sub-tick later, it
   * runs there (a 25 ms interval); moved earlier, past its new sub-tick in this frame, it runs at once
   * rather than wait for the next frame's, then there (20 then 10 or 15 ms): about once per frame, give or
   * take the move, never a frame skipped.
   */
  private runPhased(set: Set<Subscription>, tick: number, sub: number): void {
    const n = this.subTicksPerFrame;
    for (const s of set) {
      const gap = this.subNo - s.lastRun;
      if (gap < this.minGap) continue;
      // Sub-ticks to its phase's next one; running only there would leave a gap past a frame and a sub-tick.
      const until = ((s.phase === null ? 0 : s.phase.phase) - sub + n) % n;
      // (A new listener runs at once: a pacer's lane woken by a leg's frame releases it in that leg's sub-tick.)
      if (until !== 0 && gap + until <= this.maxGap) continue;
      s.lastRun = this.subNo;
      this.runningSub = s;
      this.call(s.fn, tick, sub);
    }
    this.runningSub = null;
  }

  private call(fn: TickListener, tick: number, sub: number): void {
    try {
      fn(tick, sub);
    } catch (err) {
      // One session's fault must not stop the others' audio: count it, hand it on, carry on.
      this.listenerErrors++;
      try {
        this.errorHook(err, tick);
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
 * Its sub-ticks (MEDIA_SUBTICKS) are set at start-up, before anything listens.
 */
export const processMediaClock = new MediaClock(FRAME_MS, 10);

/** Sub-ticks per frame a gateway runs its clock with unless configured (MEDIA_SUBTICKS). */
export const DEFAULT_MEDIA_SUBTICKS = 4;
