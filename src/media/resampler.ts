// Streaming PCM16 sample-rate converter: rational L/M polyphase FIR with a Kaiser-windowed
// sinc prototype. The low-pass sits below the lower of the two Nyquist frequencies, so
// downsampling (espeak-ng's 22050 Hz to 8 kHz) does not fold the 4-11 kHz band back into the
// telephone band, and upsampling (8 to 16 kHz) does not leave spectral images.
// State (the last taps-1 input samples and the output phase) carries across push() calls, so
// chunk boundaries are inaudible and a stream resampled in pieces equals the whole.

export interface ResamplerOptions {
  /** Zero crossings of the sinc on each side, at the lower rate (default 16: ~80 dB stopband with beta 8). */
  zeroCrossings?: number;
  /** Passband edge as a fraction of the lower Nyquist frequency (default 0.9). */
  cutoff?: number;
  /** Kaiser window beta (default 8). */
  beta?: number;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Zeroth-order modified Bessel function of the first kind (series), for the Kaiser window. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

export class Resampler {
  readonly up: number; // L
  readonly down: number; // M
  /** Filter taps per phase, in input samples. */
  readonly taps: number;
  private readonly coefs: Float32Array; // [phase][tap], tap j multiplies x[i - j]
  private readonly history: Float32Array; // last taps-1 inputs, oldest first
  private work: Float32Array = new Float32Array(0);
  /** Position of the next output in the upsampled domain, relative to the first new input sample. */
  private phasePos = 0;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
    opts: ResamplerOptions = {},
  ) {
    if (!Number.isInteger(inRate) || !Number.isInteger(outRate) || inRate <= 0 || outRate <= 0) {
      throw new RangeError(`sample rates must be positive integers, got ${inRate} -> ${outRate}`);
    }
    const g = gcd(inRate, outRate);
    this.up = outRate / g;
    this.down = inRate / g;
    const zc = opts.zeroCrossings ?? 16;
    const beta = opts.beta ?? 8;
    const ratio = Math.max(1, inRate / outRate); // longer filter when the cutoff is below the input Nyquist
    this.taps = Math.ceil(2 * zc * ratio);
    const L = this.up;
    const n = this.taps * L;
    // Cutoff in cycles per upsampled sample.
    const fc = ((opts.cutoff ?? 0.9) * 0.5 * Math.min(inRate, outRate)) / (inRate * L);
    const center = (n - 1) / 2;
    const i0beta = besselI0(beta);
    this.coefs = new Float32Array(n);
    for (let m = 0; m < n; m++) {
      const t = m - center;
      const sinc = t === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * t) / (Math.PI * t);
      const r = (2 * m) / (n - 1) - 1;
      const w = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0beta;
      const p = m % L;
      const j = (m - p) / L;
      this.coefs[p * this.taps + j] = sinc * w * L; // L restores the gain lost to zero-stuffing
    }
    this.history = new Float32Array(this.taps - 1);
  }

  /** Group delay of the filter, in output samples. */
  get delay(): number {
    return ((this.taps * this.up - 1) / 2 / this.up) * (this.outRate / this.inRate);
  }

  /** Resamples one chunk; returns the output samples it completes (may be empty). */
  push(input: Int16Array): Int16Array {
    if (this.up === this.down) return input.slice();
    const h = this.history.length;
    const total = h + input.length;
    if (this.work.length < total) this.work = new Float32Array(Math.max(total, this.work.length * 2));
    const x = this.work;
    x.set(this.history, 0);
    for (let i = 0; i < input.length; i++) x[h + i] = input[i] ?? 0;

    const L = this.up;
    const M = this.down;
    const T = this.taps;
    const end = input.length * L; // upsampled positions covered by the new input
    const count = this.phasePos < end ? Math.ceil((end - this.phasePos) / M) : 0;
    const out = new Int16Array(count);
    let k = this.phasePos;
    for (let o = 0; o < count; o++, k += M) {
      const i = Math.floor(k / L); // newest input sample index (relative to the new input)
      const p = k - i * L;
      const base = p * T;
      let acc = 0;
      let xi = h + i; // index of x[i] in the work buffer
      // base + j < up * taps = coefs.length; xi stays within the history + input held in x.
      for (let j = 0; j < T; j++, xi--) acc += (this.coefs[base + j] ?? 0) * (x[xi] ?? 0);
      const s = Math.round(acc);
      out[o] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
    }
    this.phasePos = k - end;
    // Keep the last taps-1 inputs (history + input, oldest first).
    if (h > 0) this.history.set(x.subarray(total - h, total), 0);
    return out;
  }

  /** Pushes enough silence to drain the filter's delay line, returning the tail of the signal. */
  flush(): Int16Array {
    const pad = Math.ceil(this.taps / 2);
    return this.push(new Int16Array(pad));
  }

  /** Clears the history and phase, as if newly built. */
  reset(): void {
    this.history.fill(0);
    this.phasePos = 0;
  }
}

/**
 * Resamples a whole buffer, compensating the filter delay so the output lines up with the input
 * and has round(length * out / in) samples.
 */
export function resample(input: Int16Array, inRate: number, outRate: number, opts?: ResamplerOptions): Int16Array {
  if (inRate === outRate) return input.slice();
  const r = new Resampler(inRate, outRate, opts);
  const head = r.push(input);
  const tail = r.push(new Int16Array(r.taps));
  const all = new Int16Array(head.length + tail.length);
  all.set(head, 0);
  all.set(tail, head.length);
  const skip = Math.round(r.delay);
  const want = Math.round((input.length * outRate) / inRate);
  return all.slice(skip, skip + want);
}
