// The Silero VAD (sherpa-onnx-node, the real model fetched by scripts/fetch-vad-model.sh) on
// generated speech and noise, and the same audio through the energy VAD for contrast.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/index.js';
import { SileroVoiceActivityDetector, toFrames, VoiceActivityDetector } from '../../../src/media/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';

const MODEL = path.join(packageRoot, '.voxbridge/models/silero-vad/silero_vad.onnx');

function transitions(d: { process(f: Int16Array): 'start' | 'end' | null }, pcm: Int16Array): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  toFrames(pcm).forEach((f, i) => {
    const t = d.process(f);
    if (t) out.push([t, (i + 1) * 20]);
  });
  return out;
}

/** Deterministic white noise at about -30 dBFS. */
function noise(ms: number): Int16Array {
  let seed = 7;
  const out = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * 1800);
  }
  return out;
}

describe('SileroVoiceActivityDetector', () => {
  it('finds each utterance once, with a preroll, and ends soon after the speech', async () => {
    const speech = await synthesizeSpeech('i would like to check my account balance');
    const pcm = concatPcm(silence(1000), speech, silence(1500), speech, silence(1500));
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    let preroll = 0;
    vad.on('start', (e) => {
      preroll = e.preroll.length;
    });
    const t = transitions(vad, pcm);
    expect(t.map(([k]) => k)).toEqual(['start', 'end', 'start', 'end']);
    expect(preroll).toBeGreaterThan(10);
    const speechMs = (speech.length * 1000) / 8000;
    expect(t[0][1]).toBeGreaterThan(1000);
    expect(t[1][1]).toBeGreaterThan(1000 + speechMs - 300);
    expect(t[1][1]).toBeLessThan(1000 + speechMs + 900);
    expect(vad.speaking).toBe(false);
  }, 60_000);

  it('does not start on noise that begins mid-call, where the energy VAD does', () => {
    const pcm = concatPcm(silence(2000), noise(1000), silence(1000), noise(1000));
    expect(transitions(new SileroVoiceActivityDetector({ model: MODEL }), pcm)).toEqual([]);
    expect(transitions(new VoiceActivityDetector(), pcm).filter(([k]) => k === 'start').length).toBeGreaterThan(0);
  });

  it('release() pools the model: the next detector reuses it, reset, with the same results as a new one', async () => {
    const speech = await synthesizeSpeech('thank you very much');
    const pcm = concatPcm(silence(500), speech, silence(1200));
    const fresh = transitions(new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 }), pcm);
    expect(fresh.map(([k]) => k)).toEqual(['start', 'end']);
    const first = new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 });
    transitions(first, concatPcm(silence(500), speech.subarray(0, Math.floor(speech.length / 2)))); // released mid-utterance
    const before = SileroVoiceActivityDetector.idleCount();
    first.release();
    expect(SileroVoiceActivityDetector.idleCount()).toBe(before + 1);
    expect(() => first.process(new Int16Array(160))).toThrow(/after release/);
    const reused = new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 });
    expect(SileroVoiceActivityDetector.idleCount()).toBe(before);
    expect(transitions(reused, pcm)).toEqual(fresh);
  }, 60_000);

  it('reset() ends an open utterance and reports it', async () => {
    const speech = await synthesizeSpeech('thank you very much');
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const t = transitions(vad, concatPcm(silence(500), speech.subarray(0, Math.floor(speech.length * 0.7))));
    expect(t.map(([k]) => k)).toEqual(['start']);
    expect(vad.reset()).toBe(true);
    expect(vad.reset()).toBe(false);
  }, 60_000);
});
