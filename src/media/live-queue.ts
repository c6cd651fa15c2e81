// A queue of live 20 ms frames between two stages that run on different clocks (a leg's jitter
// buffer and a session's pacer; a pacer and an RTP sender). Such a queue keeps whatever depth its
// start-up or a burst left it with, since both ends then move one frame per tick: latency settles
// at a random value and never drains. This one converges instead:
//
// - every tick it records the depth left after the release; once the depth has stayed above
//   `targetFrames` for a window of ticks in a row, the smallest depth of that run is backlog that
//   was never needed (a burst or a chunked sender makes the depth swing, but it still touches the
//   target when the producer keeps pace, which starts a new run). A run starts at the first tick
//   above the target, so a surplus is found one window after it appears, not at the end of the
//   next fixed window (up to two windows: a start-up surplus stood 1-2 s). The window is
//   `minWindowTicks` for a frame-paced producer (frames arrived in at least half the ticks of the
//   last 5-10 s: a jitter buffer, a client sending 20 or 40 ms frames), so what a stall left behind
//   goes after 200 ms instead of a second; a chunked one keeps `windowTicks`, long enough for a
//   late chunk followed by an early one not to look like surplus;
// - the surplus becomes a debt paid in silent frames (at or below `silenceEnergy`), quietest first,
//   as soon as they are queued: shortening a pause is inaudible. Only when a whole further run
//   brings too little silence (continuous speech or a noisy line) is the rest cut from the quietest
//   frames queued, so a surplus cannot stand longer;
// - a hard cap drops the oldest frames at once, so a stall can never add more than `maxFrames`.
//
// Order is kept; nothing is dropped while the producer and consumer keep pace at or below the target.

export interface LiveQueueOptions {
  /** Backlog kept after convergence, in frames. Default 1. */
  targetFrames?: number;
  /**
   * Most ticks the depth must stay above the target before its minimum is taken as surplus. Default
   * 50 (1 s). Within this, the window follows the arrivals (see above).
   */
  windowTicks?: number;
  /** The window for a frame-paced producer. Default 10 (200 ms), at most `windowTicks`. */
  minWindowTicks?: number;
  /** Hard cap in frames; the oldest go beyond it. Default 15 (300 ms). */
  maxFrames?: number;
  /**
   * Frames whose energy is at or below this are silence, which convergence removes first and
   * without delay. In `frameEnergy`'s units; default SILENT_FRAME_ENERGY (-50 dBFS).
   */
  silenceEnergy?: number;
}

export interface LiveQueueStats {
  /** Frames removed by convergence (silence first, then the quietest). */
  trimmed: number;
  /** Of `trimmed`, frames above the silence level (cut when a window brought too little silence). */
  trimmedVoiced: number;
  /** Frames removed by the hard cap. */
  overflowed: number;
}

/** Ticks (5 s) of one span over which the producer's pacing is counted; the last two spans count. */
const PACING_SPAN_TICKS = 250;

export class LiveQueue<T> {
  /**
   * Slots before `head` are emptied as frames leave: a frame referenced from a passed slot until the
   * next compaction (up to 64 frames, 1.3 s later) outlived the young generation's scavenges, so every
   * frame of every call was promoted to old space and the major collections that followed stalled
   * all calls at once.
   */
  private items: (T | undefined)[] = [];
  private enqueuedAt: number[] = [];
  /** Energy of each item, computed when convergence first needs it (NaN until then). */
  private energies: number[] = [];
  private head = 0;
  /** Smallest depth and length of the current run of ticks above the target. */
  private runMin = Infinity;
  private runTicks = 0;
  /** Surplus frames still to remove (found at a run's end, paid in silence as it comes). */
  private owed = 0;
  /** Something was pushed since the last tick; ticks, and ticks with an arrival, in this and the previous span. */
  private arrivedSinceTick = false;
  private spanTicks = 0;
  private spanArrivalTicks = 0;
  private lastSpanTicks = 0;
  private lastSpanArrivalTicks = 0;
  readonly stats: LiveQueueStats = { trimmed: 0, trimmedVoiced: 0, overflowed: 0 };
  private readonly target: number;
  private readonly window: number;
  private readonly minWindow: number;
  private readonly max: number;
  private readonly silence: number;

  /** @param energyOf loudness of an item (`frameEnergy` or any monotonic measure in the units of `silenceEnergy`). */
  constructor(
    private readonly energyOf: (item: T) => number,
    o: LiveQueueOptions = {},
  ) {
    this.target = Math.max(0, o.targetFrames ?? 1);
    this.window = Math.max(1, o.windowTicks ?? 50);
    this.minWindow = Math.min(this.window, Math.max(1, o.minWindowTicks ?? 10));
    this.max = Math.max(this.target + 1, o.maxFrames ?? 15);
    this.silence = o.silenceEnergy ?? SILENT_FRAME_ENERGY;
  }

  get length(): number {
    return this.items.length - this.head;
  }

  /** Surplus frames convergence still has to remove. */
  get pendingTrim(): number {
    return this.owed;
  }

  push(item: T, now = 0): void {
    this.arrivedSinceTick = true;
    this.items.push(item);
    this.enqueuedAt.push(now);
    this.energies.push(NaN);
    while (this.length > this.max) {
      this.items[this.head++] = undefined;
      this.stats.overflowed++;
    }
  }

