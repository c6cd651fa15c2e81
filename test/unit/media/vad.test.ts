import { describe, expect, it } from 'vitest';
import { VoiceActivityDetector, toFrames, frameLevelDb } from '../../../src/media/index.js';
import { concatPcm, silence, synthesizeSpeech, tone } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

/** Adds deterministic white noise at `levelDb` dBFS (RMS). */
function withNoise(x: Int16Array, levelDb: number, seed = 1): Int16Array {
  const amp = 32768 * 10 ** (levelDb / 20) * Math.sqrt(3); // uniform [-a, a] has RMS a/sqrt(3)
  let s = seed;
  const out = new Int16Array(x.length);
  for (let i = 0; i < x.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const n = ((s / 0x7fffffff) * 2 - 1) * amp;
    out[i] = Math.max(-32768, Math.min(32767, Math.round((x[i] ?? 0) + n)));
  }
  return out;
}

function run(vad: VoiceActivityDetector, pcm: Int16Array): Array<{ at: number; what: 'start' | 'end' }> {
  const events: Array<{ at: number; what: 'start' | 'end' }> = [];
  toFrames(pcm).forEach((f, i) => {
    const t = vad.process(f);
    if (t) events.push({ at: i * 20, what: t });
  });
  return events;
}

describe('VoiceActivityDetector', () => {
  it('measures frame level in dBFS', () => {
    expect(frameLevelDb(new Int16Array(160))).toBe(-96);
    expect(frameLevelDb(tone(1000, 20, 1))).toBeCloseTo(-3, 0);
  });

  it.each(['espeak', 'flite'] as const)('finds one utterance in %s speech between silences', async (voice) => {
    const speech = await synthesizeSpeech('i would like to check my account balance please', { voice });
    const pcm = concatPcm(silence(1000), speech, silence(1500));
    const vad = new VoiceActivityDetector();
    const events = run(vad, pcm);
    expect(events.map((e) => e.what)).toEqual(['start', 'end']);
    const speechMs = (speech.length / 8000) * 1000;
    expect(defined(events[0], 'start').at).toBeGreaterThanOrEqual(900);
    expect(defined(events[0], 'start').at).toBeLessThan(1300);
    // Ends after the hangover (560 ms) following the last word, not in the pauses between words.
    expect(defined(events[1], 'end').at).toBeGreaterThan(1000 + speechMs - 300);
    expect(defined(events[1], 'end').at).toBeLessThan(1000 + speechMs + 800);
  });

  it('works on a noisy line (speech 20+ dB above the noise)', async () => {
    const speech = await synthesizeSpeech('good morning how are you today', { voice: 'espeak' });
    const pcm = withNoise(concatPcm(silence(2000), speech, silence(1500)), -45);
    const events = run(new VoiceActivityDetector(), pcm);
    expect(events.map((e) => e.what)).toEqual(['start', 'end']);
    expect(defined(events[0], 'start').at).toBeGreaterThan(1800);
  });

  it('separates two utterances with a long pause and keeps short pauses inside one', async () => {
    // flite leaves ~120 ms of quiet after "good morning" and ~320 ms before "thank you": back to back
    // they make a ~450 ms pause, under the 560 ms hangover.
    const a = await synthesizeSpeech('good morning', { voice: 'flite' });
    const b = await synthesizeSpeech('thank you very much', { voice: 'flite' });
    expect(run(new VoiceActivityDetector(), concatPcm(silence(500), a, silence(1200), b, silence(1000))).map((e) => e.what)).toEqual([
      'start',
      'end',
      'start',
      'end',
    ]);
    expect(run(new VoiceActivityDetector(), concatPcm(silence(500), a, b, silence(1000))).map((e) => e.what)).toEqual(['start', 'end']);
  });

  it('emits start with a preroll holding the onset, and end', async () => {
    const vad = new VoiceActivityDetector({ prerollFrames: 5 });
    const seen: string[] = [];
    let prerollFrames = 0;
    vad.on('start', ({ preroll }) => {
      seen.push('start');
      prerollFrames = preroll.length;
    });
    vad.on('end', () => seen.push('end'));
    run(vad, concatPcm(silence(1000), tone(500, 600, 0.3), silence(1000)));
    expect(seen).toEqual(['start', 'end']);
    expect(prerollFrames).toBe(5 + 3); // preroll + the voiced frames that triggered the start
  });

  it('honours the configured hangover', () => {
    const pcm = concatPcm(silence(500), tone(500, 600, 0.3), silence(2000));
    const short = run(new VoiceActivityDetector({ hangoverMs: 200 }), pcm);
    const long = run(new VoiceActivityDetector({ hangoverMs: 1000 }), pcm);
    expect(defined(short[1], 'end').at - 1100).toBeGreaterThanOrEqual(180);
    expect(defined(short[1], 'end').at - 1100).toBeLessThanOrEqual(240);
    expect(defined(long[1], 'end').at - 1100).toBeGreaterThanOrEqual(980);
    expect(defined(long[1], 'end').at - 1100).toBeLessThanOrEqual(1040);
  });

  it('ignores silence and low steady noise, and absorbs a steady noise that jumps up', () => {
    expect(run(new VoiceActivityDetector(), silence(3000))).toEqual([]);
    expect(run(new VoiceActivityDetector(), withNoise(silence(3000), -55))).toEqual([]);
    // Noise jumping from -60 to -30 dBFS first reads as speech, then the floor catches up and it ends.
    const vad = new VoiceActivityDetector();
    const events = run(vad, concatPcm(withNoise(silence(1000), -60), withNoise(silence(20000), -30, 7)));
    expect(events.map((e) => e.what)).toEqual(['start', 'end']);
    expect(vad.speaking).toBe(false);
  });

  it('reset closes an open utterance', () => {
    const vad = new VoiceActivityDetector();
    run(vad, concatPcm(silence(200), tone(500, 300, 0.3)));
    expect(vad.speaking).toBe(true);
    expect(vad.reset()).toBe(true);
    expect(vad.speaking).toBe(false);
    expect(vad.reset()).toBe(false);
  });
});
