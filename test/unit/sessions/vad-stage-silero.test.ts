// The VAD stage on Silero (VAD_ENGINE=silero) with real speech: one utterance per sentence, framed
// like the energy VAD's (preroll, mediaMs) although Silero's answers come after the audio went by,
// the agent modes' shorter hangover ends speech sooner with Silero too, stages share one model, and
// a closed stage pushes nothing more.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { SileroModel, toFrames } from '../../../src/media/index.js';
import { AGENT_VAD_HANGOVER_MS, VadProcessor, type Frame } from '../../../src/sessions/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

const { vad } = loadConfig({ VAD_ENGINE: 'silero' });
type Mark = Extract<Frame, { kind: 'vad_start' | 'vad_end' }>;

beforeAll(() => {
  SileroModel.shared(vad.sileroModel).batchMs = 1; // answers within a frame: the test feeds as fast as they come
});

/**
 * Runs `pcm` through a stage as the agent's audio, each frame once the answers for the last are
 * in (as a live call's 20 ms pace allows); returns everything the stage pushed.
 */
async function run(stage: VadProcessor, pcm: Int16Array): Promise<Frame[]> {
  const out: Frame[] = [];
  stage.link((f) => out.push(f));
  for (const [i, f] of toFrames(pcm).entries()) {
    stage.process({ kind: 'audio', party: 'agent', pcm: f, mediaMs: i * 20 });
    await stage.settled();
  }
  expect(out.filter((f) => f.kind === 'audio')).toHaveLength(toFrames(pcm).length); // audio passes through, whatever the detector decides
  return out;
}

const marksOf = (frames: Frame[]): Mark[] => frames.filter((f): f is Mark => f.kind === 'vad_start' || f.kind === 'vad_end');

