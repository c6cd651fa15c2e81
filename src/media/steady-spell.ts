// The rule both adaptive margins share (the session pacer's live queue, a leg's jitter buffer): a
// frame of margin may go only after a steady spell (no underrun), and only if every frame timed in
// it waited at least a frame plus SLACK_MS; a cut that an underrun soon follows was premature, and
// the next spell is twice as long (up to MAX_SPELL_TICKS, back to SPELL_TICKS after as long calm).
// This tracks the spell; each owner decides what a cut removes and when it has taken effect.

import { FRAME_MS } from './constants.js';

/** Ticks (1 s) of a steady spell before a frame of margin may go. */
export const SPELL_TICKS = 50;
/** The longest a spell grows to (60 s) after cuts that underruns followed. */
export const MAX_SPELL_TICKS = 3000;
/** A frame of margin goes only if every frame of the spell waited at least this long beyond one frame (ms). */
export const SLACK_MS = 5;

export class SteadySpell {
  /** The tick the current spell began, and the ticks of the last underrun and cut. */
  start = 0;
  lastUnderrun = -Infinity;
  lastCut = -Infinity;
  /** How long a spell lasts now (grows after premature cuts). */
  length = SPELL_TICKS;
  /** The shortest wait of a frame timed in the spell (Infinity: none timed). */
  minWait = Infinity;

  /** A frame's wait in ms; NaN (untimed) is ignored. */
  noteWait(ms: number): void {
    if (ms < this.minWait) this.minWait = ms; // false for NaN
  }

  /** Every frame timed in the spell would still have waited SLACK_MS with a frame less (true when none was timed). */
  get hasSlack(): boolean {
    return this.minWait - FRAME_MS >= SLACK_MS;
  }

  /** After MAX_SPELL_TICKS without an underrun, spells are back to their first length. */
  relax(tick: number): void {
    if (tick - this.lastUnderrun >= MAX_SPELL_TICKS) this.length = SPELL_TICKS;
  }

  /** The spell has lasted `length` ticks (its own length by default) at `tick`. */
  elapsed(tick: number, length = this.length): boolean {
    return tick - this.start >= length;
  }

  /** An underrun at `tick` ends the spell; returns whether it followed a cut within a spell (then the next is twice as long). */
  underrun(tick: number): boolean {
    const cutFailed = tick - this.lastCut <= this.length;
    if (cutFailed) this.length = Math.min(2 * this.length, MAX_SPELL_TICKS);
    this.lastUnderrun = tick;
    this.restart(tick);
    return cutFailed;
  }

  /** A frame of margin went at `tick`: a new spell judges the next. */
  cut(tick: number): void {
    this.lastCut = tick;
    this.restart(tick);
  }

  restart(tick: number): void {
    this.start = tick;
    this.minWait = Infinity;
  }
}
