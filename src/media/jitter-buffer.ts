// Receive-side jitter buffer for 8 kHz telephone audio: packets in (any order, any arrival time),
// exactly one 20 ms frame out per playout tick once primed.
//
// - Ordering: frames are placed by RTP timestamp (unwrapped across the 32-bit wrap), so reordering,
//   duplicates and multi-frame packets (ptime 40) are handled alike; a sequence-keyed buffer cannot
//   see silence-suppression gaps, a timestamp-keyed one can.
// - Target delay: fixed, or adaptive from the RFC 3550 §A.8 interarrival jitter estimate.
// - Loss: a missing frame is concealed by repeating the last good frame, fading, then silence.
// - Clock drift: a sender faster than our clock makes the level grow; a frame is dropped when the level
//   stays above target (a quiet one when one comes within a window, see pop). A slower sender drains
//   the buffer; the underrun inserts concealment frames without advancing playout (a stretch) and the
//   buffer re-primes.
// - Standing depth: the target is the depth the buffer primes to, and the most it lets stand; what
//   actually stands below it depends on when the stream (re)started relative to our tick, so a leg
//   could carry a frame of margin it never used, or not, by chance. When every frame of a steady
//   second (no underrun) waited here at least a frame plus SLACK_MS, one standing frame goes (a quiet
//   one, never a voiced one). A trim an underrun soon follows makes the next wait twice as long (the
//   rule the session pacer's margin follows too: SteadySpell).

import { FRAME_MS, FRAME_SAMPLES } from './constants.js';
import { FrameSlab } from './frame-slab.js';
import { SILENT_FRAME_ENERGY, frameEnergy } from './live-queue.js';
import { SteadySpell } from './steady-spell.js';

export interface JitterBufferOptions {
  /** Initial (and, when not adaptive, fixed) playout delay in frames. Default 3 (60 ms). */
  targetFrames?: number;
  /** Adapt the target to measured jitter between minFrames and maxFrames. Default true. */
  adaptive?: boolean;
  minFrames?: number;
  maxFrames?: number;
  /** Frames of faded repetition before concealment turns to silence. Default 5. */
  concealFrames?: number;
  /** Slots held (frames). Default 64 (1.28 s). */
  capacityFrames?: number;
  /**
   * Remove a standing frame that the frames' waits show was never needed (see the header). Needs pop()'s
   * `nowMs` (untimed pops never trim). Default true.
   */
  trimSlack?: boolean;
  /**
   * Jitter (three times the RFC 3550 estimate, ms) that the playout point already absorbs, so the target
   * grows only for more: a leg placed after its late arrivals (media/playout-phase.ts). Default 0.
   */
  jitterAllowanceMs?: number;
}

export interface JitterBufferStats {
  received: number;
  duplicates: number;
  late: number;
  concealed: number;
  /** Frames removed ahead of playout, for any reason (drift, a burst cut back, standing depth). */
  dropped: number;
  /**
   * Of `dropped`, the quiet or missing frames taken out of a pause to shorten a standing depth (a surplus
   * paid in quiet frames, a slack trim): silence shortened, no audio lost.
   */
  silenceTrimmed: number;
  underruns: number;
  resyncs: number;
  played: number;
  targetFrames: number;
  /** Frames buffered ahead of playout right now (the buffer's depth). */
  depthFrames: number;
  jitterMs: number;
}

const SAMPLES = FRAME_SAMPLES;
/** Float64 fields per slot in `slots`: frame index held, arrival time, frame index last written. */
const SLOT_FIELDS = 3;
/**
 * Ticks the playout level must stay above the target before its smallest value there is taken as
 * surplus; also how long a surplus waits for quiet frames before a voiced one goes.
 */
