// A queue of live 20 ms frames between two stages that run on different clocks (a leg's jitter
// buffer and a session's pacer; a pacer and an RTP sender). Such a queue keeps whatever depth its
// start-up or a burst left it with, since both ends then move one frame per tick: latency settles
// at a random value and never drains. This one converges instead:
//
// - every tick it records the depth left after the release; over a window of `windowTicks` the
//   smallest depth seen is the backlog that was never needed (a burst or a chunked sender makes the
//   depth swing, but its minimum still touches zero when the producer keeps pace);
// - at the end of the window a backlog above `targetFrames` is removed, the quietest frames first
//   (shortening silence is inaudible; speech is cut only when nothing quieter is left);
// - a hard cap drops the oldest frames at once, so a stall can never add more than `maxFrames`.
//
// Order is kept; nothing is dropped while the producer and consumer keep pace at or below the target.

export interface LiveQueueOptions {
  /** Backlog kept after convergence, in frames. Default 1. */
  targetFrames?: number;
  /** Ticks over which the minimum depth is measured. Default 50 (1 s): longer than a 200 ms chunk period. */
  windowTicks?: number;
  /** Hard cap in frames; the oldest go beyond it. Default 15 (300 ms). */
  maxFrames?: number;
}

export interface LiveQueueStats {
  /** Frames removed by convergence (quietest first). */
  trimmed: number;
  /** Frames removed by the hard cap. */
  overflowed: number;
}

export class LiveQueue<T> {
  private items: T[] = [];
  private enqueuedAt: number[] = [];
  private head = 0;
  private windowMin = Infinity;
  private windowTicks = 0;
  readonly stats: LiveQueueStats = { trimmed: 0, overflowed: 0 };
  private readonly target: number;
  private readonly window: number;
  private readonly max: number;

  /** @param energyOf loudness of an item (sum of squares or any monotonic measure), to drop the quietest. */
  constructor(
    private readonly energyOf: (item: T) => number,
    o: LiveQueueOptions = {},
  ) {
    this.target = Math.max(0, o.targetFrames ?? 1);
    this.window = Math.max(1, o.windowTicks ?? 50);
    this.max = Math.max(this.target + 1, o.maxFrames ?? 15);
  }

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T, now = 0): void {
    this.items.push(item);
    this.enqueuedAt.push(now);
    while (this.length > this.max) {
      this.head++;
      this.stats.overflowed++;
    }
  }

  /** The next frame and when it was queued (for the wait histograms), or undefined. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.lastEnqueuedAt = this.enqueuedAt[this.head] ?? 0;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.items.length) this.compact();
    return item;
  }

  /** Queue time of the frame last returned by shift(). */
  lastEnqueuedAt = 0;

  /**
   * Called once per consumer tick, after the release: measures the depth and, at each window's end,
   * removes the backlog above the target. Returns how many frames were removed.
   */
  endTick(): number {
    const depth = this.length;
    if (depth < this.windowMin) this.windowMin = depth;
    if (++this.windowTicks < this.window) return 0;
    const excess = this.windowMin - this.target;
    this.windowMin = Infinity;
    this.windowTicks = 0;
    if (excess <= 0) return 0;
    this.dropQuietest(excess);
    return excess;
  }

  clear(): void {
    this.items = [];
    this.enqueuedAt = [];
    this.head = 0;
    this.windowMin = Infinity;
    this.windowTicks = 0;
  }

  private dropQuietest(n: number): void {
    this.compact();
    // n is small (a window's surplus); a selection by energy keeps this cheap and allocation-light.
    const energies = this.items.map((it) => this.energyOf(it));
    const drop = new Set<number>();
    for (let k = 0; k < n; k++) {
      let best = -1;
      for (let i = 0; i < energies.length; i++) {
        if (!drop.has(i) && (best < 0 || (energies[i] ?? 0) < (energies[best] ?? 0))) best = i; // both indexes < energies.length
      }
      if (best < 0) break;
      drop.add(best);
    }
    this.items = this.items.filter((_, i) => !drop.has(i));
    this.enqueuedAt = this.enqueuedAt.filter((_, i) => !drop.has(i));
    this.stats.trimmed += drop.size;
  }

  private compact(): void {
    if (this.head === 0) return;
    this.items = this.items.slice(this.head);
    this.enqueuedAt = this.enqueuedAt.slice(this.head);
    this.head = 0;
  }
}

/** Energy of a PCM16 frame (sum of squares, sampled every 4th sample: enough to rank silence). */
export function frameEnergy(pcm: Int16Array): number {
  let e = 0;
  for (let i = 0; i < pcm.length; i += 4) e += (pcm[i] ?? 0) * (pcm[i] ?? 0); // i < pcm.length
  return e;
}
