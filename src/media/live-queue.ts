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
// - a hard cap drops the oldest frames at once, so a stall can never add more than `maxFrames`;
// - adaptive (`minTargetFrames` below `maxTargetFrames`): the target is the margin kept against a
//   producer's late frames. An underrun (a tick with nothing to release between ticks that had
//   something, a gap of at most UNDERRUN_GAP_TICKS) means the margin was too small. It grows by a
//   frame when underruns repeat; a lone one (a stall of the producer or of the host) is not cured
//   by depth, and growing on it held the added latency on every call for seconds. After a steady
//   spell (SteadySpell: 1 s without an underrun) it shrinks a frame, then a frame every
//   SHRINK_STEP_TICKS once convergence has removed the last one (silence first). It shrinks only if
//   the queue did not stand at the margin, or if every frame timed meanwhile (its wait here, when
//   `shift` is given the time) would still have had SLACK_MS to spare with a frame less: a producer
//   whose frames arrive just before the tick keeps its margin instead of losing it and underrunning.
//   A shrink that an underrun soon follows is undone, and the next waits twice as long (up to
//   MAX_SPELL_TICKS). A producer on the consumer's own clock (a leg's jitter buffer releasing in the
//   same tick) never underruns and keeps no margin; a socket client whose frames arrive mid-tick
//   keeps none either, so its frames wait only for the next tick.
//
// Order is kept; nothing is dropped while the producer and consumer keep pace at or below the target.

import { SteadySpell } from './steady-spell.js';

export interface LiveQueueOptions {
  /** Backlog kept after convergence, in frames (the starting target when adaptive). Default 1. */
  targetFrames?: number;
  /** Adaptive: the smallest target, kept while arrivals keep time. Default `targetFrames` (fixed). */
  minTargetFrames?: number;
  /** Adaptive: the largest target repeated underruns may raise it to. Default `targetFrames`. */
  maxTargetFrames?: number;
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
  /** Also counts into this (shared by many queues: a process-wide figure for /metrics). */
  totals?: LiveQueueStats;
}

/** A zeroed LiveQueueStats (a queue's own, a shared tally, a sum). */
export const emptyLiveQueueStats = (): LiveQueueStats => ({ trimmed: 0, trimmedVoiced: 0, overflowed: 0, underruns: 0 });

export interface LiveQueueStats {
  /** Frames removed by convergence (silence first, then the quietest). */
  trimmed: number;
  /** Of `trimmed`, frames above the silence level (cut when a window brought too little silence). */
  trimmedVoiced: number;
  /** Frames removed by the hard cap. */
  overflowed: number;
  /** Ticks that found nothing to release while the producer was sending (a late frame: a gap in the output). */
  underruns: number;
}

/** Ticks (5 s) of one span over which the producer's pacing is counted; the last two spans count. */
const PACING_SPAN_TICKS = 250;
/** Empty ticks between two releases that count as one underrun; a longer gap is a pause in the producer. */
const UNDERRUN_GAP_TICKS = 5;
/** Once shrinking, a further frame every this many ticks (100 ms); the first waits for a steady spell (SteadySpell). */
const SHRINK_STEP_TICKS = 5;
/**
 * An underrun within this many ticks (2 s) of the previous one is a repeat, and the margin grows. A line
 * whose frames are often late repeats within that; the stalls of a busy host (ours or the sender's), a
 * few seconds apart and hitting every call at once, do not, and growing on them held 20-40 ms more on
 * every call of the media bench at 400 calls.
 */
const REPEATED_UNDERRUN_TICKS = 100;

