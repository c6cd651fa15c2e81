import { describe, expect, it } from 'vitest';
import { applyGain, mixFrames } from '../../../src/media/index.js';

describe('mixFrames', () => {
  it('adds samples', () => {
    expect(Array.from(mixFrames(Int16Array.from([1, -2, 300]), Int16Array.from([10, 20, -300])))).toEqual([11, 18, 0]);
  });

  it('saturates instead of wrapping', () => {
    const out = mixFrames(Int16Array.from([30000, -30000]), Int16Array.from([10000, -10000]));
    expect(Array.from(out)).toEqual([32767, -32768]);
  });

  it('treats the shorter frame as padded with silence and can write into a given buffer', () => {
    const out = new Int16Array(3);
    expect(mixFrames(Int16Array.from([1]), Int16Array.from([1, 2, 3]), out)).toBe(out);
    expect(Array.from(out)).toEqual([2, 2, 3]);
  });

  it('applyGain scales with saturation', () => {
    expect(Array.from(applyGain(Int16Array.from([100, 20000, -20000]), 2))).toEqual([200, 32767, -32768]);
  });
});
