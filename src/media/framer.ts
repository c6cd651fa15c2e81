// Cuts a PCM16 stream arriving in chunks of any length (socket messages, TTS output,
// resampler blocks) into exact 20 ms frames, the unit the whole pipeline works in.
import { FRAME_SAMPLES } from './constants.js';
import { FrameSlab } from './frame-slab.js';

export type FrameSink = (frame: Int16Array) => void;

export class Framer {
  private readonly pending: Int16Array;
  private readonly frames: FrameSlab;
  private filled = 0;

  /**
   * @param onFrame receives each complete frame. Every frame is its own the sink may keep (frames are
   *   queued downstream, so reusing one buffer would corrupt queued audio): a view on a slab (frame-slab.ts).
   */
  constructor(
    private readonly onFrame: FrameSink,
    readonly frameSamples: number = FRAME_SAMPLES,
  ) {
    this.pending = new Int16Array(frameSamples);
    this.frames = new FrameSlab(frameSamples);
  }

  /** Samples held back, waiting for the rest of their frame. */
  get buffered(): number {
    return this.filled;
  }

  push(chunk: Int16Array): void {
    const size = this.frameSamples;
    let offset = 0;
    if (this.filled > 0) {
      const take = Math.min(size - this.filled, chunk.length);
      this.pending.set(chunk.subarray(0, take), this.filled);
      this.filled += take;
      offset = take;
      if (this.filled < size) return;
      this.onFrame(this.frames.copy(this.pending));
      this.filled = 0;
    }
    while (chunk.length - offset >= size) {
      this.onFrame(this.frames.copy(chunk.subarray(offset, offset + size)));
      offset += size;
    }
    if (offset < chunk.length) {
      this.pending.set(chunk.subarray(offset), 0);
      this.filled = chunk.length - offset;
    }
  }

  /** Emits the held-back tail padded with silence (no-op when nothing is held). */
  flush(): void {
    if (this.filled === 0) return;
    this.pending.fill(0, this.filled);
    this.onFrame(this.frames.copy(this.pending));
    this.filled = 0;
  }

  /** Drops the held-back tail (barge-in: stale audio must not leak into the next prompt). */
  reset(): void {
    this.filled = 0;
  }
}

/** Splits a whole buffer into frames at once (the last one padded with silence). */
export function toFrames(pcm: Int16Array, frameSamples: number = FRAME_SAMPLES): Int16Array[] {
  const frames: Int16Array[] = [];
  const framer = new Framer((f) => frames.push(f), frameSamples);
  framer.push(pcm);
  framer.flush();
  return frames;
}