export class LiveQueue<T> {
  /**
   * A ring of `max` slots, allocated once: nothing is allocated per frame. Growing arrays compacted
   * every 64 frames (1.3 s) outlived the young generation's scavenges, so their backing stores, the
   * largest share of what a socket→RTP call promoted to old space, fed the major collections that
   * stall every call at once (forty-second pass). A slot is emptied as its frame leaves, so played
   * frames die young.
   */
  private readonly items: (T | undefined)[];
  private readonly enqueuedAt: Float64Array;
  /** Energy of each item, computed when convergence first needs it (NaN until then). */
  private readonly energies: Float64Array;
  private head = 0;
  private size = 0;
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
  readonly stats: LiveQueueStats = emptyLiveQueueStats();
  private target: number;
  private readonly minTarget: number;
  private readonly maxTarget: number;
  /** Ticks so far (endTick) and the tick of the last release. */
  private tickNo = 0;
  private lastReleaseTick = -Infinity;
  /** The steady spell a shrink waits for (its underruns and shrinks), and the deepest the queue stood after a release in it. */
  private readonly spell = new SteadySpell();
  private spellMaxDepth = 0;
  /** A shrink's frame of backlog is still standing (convergence has not removed it yet). */
  private shrinkTrimPending = false;
  private readonly window: number;
  private readonly minWindow: number;
  private readonly max: number;
  private readonly silence: number;
  private readonly totals: LiveQueueStats | undefined;

  /** @param energyOf loudness of an item (`frameEnergy` or any monotonic measure in the units of `silenceEnergy`). */
  constructor(
    private readonly energyOf: (item: T) => number,
    o: LiveQueueOptions = {},
  ) {
    this.target = Math.max(0, o.targetFrames ?? 1);
    this.minTarget = Math.min(this.target, Math.max(0, o.minTargetFrames ?? this.target));
    this.maxTarget = Math.max(this.target, o.maxTargetFrames ?? this.target);
    this.window = Math.max(1, o.windowTicks ?? 50);
    this.minWindow = Math.min(this.window, Math.max(1, o.minWindowTicks ?? 10));
    this.max = Math.max(this.maxTarget + 1, o.maxFrames ?? 15);
    this.silence = o.silenceEnergy ?? SILENT_FRAME_ENERGY;
    this.totals = o.totals;
    this.items = new Array<T | undefined>(this.max).fill(undefined);
    this.enqueuedAt = new Float64Array(this.max);
    this.energies = new Float64Array(this.max);
  }

  get length(): number {
    return this.size;
  }

  /** The ring slot of the `i`th frame queued (0: the oldest). */
  private slot(i: number): number {
    const at = this.head + i;
    return at < this.items.length ? at : at - this.items.length;
  }

  /** Surplus frames convergence still has to remove. */
  get pendingTrim(): number {
    return this.owed;
  }

  /** The backlog convergence keeps now, in frames (moves between the bounds when adaptive). */
  get targetFrames(): number {
    return this.target;
  }

  push(item: T, now = 0): void {
    this.arrivedSinceTick = true;
    if (this.size === this.max) {
      // The hard cap: the oldest goes to make room.
      this.items[this.head] = undefined;
      this.head = this.slot(1);
      this.size--;
      this.count('overflowed', 1);
    }
    const at = this.slot(this.size++);
    this.items[at] = item;
    this.enqueuedAt[at] = now;
    this.energies[at] = NaN;
  }

  /**
   * The next frame and when it was queued (for the wait histograms), or undefined. With `nowMs` (the
   * clock `push` was given), its wait here counts toward whether the margin may shrink.
   */
  shift(nowMs = NaN): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.lastEnqueuedAt = this.enqueuedAt[this.head] ?? 0; // head < slots
    this.head = this.slot(1);
    this.size--;
    this.spell.noteWait(nowMs - this.lastEnqueuedAt);
    const gap = this.tickNo - this.lastReleaseTick - 1;
    if (gap >= 1 && gap <= UNDERRUN_GAP_TICKS) this.underran();
    this.lastReleaseTick = this.tickNo;
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
    this.tickNo++;
    this.noteArrivals();
    this.maybeShrink();
    let removed = this.owed > 0 ? this.drop(this.owed, true) : 0;
    const depth = this.length;
    if (depth > this.spellMaxDepth) this.spellMaxDepth = depth;
    if (this.shrinkTrimPending && (depth <= this.target || removed > 0)) {
      // The shrink took effect: the next step is judged on the waits from here on.
      this.shrinkTrimPending = false;
      this.newSpell();
    }
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