describe('VadProcessor with Silero', () => {
  it('cuts one utterance per sentence, with a preroll that ends at the last frame pushed', async () => {
    expect(vad.engine).toBe('silero');
    const speech = await synthesizeSpeech('i would like to check my account balance');
    const speechMs = (speech.length * 1000) / 8000;
    const pcm = concatPcm(silence(1000), speech, silence(1500), speech, silence(1500));
    const frames = await run(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel }), pcm);
    const m = marksOf(frames);
    expect(m.map((f) => f.kind)).toEqual(['vad_start', 'vad_end', 'vad_start', 'vad_end']);
    const [start, end] = m;
    if (start?.kind !== 'vad_start' || !end) throw new Error('no utterance');
    // The preroll is the audio from its mediaMs up to the frame pushed just before the mark.
    const before = frames[frames.indexOf(start) - 1];
    expect(before?.kind).toBe('audio');
    expect(start.preroll.at(-1)).toBe(before?.kind === 'audio' ? before.pcm : null);
    expect(start.mediaMs + (start.preroll.length - 1) * 20).toBe(before?.kind === 'audio' ? before.mediaMs : -1);
    // It reaches back before the first syllable, so the recognizer hears the first word.
    const onsetMs = 1000 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    expect(start.mediaMs).toBeLessThan(onsetMs);
    expect(end.mediaMs).toBeGreaterThan(1000 + speechMs - 300);
    expect(end.mediaMs).toBeLessThan(1000 + speechMs + 900);
  }, 60_000);

  it('ends speech sooner with the agent modes’ hangover, still one utterance per sentence', async () => {
    const speech = await synthesizeSpeech('i need help with my order');
    const pcm = concatPcm(silence(800), speech, silence(1500));
    const ends = async (opts: { hangoverMs?: number }): Promise<number[]> =>
      marksOf(await run(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel, ...opts }), pcm))
        .filter((f) => f.kind === 'vad_end')
        .map((f) => f.mediaMs);
    const normal = await ends({});
    const agent = await ends({ hangoverMs: AGENT_VAD_HANGOVER_MS });
    expect(normal).toHaveLength(1);
    expect(agent).toHaveLength(1);
    expect(defined(normal[0], 'end (default hangover)') - defined(agent[0], 'end (agent hangover)')).toBeGreaterThanOrEqual(100);
  }, 60_000);

  it('starts early enough that the preroll holds the first syllable of a short phrase', async () => {
    const speech = await synthesizeSpeech('good morning');
    const onsetMs = 600 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    const m = marksOf(await run(new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel }), concatPcm(silence(600), speech, silence(1200))));
    expect(m.map((f) => f.kind)).toEqual(['vad_start', 'vad_end']);
    expect(defined(m[0], 'vad_start').mediaMs).toBeLessThan(onsetMs - 100);
  }, 60_000);

  it('stages share the process’s one model, and a stage closed with answers pending pushes nothing more', async () => {
    const first = new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel });
    const loads = SileroModel.loadCount();
    const stages = Array.from({ length: 10 }, () => new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel }));
    expect(SileroModel.loadCount()).toBe(loads);
    for (const s of [first, ...stages]) s.close();

    const stage = new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel });
    const speech = await synthesizeSpeech('no thank you');
    const out = await run(stage, concatPcm(silence(400), speech.subarray(0, speech.length / 2)));
    expect(marksOf(out).map((f) => f.kind)).toEqual(['vad_start']);
    expect(stage.speaking('agent')).toBe(true);
    const pushed = out.length;
    // The rest of the phrase and a silence that would end it; the answers are still to come.
    for (const [i, f] of toFrames(concatPcm(speech.subarray(speech.length / 2), silence(1000))).entries()) {
      stage.process({ kind: 'audio', party: 'agent', pcm: f, mediaMs: 10_000 + i * 20 });
    }
    stage.close();
    await SileroModel.shared(vad.sileroModel).settled();
    expect(out).toHaveLength(pushed + toFrames(concatPcm(speech.subarray(speech.length / 2), silence(1000))).length);
    expect(marksOf(out).map((f) => f.kind)).toEqual(['vad_start']);
    stage.close(); // idempotent
  }, 60_000);

  it('flush() ends an open utterance at once and drops the answers still pending for it', async () => {
    const stage = new VadProcessor({ engine: vad.engine, sileroModel: vad.sileroModel });
    const speech = await synthesizeSpeech('please transfer me to billing');
    const out = await run(stage, concatPcm(silence(400), speech.subarray(0, speech.length / 2)));
    for (const f of toFrames(silence(1000))) stage.process({ kind: 'audio', party: 'agent', pcm: f, mediaMs: 20_000 });
    stage.flush(() => 30_000);
    await stage.settled();
    expect(marksOf(out).map((f) => [f.kind, f.mediaMs])).toEqual([
      ['vad_start', expect.any(Number)],
      ['vad_end', 30_000],
    ]);
    stage.close();
  }, 60_000);

  it('a model that cannot be loaded: the stage says so once per party and goes on with the energy VAD', async () => {
    const bad = path.join(os.tmpdir(), `not-a-model-stage-${process.pid}.onnx`);
    writeFileSync(bad, 'not an ONNX model');
    const stage = new VadProcessor({ engine: 'silero', sileroModel: bad });
    const out: Frame[] = [];
    await new Promise<void>((resolve) =>
      stage.link((f) => {
        out.push(f);
        if (out.filter((e) => e.kind === 'error').length === 2) resolve();
      }),
    );
    const errors = out.filter((f) => f.kind === 'error');
    expect(errors.map((e) => (e.kind === 'error' ? e.code : null))).toEqual(['engine_error', 'engine_error']);
    expect(errors[0]?.kind === 'error' ? errors[0].message : '').toMatch(/Silero VAD failed.*energy VAD/);
    const speech = await synthesizeSpeech('good morning');
    for (const [i, f] of toFrames(concatPcm(silence(400), speech, silence(1000))).entries())
      stage.process({ kind: 'audio', party: 'customer', pcm: f, mediaMs: i * 20 });
    expect(marksOf(out).map((f) => f.kind)).toEqual(['vad_start', 'vad_end']);
    stage.close();
  }, 60_000);
});