const SURPLUS_WINDOW_TICKS = 10;
/**
 * The target shrinks one frame every SHRINK_EVERY_PACKETS packets (100 ms at 20 ms) once SHRINK_AFTER_PACKETS
 * (1 s) have passed without an underrun, as far as the measured jitter allows (it decays by itself, so a
 * jittery line keeps its depth). A call's first second is often jittery on our side (set-up work, many legs
 * starting together), and a stall anywhere makes a spike: at one frame a second after 3 s, that spike held a
 * 4–6 frame target through the first 5–7 s of every bridged call in the media bench; at one frame per
 * 0.5 s, a spike 1.5 s in still held 60–80 ms extra on every call 2.5 s later.
 */
const SHRINK_AFTER_PACKETS = 50;
const SHRINK_EVERY_PACKETS = 5;
/** An underrun within this many packets (10 s) of the last one is a repeat: the line's delay spikes recur. */
const REPEATED_UNDERRUN_PACKETS = 500;
const FADE = [1, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05];

type State = 'idle' | 'priming' | 'playing';

export class JitterBuffer {
  private readonly capacity: number;
  private readonly store: Int16Array;
  /**
   * Per slot, side by side (one cache line per access, not one per array: every leg's buffer is touched
   * once per tick and is out of the cache by then): the index of the frame held (NaN: empty), its
   * arrival time, and the index of the frame last written there (kept after the frame is played, so
   * concealment can repeat it from the store while the slot holds it, instead of a copy made per pop).
   */
  private readonly slots: Float64Array;
  private lastPlayedSlot = -1;
  private lastPlayedIdx = NaN;
  private readonly adaptive: boolean;
  private readonly minFrames: number;
  private readonly maxFrames: number;
  private readonly concealFrames: number;
  private target: number;
  private state: State = 'idle';
  private hasPlayed = false;
  private next = 0;
  private maxIdx = -Infinity;
  private baseTs = -1;
  private tsCycles = 0;
  private lastTsRaw = -1;
  private concealRun = 0;
  private primingTicks = 0;
  private lastUnderrunAt = -Infinity;
  /**
   * A placed leg's repeated underrun (jitterAllowanceMs): the frame it found missing, and when. The target
   * grows only if that frame comes later than the allowance (see pop).
   */
  private awaitedIdx = NaN;
  private underrunAtMs = NaN;
  /** Smallest playout level and length of the current run of ticks above the target. */
  private runMin = Infinity;
  private runTicks = 0;
  /** Surplus frames found and not yet removed (paid in quiet frames as they come due). */
  private surplusOwed = 0;
  private surplusWaitTicks = 0;
  private jitter = 0;
  private prevTransit = NaN;
  private readonly trimSlack: boolean;
  private readonly jitterAllowanceMs: number;
  /** Ticks since the first pop, and the steady spell a slack trim waits for (its underruns and trims). */
  private ticks = 0;
  private readonly spell = new SteadySpell();
  /** A standing frame the waits showed unneeded, to go as a quiet one comes due. */
  private slackOwed = false;
  private readonly s: JitterBufferStats;
  /** The frames pop() makes (views on a slab: see frame-slab.ts). */
  private readonly frames = new FrameSlab(SAMPLES);

  constructor(o: JitterBufferOptions = {}) {
    this.capacity = o.capacityFrames ?? 64;
    this.adaptive = o.adaptive ?? true;
    this.minFrames = o.minFrames ?? 3;
    this.maxFrames = o.maxFrames ?? 12;
    this.concealFrames = Math.min(o.concealFrames ?? 5, FADE.length - 1);
    this.trimSlack = o.trimSlack ?? true;
    this.jitterAllowanceMs = o.jitterAllowanceMs ?? 0;
    this.target = Math.min(Math.max(o.targetFrames ?? 3, 1), this.capacity / 2);
    this.store = new Int16Array(this.capacity * SAMPLES);
    this.slots = new Float64Array(this.capacity * SLOT_FIELDS).fill(NaN);
    this.s = {
      received: 0,
      duplicates: 0,
      late: 0,
      concealed: 0,
      dropped: 0,
      silenceTrimmed: 0,
      underruns: 0,
      resyncs: 0,
      played: 0,
      targetFrames: this.target,
      depthFrames: 0,
      jitterMs: 0,
    };
  }

