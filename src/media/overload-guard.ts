// Admission by the media path's own timekeeping: while too many of the media clock's runs start a frame
// late, the loop cannot carry more calls well, and a new one would make every live call worse (frames
// concealed, queues deeper). The SIP front then answers 503 + Retry-After (the edge's dispatcher tries
// another node) and dials fail with media_server_unavailable, until the clock has kept time for a while.
// Runs, not sub-ticks: a lone stall is one late run however many sub-ticks it held up, so only a loop
// that keeps falling behind trips the guard. rtpengine's --max-load and FreeSWITCH's min-idle-cpu play
// the same part; the clock's lateness is what the calls feel, whether the process itself is busy or the
// host's other work takes its CPU. New streaming-socket sessions are closed 1013 (src/stream/README.md).
// The clock keeps time until the loop is nearly full, so the guard can also watch the loop's headroom
// (its utilization, as @fastify/under-pressure's maxEventLoopUtilization does): a loop busy most of every
// frame delays each socket frame and packet read by a few ms, and its next burst makes every call late.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from 'pino';

/** What the guard reads: the clock's running totals (MediaClock.runs, lateRuns) and whether it ticks now. */
export interface ClockRunCounts {
  readonly runs: number;
  readonly lateRuns: number;
  /** 0: the clock is stopped (no live media), so a window without runs was idle, not starved. */
  readonly listenerCount: number;
}

/** The guard as the node's heartbeat and console show it. */
export interface MediaOverloadView {
  /** False with MEDIA_OVERLOAD_LATE_PERCENT and MEDIA_OVERLOAD_LOOP_PERCENT both 0. */
  enabled: boolean;
  /** True while new calls get 503. */
  overloaded: boolean;
  /** Share (%) of the media clock's runs that started a frame late in the guard's last second. */
  late_percent: number;
  /** Share (%) of the guard's last second the event loop was busy (its utilization). */
  loop_busy_percent: number;
  /** Times it turned overloaded since start. */
  overloads: number;
}

export interface OverloadGuardOptions {
  /** Overloaded when more than this share (%) of a window's runs were late; 0: not watched. */
  latePercent: number;
  /** Overloaded when the event loop was busy more than this share (%) of a window; 0 or absent: not watched. */
  loopBusyPercent?: number;
  /** The loop's busy share (0–1) since the last call; default: the process's event-loop utilization. */
  loopBusy?: () => number;
  /** The window the share is taken over (ms). */
  windowMs?: number;
  /** Windows in a row at or under the share before new calls are taken again. */
  clearWindows?: number;
  /** Told when the state turns (the owner logs it): overloaded or clear again, with the window's late and busy shares. */
  onChange?: (overloaded: boolean, latePercent: number, loopBusyPercent: number) => void;
}

/** The event loop's utilization (0–1) since the previous call of the reader it returns. */
export function eventLoopBusyReader(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return busy;
  };
}

const DEFAULT_WINDOW_MS = 1000;
const DEFAULT_CLEAR_WINDOWS = 3;
/**
 * A window with fewer runs than this is either idle (the clock stopped: no live media) or starved (the
 * loop so busy that each run spends its time catching up a stall: a clock with listeners runs 50–200
 * times a second). Idle clears the guard; starved is as late as the runs it had, and no runs at all
 * while the clock has listeners is a window entirely late.
 */
const MIN_RUNS = 10;

export class OverloadGuard {
  private timer: NodeJS.Timeout | null = null;
  private lastRuns: number;
  private lastLate: number;
  private cleanWindows = 0;
  private isOverloaded = false;
  /** The late share (%) of the last window that said something; a health figure. */
  lastLatePercent = 0;
  /** The loop's busy share (%) of the last window. */
  lastLoopBusyPercent = 0;
  private overloads = 0;
  private readonly loopBusy: () => number;
  /** The loop's limit (%), 0 when not watched. */
  private readonly loopLimit: number;

  constructor(
    private readonly counts: ClockRunCounts,
    private readonly o: OverloadGuardOptions,
  ) {
    this.lastRuns = counts.runs;
    this.lastLate = counts.lateRuns;
    this.loopBusy = o.loopBusy ?? eventLoopBusyReader();
    this.loopLimit = o.loopBusyPercent ?? 0;
  }

