// Frames for code that hands them on: each a view on a shared slab of SLAB_FRAMES frames (5 KB at
// 20 ms). A 320-byte Int16Array of its own gets an off-heap store that V8 allocates and later sweeps,
// ~0.6–0.8 µs (2 µs and more counting the collection, bench in BENCHMARKS.md nineteenth pass); a view
// costs ~20 ns. The RTP path makes one per leg per tick, the socket path one per input frame.
// A frame passed on and kept (a queue, a VAD's pre-roll) keeps its whole slab alive: at most 5 KB,
// for as long as the frame is kept (hundreds of ms in the pipeline).
import { FRAME_SAMPLES } from './constants.js';

const SLAB_FRAMES = 16;

export class FrameSlab {
  private slab = new Int16Array(0);
  private used = SLAB_FRAMES;

  constructor(readonly frameSamples: number = FRAME_SAMPLES) {}

  /** A zeroed frame the caller may keep: no other frame shares its samples. */
  next(): Int16Array {
    if (this.used === SLAB_FRAMES) {
      this.slab = new Int16Array(SLAB_FRAMES * this.frameSamples);
      this.used = 0;
    }
    const at = this.used++ * this.frameSamples;
    return this.slab.subarray(at, at + this.frameSamples);
  }

  /** A new frame holding `samples` (frameSamples of them). */
  copy(samples: Int16Array): Int16Array {
    const frame = this.next();
    frame.set(samples);
    return frame;
  }
}