  get stats(): Readonly<JitterBufferStats> {
    this.s.targetFrames = this.target;
    this.s.depthFrames = this.level;
    this.s.jitterMs = this.jitter;
    return this.s;
  }

  /**
   * How long the frame returned by the last pop() waited here (arrival → pop), in ms; NaN when that
   * pop concealed or returned nothing, or no `nowMs` was given. Feeds the jitter_buffer stage histogram.
   */
  lastWaitMs = NaN;

  /** Current playout target in frames (adapts to measured jitter when adaptive). */
  get targetFrames(): number {
    return this.target;
  }

  /**
   * Playing, and the frame due next has not come: the next pop conceals (unless it comes first). Not while
   * a gap is already being concealed (a pause, a stream that stopped): only a gap's first frame asks.
   */
  get dueMissing(): boolean {
    return this.state === 'playing' && this.slots[this.slotOf(this.next) * SLOT_FIELDS] !== this.next;
  }

  /** Frames buffered ahead of playout, holes included. */
  get level(): number {
    return this.maxIdx >= this.next ? this.maxIdx - this.next + 1 : 0;
  }

  /** Forget everything (new SSRC, re-INVITE to a new source). */
  reset(): void {
    this.emptySlots();
    // Once playing, keep emitting (concealment) through the change so the tick contract holds.
    this.state = this.hasPlayed ? 'priming' : 'idle';
    this.primingTicks = 0;
    this.baseTs = -1;
    this.lastTsRaw = -1;
    this.tsCycles = 0;
    this.maxIdx = -Infinity;
    this.next = 0;
    this.prevTransit = NaN;
    this.awaitedIdx = NaN;
    this.settleSurplus();
    this.spell.restart(this.ticks);
  }

  /**
   * Adds decoded audio that starts at RTP `timestamp` (8 kHz units). `samples` may hold several
   * 20 ms frames; a trailing partial frame is ignored. The samples are copied.
   */
  push(timestamp: number, samples: Int16Array, arrivalMs: number = performance.now()): void {
    const ts = this.unwrapTs(timestamp >>> 0);
    this.s.received++;
    this.updateJitter(ts, arrivalMs);
    if (this.baseTs < 0) this.baseTs = ts;
    let idx = Math.floor((ts - this.baseTs) / SAMPLES);
    if (this.state === 'idle') {
      this.next = idx;
      this.state = 'priming';
    } else if (idx >= this.next + this.capacity || idx < this.next - this.capacity) {
      // A jump no reordering explains (sender restart, timestamp reset): start over from here.
      this.s.resyncs++;
      this.awaitedIdx = NaN;
      this.emptySlots();
      this.baseTs = ts;
      idx = 0;
      this.next = 0;
      this.maxIdx = -Infinity;
      this.state = 'priming';
    } else if (this.state === 'priming' && this.hasPlayed && this.maxIdx < this.next && idx > this.next) {
      // After an underrun: re-anchor on the talkspurt that arrives instead of playing out the gap.
      this.next = idx;
    } else if (this.state === 'priming' && !this.hasPlayed && idx < this.next) {
      // The very first packets came out of order: start playout at the earliest one.
      this.next = idx;
    }
    const frames = Math.floor(samples.length / SAMPLES);
    for (let f = 0; f < frames; f++, idx++) {
      if (idx === this.awaitedIdx) {
        this.awaitedIdx = NaN;
        if (arrivalMs - this.underrunAtMs > this.jitterAllowanceMs && this.mayGrow()) this.target++;
      }
      if (idx < this.next) {
        this.s.late++;
        continue;
      }
      const slot = this.slotOf(idx);
      const at = slot * SLOT_FIELDS;
      if (this.slots[at] === idx) {
        this.s.duplicates++;
        continue;
      }
      this.slots[at] = idx;
      this.slots[at + 1] = arrivalMs;
      this.slots[at + 2] = idx;
      this.store.set(samples.subarray(f * SAMPLES, (f + 1) * SAMPLES), slot * SAMPLES);
      if (idx > this.maxIdx) this.maxIdx = idx;
    }
  }

