import { describe, expect, it } from 'vitest';
import { frameLevelDb, toFrames } from '../../../src/media/index.js';
import { EspeakTts } from '../../../src/speech/index.js';

const speechMs = (pcm: Int16Array) => (pcm.length / 8000) * 1000;

describe('EspeakTts (embedded)', () => {
  it('lists ISO 639-1 languages', async () => {
    const tts = await EspeakTts.create({ timeoutMs: 10_000 });
    expect(tts.languages()).toEqual(expect.arrayContaining(['en', 'es', 'fr', 'de']));
    expect(tts.languages().every((l) => /^[a-z]{2}$/.test(l))).toBe(true);
  });

  it('returns 8 kHz audio of plausible length, and speed changes the length', async () => {
    const tts = await EspeakTts.create({ timeoutMs: 10_000 });
    const text = 'Thank you for calling. How can I help you today?';
    const t0 = performance.now();
    const normal = await tts.synthesize(text, 'en', {});
    const ms = performance.now() - t0;
    // 10 words at 175 wpm is about 3.4 s of speech.
    expect(speechMs(normal)).toBeGreaterThan(2000);
    expect(speechMs(normal)).toBeLessThan(6000);
    const loud = toFrames(normal).filter((f) => frameLevelDb(f) > -40).length;
    expect(loud).toBeGreaterThan(50); // it is speech, not silence
    const fast = await tts.synthesize(text, 'en', { speed: 2 });
    const slow = await tts.synthesize(text, 'en', { speed: 0.5 });
    expect(speechMs(fast)).toBeLessThan(speechMs(normal) * 0.75);
    expect(speechMs(slow)).toBeGreaterThan(speechMs(normal) * 1.4);
    console.log(`[measure] espeak-ng one sentence (${speechMs(normal).toFixed(0)} ms of audio): ${ms.toFixed(0)} ms incl. resampling to 8 kHz`);
  }, 30_000);

  it('speaks Spanish, honours an espeak voice_id and ignores stability/similarity_boost', async () => {
    const tts = await EspeakTts.create({ timeoutMs: 10_000 });
    const base = await tts.synthesize('Hola, ¿en qué puedo ayudarle?', 'es', {});
    const variant = await tts.synthesize('Hola, ¿en qué puedo ayudarle?', 'es', { voice_id: 'es+f3', stability: 0.2, similarity_boost: 0.9 });
    expect(speechMs(base)).toBeGreaterThan(1000);
    expect(speechMs(variant)).toBeGreaterThan(1000);
    expect(Buffer.from(variant.buffer).equals(Buffer.from(base.buffer))).toBe(false); // a different voice
    // A cloud voice id espeak does not know falls back to the language's voice.
    const fallback = await tts.synthesize('Hola, ¿en qué puedo ayudarle?', 'es', { voice_id: '21m00Tcm4TlvDq8ikWAM' });
    expect(Array.from(fallback)).toEqual(Array.from(base));
  }, 30_000);

  it('passes text safely and refuses unknown languages', async () => {
    const tts = await EspeakTts.create({ timeoutMs: 10_000 });
    expect((await tts.synthesize('--help $(id)', 'en', {})).length).toBeGreaterThan(1000);
    expect((await tts.synthesize('  ', 'en', {})).length).toBe(0);
    await expect(tts.synthesize('hello', 'xx', {})).rejects.toMatchObject({ code: 'tts_unsupported' });
  }, 30_000);
});
