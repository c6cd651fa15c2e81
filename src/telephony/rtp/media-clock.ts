// One 20 ms clock shared by every RTP endpoint of the process: a timer per call would cost a
// timer wake-up per call per tick; one drift-corrected loop serves a thousand calls.

export type TickListener = (tick: number) => void;

/** Any 20 ms tick source (sessions/ has the process-wide one the pipeline's pacers use). */
export interface TickSource {
  subscribe(fn: TickListener): () => void;
}

const TICK_MS = 20;
/** Ticks run back to back after a stall before the clock gives up and re-anchors. */
const MAX_CATCH_UP = 10;

export class MediaClock implements TickSource {
  private readonly listeners = new Set<TickListener>();
  private timer: NodeJS.Timeout | null = null;
  private nextAt = 0;
  private tick = 0;
  lateTicks = 0;

  subscribe(listener: TickListener): () => void {
    this.add(listener);
    return () => this.delete(listener);
  }

  add(listener: TickListener): void {
    this.listeners.add(listener);
    if (!this.timer) this.start();
  }

  delete(listener: TickListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) this.stop();
  }

  get size(): number {
    return this.listeners.size;
  }

  private start(): void {
    this.nextAt = performance.now() + TICK_MS;
    this.schedule();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.run(), Math.max(0, this.nextAt - performance.now()));
  }

  private run(): void {
    let ran = 0;
    while (performance.now() >= this.nextAt - 1 && ran < MAX_CATCH_UP) {
      this.fire();
      this.nextAt += TICK_MS;
      ran++;
    }
    if (performance.now() > this.nextAt + TICK_MS) {
      this.lateTicks++;
      this.nextAt = performance.now() + TICK_MS;
    }
    if (this.listeners.size > 0) this.schedule();
    else this.timer = null;
  }

  private fire(): void {
    const t = this.tick++;
    for (const l of this.listeners) {
      try {
        l(t);
      } catch {
        // One broken leg must not stop the others' media.
      }
    }
  }
}

/** The process-wide clock; tests may construct their own. */
export const sharedMediaClock = new MediaClock();