  /**
   * Called once per 20 ms tick. Returns the frame to play (written into `out`, or a new frame the
   * caller may keep), or null while nothing has ever been buffered (the leg has not started talking yet).
   */
  pop(out?: Int16Array, nowMs = NaN): Int16Array | null {
    this.lastWaitMs = NaN;
    if (this.state === 'idle') return null;
    this.ticks++;
    if (this.state === 'priming') {
      // Play once the target is buffered, or after waiting that long anyway (a short burst).
      if (this.level >= this.target || (this.level > 0 && ++this.primingTicks >= this.target)) {
        this.primingTicks = 0;
        this.state = 'playing';
        // Re-priming after an underrun: the gap was already covered by concealment, so frames beyond
        // the target (the burst that follows a stall) would add their length to the latency for good.
        // They are owed at once as a surplus, paid in quiet frames as they come due (below): cutting the
        // oldest outright lost whatever was said during the stall, a word the listener and the
        // recognizer never got. Speech that lasts keeps the depth until a pause, or loses a frame per
        // window (paySurplus); a burst more than maxFrames above the target is still cut back at once
        // (below). (At the very first start nothing is owed.)
        if (this.hasPlayed && this.level > this.target) this.surplusOwed = Math.max(this.surplusOwed, this.level - this.target);
      } else {
        if (!this.hasPlayed) return null;
        return this.conceal(out ?? this.frames.next());
      }
    }
    const level = this.level;
    if (level === 0) {
      // Underrun: stretch (do not advance playout) and re-prime.
      this.s.underruns++;
      this.state = 'priming';
      // Grow on an underrun that repeats one within REPEATED_UNDERRUN_PACKETS, and only up to two frames
      // above what the measured jitter asks for. A lone spike (a stall of our loop, of the sender or of
      // the host) is not cured by depth: growing on it held 20-40 ms more on every call for the 1 s
      // before the target may shrink; growing without bound kept the latency high on a busy host.
      // A leg placed after its arrivals moves later at the late packet itself (PlayoutPhase), which costs
      // it the lateness, where a frame more of target costs 20 ms on every frame for a second or more
      // (and a second concealed frame while it primes): it grows only if the missing frame comes later
      // than the placement absorbs (at once on an untimed pop; never for a frame that never comes).
      const repeated = this.s.received - this.lastUnderrunAt <= REPEATED_UNDERRUN_PACKETS;
      if (this.adaptive && repeated && this.mayGrow()) {
        if (this.jitterAllowanceMs > 0 && Number.isFinite(nowMs)) {
          this.awaitedIdx = this.next;
          this.underrunAtMs = nowMs;
        } else {
          this.target++;
        }
      }
      this.lastUnderrunAt = this.s.received;
      this.slackUnderrun();
      return this.conceal(out ?? this.frames.next());
    }
    if (level > this.maxFrames + this.target) {
      // A burst after a stall: cut straight back to the target.
      const drop = level - this.target;
      this.discard(drop);
      this.settleSurplus();
    } else if (level <= this.target) {
      // Touched the target: nothing stands, whatever was owed has drained on its own.
      this.settleSurplus();
    } else {
      // Surplus depth: once the level has stayed above the target for a whole window, the smallest
      // level of that run is depth that was never needed (a fast sender's drift, or the frames a stall
      // or a start-up burst left behind). A level that only swings (arrivals straddling the tick)
      // touches the target and loses nothing. All of the surplus is owed at once and paid in quiet
      // (or missing) frames as they come due, several in one tick if they are there: a pause is
      // shortened, inaudibly, rather than a word cut. Only after a further window without one does
      // a voiced frame go, one per window. Before, one frame went per 200 ms window, so the 60–100 ms
      // a stall left behind stood for a second and set the p99 of every call.
      if (level < this.runMin) this.runMin = level;
      if (++this.runTicks >= SURPLUS_WINDOW_TICKS) {
        this.surplusOwed = Math.max(this.surplusOwed, this.runMin - this.target);
        this.runMin = Infinity;
        this.runTicks = 0;
      }
      if (this.surplusOwed > 0) this.paySurplus();
    }
    if (this.trimSlack) this.judgeSlack();
    const slot = this.slotOf(this.next);
    const at = slot * SLOT_FIELDS;
    this.next++;
    if (this.slots[at] === this.next - 1) {
      this.slots[at] = NaN;
      this.lastWaitMs = nowMs - (this.slots[at + 1] ?? nowMs);
      this.spell.noteWait(this.lastWaitMs);
      out ??= this.frames.next();
      out.set(this.store.subarray(slot * SAMPLES, (slot + 1) * SAMPLES));
      this.lastPlayedSlot = slot;
      this.lastPlayedIdx = this.next - 1;
      this.concealRun = 0;
      this.hasPlayed = true;
      this.s.played++;
      return out;
    }
    return this.conceal(out ?? this.frames.next());
  }

