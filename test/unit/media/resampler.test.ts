import { describe, expect, it } from 'vitest';
import { Resampler, resample } from '../../../src/media/index.js';
import { tone } from '../../helpers/speech-audio.js';

/** Amplitude (fraction of full scale) of the `freq` component, by correlation over the steady middle. */
function amplitudeAt(x: Int16Array, freq: number, rate: number): number {
  const start = Math.floor(x.length * 0.25);
  const end = Math.floor(x.length * 0.75);
  let re = 0;
  let im = 0;
  for (let i = start; i < end; i++) {
    const w = (2 * Math.PI * freq * i) / rate;
    re += (x[i] ?? 0) * Math.cos(w);
    im += (x[i] ?? 0) * Math.sin(w);
  }
  return (2 * Math.hypot(re, im)) / (end - start) / 32767;
}

const db = (a: number, ref: number) => 20 * Math.log10(a / ref);

describe('Resampler', () => {
  it.each([
    [22050, 8000],
    [16000, 8000],
    [8000, 16000],
    [48000, 8000],
  ])('%i -> %i keeps the length ratio', (inRate, outRate) => {
    const input = tone(440, 1000, 0.5, inRate);
    expect(resample(input, inRate, outRate).length).toBe(outRate);
  });

  it('22050 -> 8000 passes the telephone band and removes what would alias', () => {
    for (const f of [300, 1000, 3000]) {
      const out = resample(tone(f, 500, 0.5, 22050), 22050, 8000);
      expect(Math.abs(db(amplitudeAt(out, f, 8000), 0.5))).toBeLessThan(0.5);
    }
    // 6 kHz would fold to 2 kHz, 9 kHz to 1 kHz: both must be gone (> 60 dB down).
    expect(db(amplitudeAt(resample(tone(6000, 500, 0.5, 22050), 22050, 8000), 2000, 8000), 0.5)).toBeLessThan(-60);
    expect(db(amplitudeAt(resample(tone(9000, 500, 0.5, 22050), 22050, 8000), 1000, 8000), 0.5)).toBeLessThan(-60);
  });

  it('16000 -> 8000 removes the upper band', () => {
    expect(Math.abs(db(amplitudeAt(resample(tone(1000, 500, 0.5, 16000), 16000, 8000), 1000, 8000), 0.5))).toBeLessThan(0.5);
    expect(db(amplitudeAt(resample(tone(5000, 500, 0.5, 16000), 16000, 8000), 3000, 8000), 0.5)).toBeLessThan(-60);
  });

  it('8000 -> 16000 leaves no spectral image', () => {
    const out = resample(tone(1000, 500, 0.5, 8000), 8000, 16000);
    expect(Math.abs(db(amplitudeAt(out, 1000, 16000), 0.5))).toBeLessThan(0.5);
    expect(db(amplitudeAt(out, 7000, 16000), 0.5)).toBeLessThan(-60); // the image of 1 kHz around 8 kHz
  });

  it('streams: chunked pushes produce the same samples as one push', () => {
    const input = tone(700, 300, 0.4, 22050);
    const whole = new Resampler(22050, 8000).push(input);
    const r = new Resampler(22050, 8000);
    const parts: number[] = [];
    let off = 0;
    for (const len of [1, 2, 100, 333, 7, 1024, 50]) {
      parts.push(...r.push(input.subarray(off, off + len)));
      off += len;
    }
    parts.push(...r.push(input.subarray(off)));
    expect(parts).toEqual(Array.from(whole));
  });

  it('resample() compensates the filter delay (output lines up with the input)', () => {
    const input = new Int16Array(8000);
    input[4000] = 30000; // an impulse in the middle
    const out = resample(input, 8000, 16000);
    let peak = 0;
    for (let i = 1; i < out.length; i++) if ((out[i] ?? 0) > (out[peak] ?? 0)) peak = i;
    expect(Math.abs(peak - 8000)).toBeLessThanOrEqual(1);
  });

  it('equal rates copy', () => {
    const x = Int16Array.from([1, 2, 3]);
    expect(Array.from(new Resampler(8000, 8000).push(x))).toEqual([1, 2, 3]);
  });
});
