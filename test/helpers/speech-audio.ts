// Speech fixtures generated at test time (never committed): espeak-ng or flite -> sox -> 8 kHz
// PCM16 mono, cached in os.tmpdir() by a hash of (voice, text, version) so repeated runs are fast.
//
// Phrases the embedded pocketsphinx decoder (vb-sphinx-decoder: hub4wsj_sc_8k + en-us.lm.bin +
// cmudict-en-us, default search settings) returns for the FIRST utterance of a stream (the
// model's initial cepstral mean; later utterances of the same stream use the mean adapted to
// that caller and can come out better), measured with 300 ms of silence around each phrase:
//
//   flite voice (use this for recognition tests)
//     "good morning"                                -> "good morning"
//     "i need help with my order"                   -> "i need help with my order"
//     "i would like to check my account balance"    -> "i would like to check my account balance"
//     "thank you very much"                         -> "thank you very much"
//     "no thank you"                                -> "no thank you"
//     "my name is john smith"                       -> "my name is gone to" (first utterance; "... john smith" once adapted)
//     "hello world"                                 -> "all world" (only "world" is reliable)
//     "one two three four five"                     -> "blonde two three four five"
//     "what time is it"                             -> "in all time is it"
//     "please transfer me to billing"               -> "please try and for me to a building"
//     "yes"                                         -> "that" (single words are unreliable)
//   espeak-ng voice (en-us): mostly NOT recognized by the 8 kHz model ("good morning" -> "do art and",
//     "hello world" -> "that will"); fine for VAD, TTS and length tests, not for asserting words.
//
// Tests should assert key words (e.g. /account/ and /balance/), not the exact text.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { mulawEncode } from '../../src/media/index.js';

const run = promisify(execFile);
const CACHE_DIR = path.join(os.tmpdir(), 'voxbridge-speech-fixtures');
const CACHE_VERSION = 1;

export type Synthesizer = 'espeak' | 'flite';

export interface SynthesizeOptions {
  voice?: Synthesizer;
  /** Silence added before and after the speech, in ms (default 0). */
  padMs?: number;
}

/** Speech for `text` as 8 kHz PCM16 mono (flite by default: the STT model understands it best). */
export async function synthesizeSpeech(text: string, opts: SynthesizeOptions = {}): Promise<Int16Array> {
  const voice = opts.voice ?? 'flite';
  const key = createHash('sha256').update(`${CACHE_VERSION}\0${voice}\0${text}`).digest('hex').slice(0, 32);
  const cached = path.join(CACHE_DIR, `${key}.s16`);
  let pcm: Int16Array;
  try {
    pcm = toInt16(await readFile(cached));
  } catch {
    pcm = await render(text, voice, key);
    await mkdir(CACHE_DIR, { recursive: true });
    const tmp = `${cached}.${process.pid}.${Date.now()}`;
    await writeFile(tmp, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    await rename(tmp, cached); // atomic: parallel test files never read a half-written fixture
  }
  const pad = opts.padMs ? silence(opts.padMs) : null;
  return pad ? concatPcm(pad, pcm, pad) : pcm;
}

async function render(text: string, voice: Synthesizer, key: string): Promise<Int16Array> {
  await mkdir(CACHE_DIR, { recursive: true });
  const wav = path.join(CACHE_DIR, `${key}.${process.pid}.src.wav`);
  const raw = path.join(CACHE_DIR, `${key}.${process.pid}.raw`);
  try {
    // Arguments go straight to execve: no shell, so any text is safe.
    if (voice === 'flite') await run('flite', ['-t', text, '-o', wav]);
    else await run('espeak-ng', ['-v', 'en-us', '-w', wav, text]);
    await run('sox', [wav, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw]);
    return toInt16(await readFile(raw));
  } finally {
    await rm(wav, { force: true });
    await rm(raw, { force: true });
  }
}

function toInt16(buf: Buffer): Int16Array {
  const out = new Int16Array(buf.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

/** `ms` of digital silence at 8 kHz. */
export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round((ms * 8000) / 1000));
}

/** PCM16 8 kHz to G.711 mu-law bytes, as the WebSocket carries it. */
export function toMulaw(pcm: Int16Array): Uint8Array {
  return mulawEncode(pcm);
}

export function concatPcm(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** A sine tone at 8 kHz (or `rate`), amplitude in [0, 1] of full scale. */
export function tone(freqHz: number, ms: number, amplitude = 0.5, rate = 8000): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * freqHz * i) / rate));
  return out;
}
