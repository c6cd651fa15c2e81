import { describe, expect, it } from 'vitest';
import { Framer, toFrames, FRAME_SAMPLES } from '../../../src/media/index.js';
import { defined } from '../../helpers/defined.js';

const ramp = (from: number, n: number) => Int16Array.from({ length: n }, (_, i) => from + i);

describe('Framer', () => {
  it('emits exact 160-sample frames from chunks of any length, in order', () => {
    const frames: Int16Array[] = [];
    const framer = new Framer((f) => frames.push(f));
    let next = 0;
    for (const len of [1, 159, 0, 161, 319, 480, 7, 33]) {
      framer.push(ramp(next, len));
      next += len;
    }
    expect(frames.every((f) => f.length === FRAME_SAMPLES)).toBe(true);
    expect(frames.length).toBe(Math.floor(next / 160));
    expect(framer.buffered).toBe(next % 160);
    const joined = frames.flatMap((f) => Array.from(f));
    expect(joined).toEqual(Array.from(ramp(0, frames.length * 160)));
  });

  it('emits nothing until a frame is complete', () => {
    const frames: Int16Array[] = [];
    const framer = new Framer((f) => frames.push(f));
    framer.push(ramp(0, 159));
    expect(frames).toHaveLength(0);
    framer.push(ramp(159, 1));
    expect(frames).toHaveLength(1);
    expect(framer.buffered).toBe(0);
  });

  it('hands out frames the sink may keep (not a reused buffer)', () => {
    const frames: Int16Array[] = [];
    const framer = new Framer((f) => frames.push(f));
    framer.push(ramp(0, 100));
    framer.push(ramp(100, 100)); // completes frame 1 from the pending buffer
    framer.push(ramp(200, 120)); // completes frame 2 from the pending buffer
    expect(defined(frames[0], 'frame 0')[0]).toBe(0);
    expect(defined(frames[1], 'frame 1')[0]).toBe(160);
    // Forty more frames, through several slabs: each still holds its own samples, and writing one leaves the rest.
    framer.push(ramp(320, 40 * 160));
    expect(frames.flatMap((f) => Array.from(f))).toEqual(Array.from(ramp(0, frames.length * 160)));
    defined(frames[20], 'frame 20').fill(0);
    expect(defined(frames[19], 'frame 19').at(-1)).toBe(20 * 160 - 1);
    expect(defined(frames[21], 'frame 21')[0]).toBe(21 * 160);
  });

  it('flush pads the tail with silence and is a no-op when empty', () => {
    const frames: Int16Array[] = [];
    const framer = new Framer((f) => frames.push(f));
    framer.push(Int16Array.from({ length: 170 }, () => 1000));
    framer.flush();
    expect(frames).toHaveLength(2);
    const last = defined(frames[1], 'frame 1');
    expect(Array.from(last.subarray(0, 10))).toEqual(new Array(10).fill(1000));
    expect(last.subarray(10).every((s) => s === 0)).toBe(true);
    framer.flush();
    expect(frames).toHaveLength(2);
  });

  it('reset drops the pending tail', () => {
    const frames: Int16Array[] = [];
    const framer = new Framer((f) => frames.push(f));
    framer.push(ramp(1, 50));
    framer.reset();
    framer.flush();
    expect(frames).toHaveLength(0);
  });

  it('toFrames splits a buffer', () => {
    expect(toFrames(new Int16Array(321)).map((f) => f.length)).toEqual([160, 160, 160]);
  });
});