  private paySurplus(): void {
    let paid = false;
    while (this.surplusOwed > 0 && this.level > this.target && this.nextIsQuiet()) {
      this.trimQuiet();
      this.surplusOwed--;
      paid = true;
    }
    if (this.level <= this.target) this.surplusOwed = 0;
    if (paid || this.surplusOwed === 0) {
      this.surplusWaitTicks = 0;
    } else if (++this.surplusWaitTicks >= SURPLUS_WINDOW_TICKS) {
      this.discard(1);
      this.surplusOwed--;
      this.surplusWaitTicks = 0;
    }
  }

  /**
   * Once per playing tick, before the frame is taken: after a steady spell whose every frame waited a
   * frame plus SLACK_MS or more, one standing frame is owed, and goes when a quiet (or missing) one is
   * next, provided a frame stands behind it. Never a voiced one: unlike a surplus, one frame of slack
   * costs only 20 ms, and cutting it from a word costs the listener (and the recognizer) more.
   */
  private judgeSlack(): void {
    if (this.slackOwed) {
      if (this.level < 2) {
        this.slackOwed = false;
      } else if (this.nextIsQuiet()) {
        this.trimQuiet();
        this.slackOwed = false;
        this.spell.cut(this.ticks);
      }
      return;
    }
    const spell = this.spell;
    spell.relax(this.ticks);
    if (!spell.elapsed(this.ticks)) return;
    // Untimed pops leave the spell without a wait, which is no evidence of slack.
    const slack = Number.isFinite(spell.minWait) && spell.hasSlack;
    spell.restart(this.ticks);
    if (slack && this.level >= 2) this.slackOwed = true;
  }

  /** An underrun ends the spell; one soon after a trim shows the frame was needed, and the next spell is longer. */
  private slackUnderrun(): void {
    this.spell.underrun(this.ticks);
    this.slackOwed = false;
  }

  private settleSurplus(): void {
    this.runMin = Infinity;
    this.runTicks = 0;
    this.surplusOwed = 0;
    this.surplusWaitTicks = 0;
  }

  /** The frame due next is missing (concealed anyway) or at or below the silence level. */
  private nextIsQuiet(): boolean {
    const slot = this.slotOf(this.next);
    if (this.slots[slot * SLOT_FIELDS] !== this.next) return true;
    return frameEnergy(this.store.subarray(slot * SAMPLES, (slot + 1) * SAMPLES)) <= SILENT_FRAME_ENERGY;
  }