  private count(what: keyof LiveQueueStats, n: number): void {
    this.stats[what] += n;
    if (this.totals) this.totals[what] += n;
  }

  /** A release after a short gap: the margin was too small for this producer's lateness. */
  private underran(): void {
    this.count('underruns', 1);
    if (this.minTarget === this.maxTarget) return;
    const t = this.tickNo;
    const repeated = t - this.spell.lastUnderrun <= REPEATED_UNDERRUN_TICKS;
    // A shrink this soon followed by an underrun was premature: the frame comes back (and the next try
    // waits twice as long).
    const shrinkFailed = this.spell.underrun(t);
    if (this.target < this.maxTarget && (repeated || shrinkFailed)) this.target++;
    this.spellMaxDepth = 0;
  }

  private newSpell(): void {
    this.spell.restart(this.tickNo);
    this.spellMaxDepth = 0;
  }

  /** After a steady spell, one frame less margin at a time; the frames it held go by convergence. */
  private maybeShrink(): void {
    if (this.target <= this.minTarget) return;
    const t = this.tickNo;
    const spell = this.spell;
    spell.relax(t);
    // Shrinking already, with no underrun since: the next step, once the last one took effect.
    // Otherwise the steady spell first.
    const stepping = spell.lastCut > spell.lastUnderrun;
    if (stepping && this.shrinkTrimPending) return;
    if (!spell.elapsed(t, stepping ? SHRINK_STEP_TICKS : spell.length)) return;
    // A margin the queue never stood at is not in use: it goes without removing anything.
    const roomy = this.spellMaxDepth < this.target || spell.hasSlack;
    this.newSpell();
    if (!roomy) return;
    this.target--;
    spell.cut(t);
    this.shrinkTrimPending = true;
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
    this.items.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.runMin = Infinity;
    this.runTicks = 0;
    this.owed = 0;
    // What follows a clear (an interruption) is not late: no underrun for the gap before it.
    this.lastReleaseTick = -Infinity;
    this.shrinkTrimPending = false;
  }

  /**
   * Removes up to `n` frames, quietest first (the oldest among equals); with `silentOnly` only frames
   * at or below the silence level. Lowers the debt by what went; returns that.
   */
  private drop(n: number, silentOnly: boolean): number {
    const energies = this.energies;
    for (let i = 0; i < this.size; i++) {
      const at = this.slot(i);
      if (Number.isNaN(energies[at])) energies[at] = this.energyOf(this.items[at] as T); // a queued slot holds a frame
    }
    // n is small (a window's surplus): a selection by energy keeps this cheap and allocation-light.
    let dropped: Set<number> | null = null;
    let voiced = 0;
    for (let k = 0; k < n; k++) {
      let best = -1;
      let bestEnergy = 0;
      for (let i = 0; i < this.size; i++) {
        const e = energies[this.slot(i)] ?? 0; // a slot index
        if (silentOnly && e > this.silence) continue;
        if (dropped?.has(i)) continue;
        if (best < 0 || e < bestEnergy) {
          best = i;
          bestEnergy = e;
        }
      }
      if (best < 0) break;
      (dropped ??= new Set()).add(best);
      if (bestEnergy > this.silence) voiced++;
    }
    if (!dropped) return 0;
    // Close the gaps in place, oldest first: every kept frame moves towards the head, in order.
    let kept = 0;
    for (let i = 0; i < this.size; i++) {
      if (dropped.has(i)) continue;
      const from = this.slot(i);
      const to = this.slot(kept++);
      if (from === to) continue;
      this.items[to] = this.items[from];
      this.enqueuedAt[to] = this.enqueuedAt[from] ?? 0; // a slot index
      this.energies[to] = energies[from] ?? NaN; // a slot index
    }
    for (let i = kept; i < this.size; i++) this.items[this.slot(i)] = undefined;
    this.size = kept;
    this.count('trimmed', dropped.size);
    this.count('trimmedVoiced', voiced); // none when silentOnly: the selection skips voiced frames
    this.owed = Math.max(0, this.owed - dropped.size);
    return dropped.size;
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