  /** The next frame and when it was queued (for the wait histograms), or undefined. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.lastEnqueuedAt = this.enqueuedAt[this.head] ?? 0;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.items.length) this.compact();
    return item;
  }

  /** Queue time of the frame last returned by shift(). */
  lastEnqueuedAt = 0;

  /**
   * Called once per consumer tick, after the release: pays the surplus found so far in silent
   * frames, measures the depth and, when it has stayed above the target for a whole window, sets the
   * surplus (cutting the quietest frames when the previous window's surplus found too little
   * silence). Returns how many frames were removed.
   */
  endTick(): number {
    this.noteArrivals();
    let removed = this.owed > 0 ? this.drop(this.owed, true) : 0;
    const depth = this.length;
    if (depth <= this.target) {
      // Touched the target: nothing stands, whatever was owed has drained on its own.
      this.runMin = Infinity;
      this.runTicks = 0;
      this.owed = 0;
      return removed;
    }
    if (depth < this.runMin) this.runMin = depth;
    if (++this.runTicks < this.windowTicks) return removed;
    let excess = this.runMin - this.target;
    this.runMin = Infinity;
    this.runTicks = 0;
    if (this.owed > 0) {
      // A whole window without enough silence to pay the last surplus: the quietest frames go now.
      const cut = this.drop(Math.min(this.owed, excess), false);
      removed += cut;
      excess -= cut;
    }
    this.owed = excess;
    if (this.owed > 0) removed += this.drop(this.owed, true);
    return removed;
  }

  /** The current window: short for a frame-paced producer, the full one otherwise (and until one is seen). */
  get windowTicks(): number {
    const ticks = this.spanTicks + this.lastSpanTicks;
    if (ticks < this.minWindow) return this.window;
    const paced = 2 * (this.spanArrivalTicks + this.lastSpanArrivalTicks) >= ticks;
    return paced ? this.minWindow : this.window;
  }

  private noteArrivals(): void {
    this.spanTicks++;
    if (this.arrivedSinceTick) this.spanArrivalTicks++;
    this.arrivedSinceTick = false;
    if (this.spanTicks >= PACING_SPAN_TICKS) {
      this.lastSpanTicks = this.spanTicks;
      this.lastSpanArrivalTicks = this.spanArrivalTicks;
      this.spanTicks = 0;
      this.spanArrivalTicks = 0;
    }
  }

  clear(): void {
    this.items = [];
    this.enqueuedAt = [];
    this.energies = [];
    this.head = 0;
    this.runMin = Infinity;
    this.runTicks = 0;
    this.owed = 0;
  }

  /**
   * Removes up to `n` frames, quietest first (the oldest among equals); with `silentOnly` only frames
   * at or below the silence level. Lowers the debt by what went; returns that.
   */
  private drop(n: number, silentOnly: boolean): number {
    this.compact();
    const energies = this.energies;
    this.items.forEach((it, i) => {
      if (it !== undefined && Number.isNaN(energies[i])) energies[i] = this.energyOf(it); // compacted: all defined
    });
    // n is small (a window's surplus): a selection by energy keeps this cheap and allocation-light.
    let dropped: Set<number> | null = null;
    for (let k = 0; k < n; k++) {
      let best = -1;
      for (let i = 0; i < energies.length; i++) {
        const e = energies[i] ?? 0; // i < energies.length
        if (silentOnly && e > this.silence) continue;
        if (dropped?.has(i)) continue;
        if (best < 0 || e < (energies[best] ?? 0)) best = i;
      }
      if (best < 0) break;
      (dropped ??= new Set()).add(best);
    }
    if (!dropped) return 0;
    const gone = dropped;
    const keep = (_: unknown, i: number): boolean => !gone.has(i);
    this.items = this.items.filter(keep);
    this.enqueuedAt = this.enqueuedAt.filter(keep);
    this.energies = this.energies.filter(keep);
    this.stats.trimmed += gone.size;
    if (!silentOnly) for (const i of gone) if ((energies[i] ?? 0) > this.silence) this.stats.trimmedVoiced++;
    this.owed = Math.max(0, this.owed - gone.size);
    return gone.size;
  }

  private compact(): void {
    if (this.head === 0) return;
    this.items = this.items.slice(this.head);
    this.enqueuedAt = this.enqueuedAt.slice(this.head);
    this.energies = this.energies.slice(this.head);
    this.head = 0;
  }
}

/**
 * Energy of a PCM16 frame: the mean square of every sample. Every sample counts: a sum over every
 * 4th sample (a 2 kHz sampling of 8 kHz audio) reads a 1 kHz tone, whose every 4th sample is a zero
 * crossing, as silence, and convergence then cut the loudest frame of the queue first.
 */
export function frameEnergy(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let e = 0;
  for (let i = 0; i < pcm.length; i++) e += (pcm[i] ?? 0) * (pcm[i] ?? 0); // i < pcm.length
  return e / pcm.length;
}

/**
 * Silence for convergence, in `frameEnergy`'s units: -50 dBFS RMS, the level below which the energy
 * VAD never hears speech (VadOptions.minLevelDb).
 */
export const SILENT_FRAME_ENERGY = (32768 * 10 ** (-50 / 20)) ** 2;