  private slotOf(idx: number): number {
    const r = idx % this.capacity;
    return r < 0 ? r + this.capacity : r;
  }

  /** Removes the quiet (or missing) frame due next: a pause shortened by a frame. */
  private trimQuiet(): void {
    this.discard(1);
    this.s.silenceTrimmed++;
  }

  private discard(n: number): void {
    for (let i = 0; i < n; i++) {
      const at = this.slotOf(this.next) * SLOT_FIELDS;
      if (this.slots[at] === this.next) this.slots[at] = NaN;
      this.next++;
      this.s.dropped++;
    }
  }

  private conceal(out: Int16Array): Int16Array {
    this.s.concealed++;
    this.concealRun++;
    const gain = this.concealRun <= this.concealFrames ? (FADE[this.concealRun] ?? 0) : 0;
    // The last played frame, faded, while its slot still holds it (a frame written there since is not it).
    const slot = this.lastPlayedSlot;
    if (gain === 0 || slot < 0 || this.slots[slot * SLOT_FIELDS + 2] !== this.lastPlayedIdx) {
      out.fill(0);
    } else {
      const base = slot * SAMPLES;
      for (let i = 0; i < SAMPLES; i++) out[i] = Math.round((this.store[base + i] ?? 0) * gain);
    }
    return out;
  }

  /** Marks every slot empty; what they held stays in the store (concealment may still repeat the last played). */
  private emptySlots(): void {
    for (let at = 0; at < this.slots.length; at += SLOT_FIELDS) this.slots[at] = NaN;
  }

  private unwrapTs(raw: number): number {
    const SPAN = 0x100000000;
    if (this.lastTsRaw < 0) {
      this.lastTsRaw = raw;
      return this.tsCycles + raw;
    }
    const delta = raw - this.lastTsRaw;
    if (delta < -SPAN / 2) {
      // Forward across the 32-bit wrap.
      this.tsCycles += SPAN;
      this.lastTsRaw = raw;
    } else if (delta > SPAN / 2) {
      // A late packet from before the wrap.
      return this.tsCycles - SPAN + raw;
    } else if (delta > 0) {
      this.lastTsRaw = raw;
    }
    return this.tsCycles + raw;
  }

  /** Repeated underruns grow the target up to two frames above what the measured jitter asks for. */
  private mayGrow(): boolean {
    return this.target < Math.min(this.maxFrames, this.jitterTarget() + 2);
  }

  /** The target the measured jitter asks for: one frame plus three times the jitter (less the allowance), within bounds. */
  private jitterTarget(): number {
    const wanted = 1 + Math.ceil(Math.max(0, 3 * this.jitter - this.jitterAllowanceMs) / FRAME_MS);
    return Math.min(Math.max(wanted, this.minFrames), this.maxFrames);
  }

  private updateJitter(ts: number, arrivalMs: number): void {
    // RFC 3550 §A.8: J += (|D| - J) / 16, with D the change in transit time.
    const transit = arrivalMs - ts / 8;
    if (!Number.isNaN(this.prevTransit)) {
      const d = Math.abs(transit - this.prevTransit);
      if (d < 1000) this.jitter += (d - this.jitter) / 16;
    }
    this.prevTransit = transit;
    if (this.adaptive) {
      const clamped = this.jitterTarget();
      // Grow at once, shrink by steps (pop's surplus rule then drains the depth the target left).
      if (clamped > this.target) this.target = clamped;
      // Shrink after SHRINK_AFTER_PACKETS without an underrun, a frame every SHRINK_EVERY_PACKETS: a
      // target that just grew stays a while, but a spike (often our own event loop stalling, which
      // stamps arrivals late) does not hold the added latency for long.
      else if (clamped < this.target && this.s.received - this.lastUnderrunAt > SHRINK_AFTER_PACKETS && this.s.received % SHRINK_EVERY_PACKETS === 0)
        this.target--;
    }
  }
}