  get enabled(): boolean {
    return this.o.latePercent > 0 || this.loopLimit > 0;
  }

  /** True while new calls should be turned away. */
  get overloaded(): boolean {
    return this.isOverloaded;
  }

  view(): MediaOverloadView {
    return {
      enabled: this.enabled,
      overloaded: this.isOverloaded,
      late_percent: Math.round(this.lastLatePercent * 100) / 100,
      loop_busy_percent: Math.round(this.lastLoopBusyPercent * 10) / 10,
      overloads: this.overloads,
    };
  }

  /** Samples the clock every window (an unref'd timer) until stop(); a guard turned off never samples. */
  start(): this {
    if (this.enabled && !this.timer) {
      this.timer = setInterval(() => this.sample(), this.o.windowMs ?? DEFAULT_WINDOW_MS);
      this.timer.unref();
    }
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Closes one window: the share of its runs that were late and of its time the loop was busy decide the state (start() calls it). */
  sample(): void {
    const runs = this.counts.runs - this.lastRuns;
    const late = this.counts.lateRuns - this.lastLate;
    this.lastRuns = this.counts.runs;
    this.lastLate = this.counts.lateRuns;
    this.lastLoopBusyPercent = 100 * this.loopBusy();
    if (!this.enabled) return;
    if (runs < MIN_RUNS && this.counts.listenerCount === 0) {
      // Nothing ticked (no live media): nothing is late, and the next call starts on a quiet clock. A
      // loop busy without media (starting up, say) is not the calls' load: it clears the guard too.
      this.lastLatePercent = 0;
      this.turn(false);
      return;
    }
    this.lastLatePercent = runs > 0 ? (100 * late) / runs : 100;
    const over = (limit: number, share: number): boolean => limit > 0 && share > limit;
    if (over(this.o.latePercent, this.lastLatePercent) || over(this.loopLimit, this.lastLoopBusyPercent)) {
      this.cleanWindows = 0;
      this.turn(true);
      return;
    }
    this.cleanWindows++;
    if (this.cleanWindows >= (this.o.clearWindows ?? DEFAULT_CLEAR_WINDOWS)) this.turn(false);
  }

  private turn(overloaded: boolean): void {
    if (overloaded === this.isOverloaded) return;
    this.isOverloaded = overloaded;
    if (overloaded) this.overloads++;
    this.o.onChange?.(overloaded, this.lastLatePercent, this.lastLoopBusyPercent);
  }
}

/** The limits MEDIA_OVERLOAD_LATE_PERCENT and MEDIA_OVERLOAD_LOOP_PERCENT set (0: that one not watched). */
export interface OverloadLimits {
  latePercent: number;
  loopBusyPercent: number;
}

/** The limits as configured (sip.overloadLatePercent and sip.overloadLoopPercent; absent: not watched). */
export function overloadLimits(sip: { overloadLatePercent?: number; overloadLoopPercent?: number }): OverloadLimits {
  return { latePercent: sip.overloadLatePercent ?? 0, loopBusyPercent: sip.overloadLoopPercent ?? 0 };
}

/**
 * The node's one guard over the process's media clock and event loop, logging its turns. It admits both
 * the SIP front's calls and the streaming socket's sessions: they share the clock and the loop, so either
 * kind of new work would make every live one worse. `load` adds the figures an operator wants in the log line.
 */
export function startNodeOverloadGuard(
  clock: ClockRunCounts,
  limits: OverloadLimits,
  log: Pick<Logger, 'info' | 'warn'>,
  load: () => Record<string, number> = () => ({}),
): OverloadGuard {
  return new OverloadGuard(clock, {
    ...limits,
    onChange: (overloaded, late, busy) => {
      const figures = { latePercent: Math.round(late * 10) / 10, loopBusyPercent: Math.round(busy * 10) / 10, ...load() };
      if (overloaded)
        log.warn(figures, 'media path overloaded: new calls get 503 and new streams 1013 until the media clock keeps time and the event loop has room again');
      else log.info(figures, 'media path keeps time again: taking new calls and streams');
    },
  }).start();
}
