// Finds event-loop stalls in a benchmark's gateway process and says what ran then: a 10 ms ticker
// notes every tick that came late by more than `stallMs` (with its time since the process
// started) and how much CPU the process used meanwhile, and every garbage collection is noted with its kind, duration and start time, so a
// stall can be matched to a collection (or ruled one out). Costs one timer; no sampling profiler.
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

export interface Stall {
  /** When the late tick ran, ms since the process started (performance.now()). */
  atMs: number;
  /** How late it ran: the loop was blocked for about this long. */
  lateMs: number;
  /**
   * Process CPU time over `overMs` (the stall and up to CPU_READ_MS before it): about `lateMs` when the
   * process itself was busy (our code or GC), far less when the machine did not run it (other load).
   */
  cpuMs: number;
  /** The interval `cpuMs` was taken over. */
  overMs: number;
  /** The late tick's monotonic time in µs (process.hrtime), the clock of a --cpu-prof profile. */
  hrUs: number;
}

export interface GcPause {
  atMs: number;
  ms: number;
  kind: string;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major (mark-compact)',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor (scavenge)',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** How often the probe reads the process's CPU time when nothing stalls. */
const CPU_READ_MS = 50;

/** The benches' stall threshold: BENCH_STALL_MS, default 50 ms. */
export const benchStallMs = (): number => Number(process.env.BENCH_STALL_MS ?? 50);

export class LoopProbe {
  readonly stalls: Stall[] = [];
  readonly gcs: GcPause[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly observer: PerformanceObserver;
  private last = performance.now();
  private lastCpu = process.cpuUsage();
  private lastCpuAt = performance.now();

  constructor(
    private readonly stallMs = 50,
    gcMinMs = 5,
  ) {
    this.timer = setInterval(() => {
      const now = performance.now();
      const late = now - this.last - 10;
      this.last = now;
      // process.cpuUsage is a getrusage(2) each: at every tick it cost the gateway about 1 % of a core
      // on a slow VM (88 µs a call). Read it on a stall and at most every CPU_READ_MS otherwise.
      if (late <= this.stallMs && now - this.lastCpuAt < CPU_READ_MS) return;
      const cpu = process.cpuUsage();
      if (late > this.stallMs) {
        const cpuMs = (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000;
        const overMs = now - this.lastCpuAt;
        this.stalls.push({
          atMs: Math.round(now),
          lateMs: Math.round(late),
          cpuMs: Math.round(cpuMs),
          overMs: Math.round(overMs),
          hrUs: Number(process.hrtime.bigint() / 1000n),
        });
      }
      this.lastCpu = cpu;
      this.lastCpuAt = now;
    }, 10);
    this.timer.unref();
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1;
        if (e.duration >= gcMinMs) this.gcs.push({ atMs: Math.round(e.startTime), ms: Math.round(e.duration), kind: GC_KINDS[kind] ?? `kind ${kind}` });
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Stalls and collections so far, and forgets them. */
  take(): { stalls: Stall[]; gcs: GcPause[]; nowMs: number } {
    return { stalls: this.stalls.splice(0), gcs: this.gcs.splice(0), nowMs: Math.round(performance.now()) };
  }

  stop(): void {
    clearInterval(this.timer);
    this.observer.disconnect();
  }
}
