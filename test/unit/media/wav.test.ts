import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WavFileWriter, encodeWav, parseWav } from '../../../src/media/index.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-wav-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('WavFileWriter', () => {
  it('streams frames to disk and fixes the header sizes on close', async () => {
    const file = path.join(dir, 'a.wav');
    const w = new WavFileWriter(file, 8000);
    const frame = new Int16Array(160);
    for (let i = 0; i < 50; i++) {
      frame.fill(i * 10); // the writer copies: reusing the caller's buffer is safe
      w.write(frame);
    }
    await w.close();
    await w.close(); // idempotent
    const buf = await readFile(file);
    expect(buf.length).toBe(44 + 50 * 320);
    expect(buf.readUInt32LE(4)).toBe(36 + 50 * 320);
    expect(buf.readUInt32LE(40)).toBe(50 * 320);
    const wav = parseWav(buf);
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 1, bitsPerSample: 16 });
    expect(wav.samples.length).toBe(8000);
    expect(wav.samples[0]).toBe(0);
    expect(wav.samples[49 * 160 + 5]).toBe(490);
    expect(w.durationMs).toBe(1000);
  });

  it('writes a valid empty file when nothing was written', async () => {
    const file = path.join(dir, 'empty.wav');
    const w = new WavFileWriter(file);
    await w.close();
    expect((await stat(file)).size).toBe(44);
    expect(parseWav(await readFile(file)).samples.length).toBe(0);
  });

  it('refuses writes after close', async () => {
    const w = new WavFileWriter(path.join(dir, 'c.wav'));
    await w.close();
    expect(() => w.write(new Int16Array(160))).toThrow(/after close/);
  });

  it('reports a write failure from close()', async () => {
    const w = new WavFileWriter(path.join(dir, 'missing-dir', 'x.wav'));
    w.write(new Int16Array(160));
    await expect(w.close()).rejects.toThrow();
  });
});

describe('parseWav', () => {
  it('round-trips encodeWav', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768]);
    const wav = parseWav(encodeWav(samples, 22050));
    expect(wav.sampleRate).toBe(22050);
    expect(Array.from(wav.samples)).toEqual(Array.from(samples));
  });

  it('skips unknown chunks and tolerates streaming placeholder sizes', () => {
    const base = encodeWav(Int16Array.from([5, 6, 7]), 8000);
    const list = Buffer.from('LIST\x04\x00\x00\x00abcd', 'latin1');
    const buf = Buffer.concat([base.subarray(0, 36), list, base.subarray(36)]);
    buf.writeUInt32LE(0x7ffff000, 36 + list.length + 4); // data size as espeak-ng --stdout writes it
    expect(Array.from(parseWav(buf).samples)).toEqual([5, 6, 7]);
  });

  it('rejects what it cannot read', () => {
    expect(() => parseWav(Buffer.from('nope'))).toThrow(/RIFF/);
    const eightBit = encodeWav(Int16Array.from([1]), 8000);
    eightBit.writeUInt16LE(8, 34);
    expect(() => parseWav(eightBit)).toThrow(/PCM16/);
  });
});
