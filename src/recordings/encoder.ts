// WAV → MP3 with Debian's `lame` (8 kHz mono, constant bitrate: telephone-band speech).
import { execFile } from 'node:child_process';
import { open, stat } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const WAV_HEADER_BYTES = 44;

export interface WavInfo {
  samples: number;
  durationSeconds: number;
}

/**
 * Makes the WAV's RIFF and data sizes match the bytes on disk. A node that died mid-call leaves the
 * provisional header (sizes 0); the audio written so far is still there and worth encoding.
 */
export async function repairWavHeader(path: string): Promise<WavInfo> {
  const size = (await stat(path)).size;
  const dataBytes = Math.max(0, (size - WAV_HEADER_BYTES) & ~1);
  const fh = await open(path, 'r+');
  try {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(36 + dataBytes);
    await fh.write(b, 0, 4, 4);
    b.writeUInt32LE(dataBytes);
    await fh.write(b, 0, 4, 40);
  } finally {
    await fh.close();
  }
  return { samples: dataBytes / 2, durationSeconds: dataBytes / 2 / 8000 };
}

export async function wavInfo(path: string): Promise<WavInfo> {
  const size = (await stat(path)).size;
  const samples = Math.max(0, (size - WAV_HEADER_BYTES) >> 1);
  return { samples, durationSeconds: samples / 8000 };
}

/** Encodes `wav` (PCM16 mono 8 kHz) to `mp3`; rejects with lame's stderr on failure. */
export async function encodeMp3(wav: string, mp3: string, bitrateKbps: number, timeoutMs = 120_000): Promise<void> {
  try {
    await run('lame', ['--quiet', '-m', 'm', '--resample', '8', '-b', String(bitrateKbps), wav, mp3], { timeout: timeoutMs });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`lame failed: ${(e.stderr || e.message).trim().slice(0, 300)}`);
  }
}
