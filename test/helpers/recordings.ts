// Helpers for recording and analysis tests: decode MP3s back to PCM with lame, transcribe PCM with
// the embedded recognizer, turn recording on for a session row, poll a condition.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseWav } from '../../src/media/index.js';
import type { SttEngine } from '../../src/speech/index.js';
import type { Db } from '../../src/store/index.js';

const run = promisify(execFile);

/** MP3 bytes → PCM16 (lame --decode), with the decoded stream's sample rate. */
export async function decodeMp3(mp3: Uint8Array): Promise<{ sampleRate: number; pcm: Int16Array }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vb-mp3-'));
  try {
    await writeFile(path.join(dir, 'in.mp3'), mp3);
    await run('lame', ['--quiet', '--decode', path.join(dir, 'in.mp3'), path.join(dir, 'out.wav')]);
    const wav = parseWav(await readFile(path.join(dir, 'out.wav')));
    return { sampleRate: wav.sampleRate, pcm: wav.samples };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One utterance through the recognizer: the text it hears in `pcm` (8 kHz). */
export function transcribePcm(stt: SttEngine, pcm: Int16Array, language = 'en', timeoutMs = 100_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = stt.openStream({ language });
    const timer = setTimeout(() => {
      s.close();
      reject(new Error('no final from the recognizer'));
    }, timeoutMs);
    s.once('final', (f) => {
      clearTimeout(timer);
      s.close();
      resolve(f.text);
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      s.close();
      reject(new Error(e.message));
    });
    for (let off = 0; off + 160 <= pcm.length; off += 160) s.write(pcm.subarray(off, off + 160));
    s.endUtterance();
  });
}

/** RMS level of `pcm` between two times (ms). */
export function rms(pcm: Int16Array, fromMs: number, toMs: number, rate = 8000): number {
  const a = Math.max(0, Math.floor((fromMs * rate) / 1000));
  const b = Math.min(pcm.length, Math.floor((toMs * rate) / 1000));
  let sum = 0;
  for (let i = a; i < b; i++) sum += (pcm[i] ?? 0) * (pcm[i] ?? 0);
  return b > a ? Math.sqrt(sum / (b - a)) : 0;
}

/** Start (ms) of the first 20 ms of `pcm` louder than `level` RMS; throws when none is. */
export function firstLoudMs(pcm: Int16Array, level: number, rate = 8000): number {
  const step = (rate * 20) / 1000;
  for (let off = 0; off + step <= pcm.length; off += step) {
    const ms = (off * 1000) / rate;
    if (rms(pcm, ms, ms + 20, rate) > level) return ms;
  }
  throw new Error(`no 20 ms of the recording is louder than ${level} RMS`);
}

export async function enableRecording(db: Db, sessionId: string, recording: Record<string, unknown> = {}): Promise<void> {
  await db.query('UPDATE sessions SET recording = $2 WHERE id = $1', [
    sessionId,
    { enabled: true, mode: 'dual_channel', consent_required: false, consent_status: 'not_required', ...recording },
  ]);
}

/** Polls `check` until it returns a value (not undefined/null/false) or the deadline passes. */
export async function pollUntil<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 60_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
