// Sums two PCM16 frames (e.g. agent + customer for the mixed recording tap) with saturation,
// so loud overlapping speech clips instead of wrapping around into noise.

/** Mixes `a` and `b` into `out` (default: a new array). Lengths may differ; the shorter is treated as padded with silence. */
export function mixFrames(a: Int16Array, b: Int16Array, out?: Int16Array): Int16Array {
  const n = Math.max(a.length, b.length);
  const dst = out ?? new Int16Array(n);
  const shared = Math.min(a.length, b.length);
  // Indexes stay below each array's length (shared, n), so the reads are defined.
  for (let i = 0; i < shared; i++) {
    const s = (a[i] ?? 0) + (b[i] ?? 0);
    dst[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
  }
  const longer = a.length > b.length ? a : b;
  for (let i = shared; i < n; i++) dst[i] = longer[i] ?? 0;
  return dst;
}

/** Scales a frame in place by `gain` (linear), saturating. */
export function applyGain(frame: Int16Array, gain: number): Int16Array {
  for (let i = 0; i < frame.length; i++) {
    const s = Math.round((frame[i] ?? 0) * gain);
    frame[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
  }
  return frame;
}
