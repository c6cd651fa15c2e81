// The VAD stage on Silero (VAD_ENGINE=silero) with real speech: one utterance per sentence, framed
// like the energy VAD's (preroll, mediaMs), the agent modes' shorter hangover ends speech sooner with
// Silero too, and closed stages give their models back to the pool.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { SileroVoiceActivityDetector, toFrames } from '../../../src/media/index.js';
import { AGENT_VAD_HANGOVER_MS, VadProcessor, type Frame } from '../../../src/sessions/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';

const { vad } = loadConfig({ VAD_ENGINE: 'silero' });

/** Runs `pcm` through a stage as the agent's audio; returns the VAD marks with their mediaMs. */
function marks(stage: VadProcessor, pcm: Int16Array): Array<Extract<Frame, { kind: 'vad_start' | 'vad_end' }>> {
  const out: Array<Extract<Frame, { kind: 'vad_start' | 'vad_end' }>> = [];
  let audio = 0;
  stage.link((f) => {
    if (f.kind === 'audio') audio++;
    if (f.kind === 'vad_start' || f.kind === 'vad_end') out.push(f);
  });
  toFrames(pcm).forEach((pcm, i) => stage.process({ kind: 'audio', party: 'agent', pcm, mediaMs: i * 20 }));
  expect(audio).toBe(toFrames(pcm).length); // audio passes through, whatever the detector decides
  return out;
}

describe('VadProcessor with Silero', () => {
  it('cuts one utterance per sentence, with a preroll', async () => {
    expect(vad.engine).toBe('silero');
    const speech = await synthesizeSpeech('i would like to check my account balance');
    const speechMs = (speech.length * 1000) / 8000;
    const pcm = concatPcm(silence(1000), speech, silence(1500), speech, silence(1500));
    const m = marks(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel }), pcm);
    expect(m.map((f) => f.kind)).toEqual(['vad_start', 'vad_end', 'vad_start', 'vad_end']);
    const [start, end] = m;
    if (start?.kind !== 'vad_start' || !end) throw new Error('no utterance');
    // The preroll reaches back before the first syllable, so the recognizer hears the first word.
    const onsetMs = 1000 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    expect(start.mediaMs).toBeLessThan(onsetMs);
    expect(end.mediaMs).toBeGreaterThan(1000 + speechMs - 300);
    expect(end.mediaMs).toBeLessThan(1000 + speechMs + 900);
  }, 60_000);

  it('ends speech sooner with the agent modes’ hangover, still one utterance per sentence', async () => {
    const speech = await synthesizeSpeech('i need help with my order');
    const pcm = concatPcm(silence(800), speech, silence(1500));
    const ends = (opts: { hangoverMs?: number }): number[] =>
      marks(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel, ...opts }), pcm)
        .filter((f) => f.kind === 'vad_end')
        .map((f) => f.mediaMs);
    const normal = ends({});
    const agent = ends({ hangoverMs: AGENT_VAD_HANGOVER_MS });
    expect(normal).toHaveLength(1);
    expect(agent).toHaveLength(1);
    expect(normal[0] - agent[0]).toBeGreaterThanOrEqual(100);
  }, 60_000);

  it('starts early enough that the preroll holds the first syllable of a short phrase', async () => {
    // "good morning" is the slowest start seen: its soft "g" takes Silero ~520 ms to confirm.
    const speech = await synthesizeSpeech('good morning');
    const onsetMs = 600 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    const m = marks(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel }), concatPcm(silence(600), speech, silence(1200)));
    expect(m.map((f) => f.kind)).toEqual(['vad_start', 'vad_end']);
    expect(m[0].mediaMs).toBeLessThan(onsetMs - 100);
  }, 60_000);

  it('gives its detectors back to the pool when closed', async () => {
    const stage = new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel, hangoverMs: 460 });
    const m = marks(stage, concatPcm(silence(400), await synthesizeSpeech('no thank you'), silence(1000)));
    expect(m.map((f) => f.kind)).toEqual(['vad_start', 'vad_end']);
    expect(stage.speaking('customer')).toBe(false);
    const before = SileroVoiceActivityDetector.idleCount();
    stage.close();
    expect(SileroVoiceActivityDetector.idleCount()).toBe(before + 2); // the agent's and the customer's
    stage.close();
    expect(SileroVoiceActivityDetector.idleCount()).toBe(before + 2);
    const next = new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel, hangoverMs: 460 });
    expect(SileroVoiceActivityDetector.idleCount()).toBe(before); // taken from the pool, not loaded again
    next.close();
  }, 60_000);
});
