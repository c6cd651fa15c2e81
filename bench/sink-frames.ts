// The frames a bench's sink (a phone's RTP socket, a client's socket) received in a measured window, by
// stream position, so what is missing is what the stream skipped: a window of T s holds T × 50 of the
// gateway's frames give or take one, by where its clock's phase falls, and counting against the window's
// length alone read that one frame as loss (0.2 % at 10 s, 0.4 % at 5 s).
import { FRAME_MS } from '../src/media/index.js';

export class SinkFrames {
  /** Frames noted since the last reset. */
  count = 0;
  private first = NaN;
  private last = NaN;

  /** A frame at stream position `pos`, in frames (`audio.output`'s `timestamp_ms` / 20, say). */
  note(pos: number): void {
    this.count++;
    if (Number.isNaN(this.first)) this.first = pos;
    if (!(pos <= this.last)) this.last = pos;
  }

  /** An `audio.output` frame by its `timestamp_ms`. */
  noteTimestampMs(ms: number): void {
    this.note(ms / FRAME_MS);
  }

  /** An RTP packet's sequence number, extended past its 16-bit wrap from the last one seen (RFC 3550 A.1). */
  noteRtpSequence(seq: number): void {
    this.note(Number.isNaN(this.last) ? seq : this.last + (((seq - this.last) << 16) >> 16));
  }

  /** Positions skipped between the first and the last frame noted. */
  get gaps(): number {
    return Number.isNaN(this.first) ? 0 : Math.max(0, this.last - this.first + 1 - this.count);
  }

  reset(): void {
    this.count = 0;
    this.first = NaN;
    this.last = NaN;
  }
}

/**
 * Frames the sinks are short of `expected` (one per 20 ms per stream): the gaps inside their streams, or
 * what the window's length says beyond one frame per stream (a sink that stopped early), whichever is more.
 */
export function framesShort(sinks: readonly SinkFrames[], expected: number): number {
  const gaps = sinks.reduce((a, s) => a + s.gaps, 0);
  const received = sinks.reduce((a, s) => a + s.count, 0);
  return Math.max(0, gaps, expected - sinks.length - received);
}
