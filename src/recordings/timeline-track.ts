// One recording channel on the session timeline: frames land at their position (ms since the
// session's first audio), overlapping speech is summed (clamped), gaps are silence. Only a short
// window stays in memory; everything older is appended to the WAV file as the call runs, so memory
// per channel is fixed (2 × WINDOW_SAMPLES bytes) however long the call.
import { WavFileWriter } from '../media/index.js';

const SAMPLE_RATE = 8000;
/** 2 s: enough to absorb socket clients sending 100–200 ms chunks and the pacer's output lag. */
export const WINDOW_SAMPLES = 2 * SAMPLE_RATE;

export class TimelineTrack {
  private readonly win = new Int16Array(WINDOW_SAMPLES);
  /** Timeline sample index of win[0]; everything before it is on disk. */
  private base = 0;
  /** One past the last sample holding audio. */
  private high = 0;
  /** Samples that arrived behind the window and were dropped (diagnostics). */
  lateSamples = 0;
  private readonly writer: WavFileWriter;

  constructor(readonly path: string) {
    this.writer = new WavFileWriter(path, SAMPLE_RATE);
  }

  /** Adds `pcm` at `atMs` on the timeline, mixing with what is there. */
  add(atMs: number, pcm: Int16Array): void {
    let at = Math.max(0, Math.round((atMs * SAMPLE_RATE) / 1000));
    let src = pcm;
    if (at < this.base) {
      const skip = this.base - at;
      if (skip >= src.length) {
        this.lateSamples += src.length;
        return;
      }
      this.lateSamples += skip;
      src = src.subarray(skip);
      at = this.base;
    }
    this.advanceTo(at + src.length);
    const off = at - this.base;
    for (let i = 0; i < src.length; i++) {
      const v = (this.win[off + i] ?? 0) + (src[i] ?? 0); // both in range: advanceTo sized the window
      this.win[off + i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    if (at + src.length > this.high) this.high = at + src.length;
  }

  /** Samples handed to the file writer so far (everything before the window). */
  get flushedSamples(): number {
    return this.base;
  }

  /** Timeline length so far, ms. */
  get durationMs(): number {
    return (this.high * 1000) / SAMPLE_RATE;
  }

  /** Pads to `endMs` (the call's length) with silence, writes the rest and closes the file. */
  async close(endMs: number): Promise<{ samples: number }> {
    const end = Math.max(this.high, Math.round((endMs * SAMPLE_RATE) / 1000));
    this.advanceTo(end + WINDOW_SAMPLES); // slides the window to start at `end`: exactly `end` samples are written
    await this.writer.close();
    return { samples: this.writer.samples };
  }

  /** Slides the window so that timeline sample `end` fits, writing what falls out of it. */
  private advanceTo(end: number): void {
    while (end > this.base + WINDOW_SAMPLES) {
      const shift = Math.min(WINDOW_SAMPLES, end - this.base - WINDOW_SAMPLES);
      this.writer.write(this.win.subarray(0, shift));
      this.win.copyWithin(0, shift);
      this.win.fill(0, WINDOW_SAMPLES - shift);
      this.base += shift;
    }
  }
}
