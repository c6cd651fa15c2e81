// TimelineTrack: frames land at their timeline position, overlaps are summed and clamped, gaps are
// silence, the file is padded to the call's length, and memory stays one window however long the call.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimelineTrack, WINDOW_SAMPLES } from '../../../src/recordings/index.js';
import { parseWav } from '../../../src/media/index.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-track-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const frame = (v: number) => new Int16Array(160).fill(v);

describe('TimelineTrack', () => {
  it('places frames on the timeline with silence between them and pads to the end', async () => {
    const t = new TimelineTrack(path.join(dir, 'a.wav'));
    t.add(0, frame(100));
    t.add(5000, frame(200)); // 5 s later: far beyond the window
    const { samples } = await t.close(8000);
    expect(samples).toBe(64_000);
    const wav = parseWav(await readFile(path.join(dir, 'a.wav')));
    expect(wav.sampleRate).toBe(8000);
    expect(wav.samples.length).toBe(64_000);
    expect(wav.samples[0]).toBe(100);
    expect(wav.samples[159]).toBe(100);
    expect(wav.samples[160]).toBe(0);
    expect(wav.samples[39_999]).toBe(0);
    expect(wav.samples[40_000]).toBe(200);
    expect(wav.samples[40_159]).toBe(200);
    expect(wav.samples[63_999]).toBe(0);
  });

  it('sums overlapping speech with clamping and drops only what arrives behind the window', async () => {
    const t = new TimelineTrack(path.join(dir, 'b.wav'));
    t.add(1000, frame(30000));
    t.add(1000, frame(10000));
    t.add(1010, frame(-5)); // half overlaps
    t.add(10_000, frame(1)); // pushes the window past 1 s
    t.add(1000, frame(7)); // now behind the window: dropped
    expect(t.lateSamples).toBe(160);
    await t.close(0);
    const wav = parseWav(await readFile(path.join(dir, 'b.wav')));
    expect(wav.samples.length).toBe(80_160); // ends with the last frame (close(0) does not cut)
    expect(wav.samples[8000]).toBe(32767);
    expect(wav.samples[8080]).toBe(32767 - 5);
    expect(wav.samples[8160]).toBe(-5);
  });

  it('writes a 10-minute call to disk as it goes, keeping only the window in memory', async () => {
    const t = new TimelineTrack(path.join(dir, 'c.wav'));
    for (let ms = 0; ms < 600_000; ms += 20) {
      t.add(ms, frame(1));
      // Everything older than the window is already handed to the file writer.
      if (ms > 10_000 && ms % 60_000 === 0) expect(ms * 8 - t.flushedSamples).toBeLessThanOrEqual(WINDOW_SAMPLES);
    }
    const { samples } = await t.close(600_000);
    expect(samples).toBe(600 * 8000);
  }, 60_000);
});
