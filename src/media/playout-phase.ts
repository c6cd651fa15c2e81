// Where in the 20 ms frame a leg plays out, when the media clock has sub-ticks (MEDIA_SUBTICKS): the
// first sub-tick after its packets' late arrivals, plus a margin. With one instant per frame for every
// leg, a frame waited 0–20 ms for it depending on where the phone's send phase fell (the same call
// 15 ms slower or faster from run to run), and frames arriving just before that instant missed it on
// any lateness. The transit of each packet (arrival minus RTP time) is constant for a steady sender but
// for its jitter; the late edge is the latest transit of the last one to two seconds, so a leg moves
// later at the first late packet and earlier only after a spell with none as late.
import { FRAME_MS } from './constants.js';
import type { TickSource } from './media-clock.js';

/** A leg is placed this long after the late edge of its arrivals (covers a read just after a packet's stamp). */
const PLAYOUT_MARGIN_MS = 1.5;
/**
 * It moves when its sub-tick comes less than MIN_LEAD_MS after the edge, or more than a sub-tick plus
 * EXTRA_LEAD_MS: a millisecond either side of the placement, so an edge near a sub-tick's time does not
 * move the leg (and whatever its frames feed) back and forth.
 */
const MIN_LEAD_MS = 0.5;
const EXTRA_LEAD_MS = 2.5;
/**
 * The late edge is the latest transit of the current block of packets and the one before (50 packets,
 * a second at 20 ms, each): a decaying maximum instead moved legs back and forth every second or two on
 * 2–3 ms of jitter, and each move costs the chain the leg feeds an uneven interval.
 */
const BLOCK_PACKETS = 50;
/**
 * The most the late edge stands above the latest packet's transit: lateness beyond it is the jitter
 * buffer's (its underrun and target). Under a frame, so the edge never wraps into the next frame's.
 */
const MAX_LEAD_MS = 15;
/** A transit this far from the edge is a new timeline (new source, timestamp jump): start over. */
const RESTART_MS = 1000;

/** Moves of every leg's playout in this process (a health figure: legs moving together show late bursts). */
export const playoutMoves = { later: 0, earlier: 0 };

type PlacingClock = TickSource & Required<Pick<TickSource, 'phaseAt' | 'subTickAt'>>;

export class PlayoutPhase {
  /** The sub-tick to play out in: subscribe the leg's playout with it. */
  readonly tickPhase = { phase: 0 };
  /** The latest transit of the current block of packets and of the one before it (NaN: none yet). */
  private blockLate = NaN;
  private previousLate = NaN;
  private blockPackets = 0;
  /** The late edge the leg was last placed after (NaN: not yet on this timeline). */
  private placedLate = NaN;
  private readonly subMs: number;

  private constructor(
    private readonly clock: PlacingClock,
    private readonly subTicks: number,
  ) {
    this.subMs = FRAME_MS / subTicks;
  }

  /** Null when the clock has no sub-ticks to place legs in (every leg plays out at the frame's one instant). */
  static on(clock: TickSource): PlayoutPhase | null {
    const subTicks = clock.subTicks ?? 1;
    return subTicks > 1 && clock.phaseAt && clock.subTickAt ? new PlayoutPhase(clock as PlacingClock, subTicks) : null;
  }

  /** A packet of `rtpTimestamp` (8 kHz) arrived at `arrivalMs` (performance.now time). */
  note(rtpTimestamp: number, arrivalMs: number): void {
    const transit = arrivalMs - rtpTimestamp / 8;
    if (!(Math.abs(transit - this.blockLate) < RESTART_MS)) this.reset(); // the first packet (NaN) too
    if (++this.blockPackets > BLOCK_PACKETS) {
      this.previousLate = this.blockLate;
      this.blockLate = NaN;
      this.blockPackets = 1;
    }
    if (!(transit <= this.blockLate)) this.blockLate = transit;
    const late = Math.min(Number.isNaN(this.previousLate) ? this.blockLate : Math.max(this.blockLate, this.previousLate), transit + MAX_LEAD_MS);
    // When this packet's frame would have come at the late edge, and how long after that the leg's sub-tick comes.
    const edge = arrivalMs + (late - transit);
    const n = this.subTicks;
    const ahead = (((this.tickPhase.phase - this.clock.phaseAt(edge)) % n) + n) % n;
    const lead = this.clock.subTickAt(edge) - edge + ahead * this.subMs;
    if (lead < MIN_LEAD_MS || lead > this.subMs + EXTRA_LEAD_MS) {
      this.tickPhase.phase = this.clock.phaseAt(edge + PLAYOUT_MARGIN_MS);
      // Counted by the edge's move (the first placement of a timeline is not a move).
      if (late > this.placedLate) playoutMoves.later++;
      else if (late < this.placedLate) playoutMoves.earlier++;
      this.placedLate = late;
    }
  }

  /** Forget the edge (a new source or timeline starts). */
  reset(): void {
    this.blockLate = this.previousLate = this.placedLate = NaN;
    this.blockPackets = 0;
  }
}
