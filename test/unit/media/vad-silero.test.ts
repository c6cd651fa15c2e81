// The Silero VAD (onnxruntime-node in a worker thread, the real model fetched by
// scripts/fetch-vad-model.sh) on generated speech and noise: one shared model for every stream,
// state kept per stream, answers of closed or reset streams dropped, and the energy VAD on the same
// audio for contrast.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/index.js';
import { SileroModel, SileroVoiceActivityDetector, toFrames, VoiceActivityDetector } from '../../../src/media/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

const MODEL = path.join(packageRoot, '.voxbridge/models/silero-vad/silero_vad.onnx');

type Mark = [kind: 'start' | 'end', atMs: number];

function record(vad: SileroVoiceActivityDetector): { marks: Mark[]; prerolls: number[] } {
  const out = { marks: [] as Mark[], prerolls: [] as number[] };
  vad.on('start', (e) => {
    out.marks.push(['start', e.atMs]);
    out.prerolls.push(e.preroll.length);
  });
  vad.on('end', (e) => out.marks.push(['end', e.atMs]));
  return out;
}

/** Feeds `pcm` frame by frame as a live call would, each frame after the answers for the last. */
async function feed(vad: SileroVoiceActivityDetector, pcm: Int16Array): Promise<void> {
  for (const f of toFrames(pcm)) {
    vad.process(f);
    await vad.settled();
  }
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

let speech: Int16Array;
beforeAll(async () => {
  speech = await synthesizeSpeech('i would like to check my account balance');
  SileroModel.shared(MODEL).batchMs = 1; // answers within a frame: the test feeds as fast as they come
});

describe('SileroVoiceActivityDetector', () => {
  it('finds each utterance once, with a preroll from before the first syllable, and ends soon after the speech', async () => {
    const pcm = concatPcm(silence(1000), speech, silence(1500), speech, silence(1500));
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const r = record(vad);
    await feed(vad, pcm);
    expect(r.marks.map(([k]) => k)).toEqual(['start', 'end', 'start', 'end']);
    const onsetMs = 1000 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    const speechMs = speech.length / 8;
    expect(defined(r.marks[0], 'first start')[1]).toBeGreaterThan(onsetMs);
    expect(defined(r.marks[0], 'first start')[1] - (defined(r.prerolls[0], 'first preroll') - 1) * 20).toBeLessThan(onsetMs); // the preroll reaches back before it
    expect(defined(r.marks[1], 'first end')[1]).toBeGreaterThan(1000 + speechMs - 300);
    expect(defined(r.marks[1], 'first end')[1]).toBeLessThan(1000 + speechMs + 900);
    expect(vad.speaking).toBe(false);
    vad.close();
  }, 60_000);

  it('answers that lag far behind the audio still give a preroll from before the first syllable', async () => {
    const pcm = concatPcm(silence(5000), speech, silence(1500));
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const r = record(vad);
    for (const f of toFrames(pcm)) vad.process(f); // all of it before the first answer
    await vad.settled();
    expect(r.marks.map(([k]) => k)).toEqual(['start', 'end']);
    // The preroll runs to the last frame given (the end of the audio) and back to before the onset.
    const onsetMs = 5000 + speech.findIndex((s) => Math.abs(s) > 300) / 8;
    expect(pcm.length / 8 - defined(r.prerolls[0], 'preroll') * 20).toBeLessThan(onsetMs);
    expect(pcm.length / 8 - defined(r.prerolls[0], 'preroll') * 20).toBeGreaterThan(onsetMs - 1000);
    vad.close();
  }, 60_000);

  it('does not start on noise that begins mid-call, where the energy VAD does', async () => {
    const pcm = concatPcm(silence(2000), noise(1000), silence(1000), noise(1000));
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const r = record(vad);
    await feed(vad, pcm);
    expect(r.marks).toEqual([]);
    const energy = new VoiceActivityDetector();
    expect(toFrames(pcm).filter((f) => energy.process(f) === 'start').length).toBeGreaterThan(0);
    vad.close();
  }, 60_000);

  it('keeps state per stream: two interleaved streams, batched together, give the same marks as each alone', async () => {
    const short = await synthesizeSpeech('thank you very much');
    const a = concatPcm(silence(600), speech, silence(1200));
    const b = concatPcm(silence(1500), short, silence(900), short, silence(1000));
    const alone = async (pcm: Int16Array): Promise<Mark[]> => {
      const vad = new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 });
      const r = record(vad);
      await feed(vad, pcm);
      vad.close();
      return r.marks;
    };
    const aloneA = await alone(a);
    const aloneB = await alone(b);
    expect(aloneA.map(([k]) => k)).toEqual(['start', 'end']);
    expect(aloneB.map(([k]) => k)).toEqual(['start', 'end', 'start', 'end']);

    const model = SileroModel.shared(MODEL);
    let multi = 0;
    const onSent = (n: number): void => {
      if (n > 1) multi++;
    };
    model.on('sent', onSent);
    const va = new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 });
    const vb = new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: 200 });
    const ra = record(va);
    const rb = record(vb);
    const fa = toFrames(a);
    const fb = toFrames(b);
    for (let i = 0; i < Math.max(fa.length, fb.length); i++) {
      const frameA = fa[i];
      const frameB = fb[i];
      if (frameA) va.process(frameA);
      if (frameB) vb.process(frameB);
      await va.settled();
    }
    model.off('sent', onSent);
    expect(ra.marks).toEqual(aloneA);
    expect(rb.marks).toEqual(aloneB);
    expect(multi).toBeGreaterThan(10); // both streams' windows went in the same inference calls
    va.close();
    vb.close();
  }, 60_000);

  it('uses one model for every detector: it is loaded once per process', () => {
    const first = new SileroVoiceActivityDetector({ model: MODEL });
    const loads = SileroModel.loadCount();
    expect(loads).toBeGreaterThanOrEqual(1);
    const more = Array.from({ length: 20 }, () => new SileroVoiceActivityDetector({ model: MODEL }));
    expect(SileroModel.loadCount()).toBe(loads);
    for (const d of [first, ...more]) d.close();
  });

  it('drops the answers of a stream closed while its windows are being computed', async () => {
    const model = SileroModel.shared(MODEL);
    const seen = { closed: 0, open: 0 };
    const closedId = model.open({ onProbability: () => seen.closed++, onFailed: () => undefined });
    const openId = model.open({ onProbability: () => seen.open++, onFailed: () => undefined });
    // Closed right after the batch holding its windows went to the worker: the answers come back
    // for a stream that is gone.
    model.once('sent', () => model.close(closedId));
    const w = new Float32Array(256).map((_, i) => Math.sin(i / 5) * 0.3);
    for (let i = 0; i < 5; i++) {
      model.submit(closedId, 0, w);
      model.submit(openId, 0, w);
    }
    await model.settled();
    expect(seen).toEqual({ closed: 0, open: 5 });
    model.close(openId);
  });

  it('a detector closed mid-utterance reports nothing more, and cannot be fed', async () => {
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const r = record(vad);
    await feed(vad, concatPcm(silence(500), speech.subarray(0, speech.length / 2)));
    expect(r.marks.map(([k]) => k)).toEqual(['start']);
    for (const f of toFrames(silence(1000))) vad.process(f); // answers pending …
    vad.close(); // … and dropped
    await SileroModel.shared(MODEL).settled();
    expect(r.marks.map(([k]) => k)).toEqual(['start']);
    expect(() => vad.process(new Int16Array(160))).toThrow(/after close/);
  }, 60_000);

  it('reset() ends an open utterance, reports it, and drops the answers of audio given before it', async () => {
    const vad = new SileroVoiceActivityDetector({ model: MODEL });
    const r = record(vad);
    await feed(vad, concatPcm(silence(500), speech.subarray(0, Math.floor(speech.length * 0.7))));
    expect(r.marks.map(([k]) => k)).toEqual(['start']);
    expect(vad.reset()).toBe(true);
    expect(vad.reset()).toBe(false);
    // Speech given and reset before its answers came: no start from it.
    for (const f of toFrames(speech)) vad.process(f);
    vad.reset();
    await vad.settled();
    expect(r.marks.map(([k]) => k)).toEqual(['start']);
    // And the detector works on afresh.
    await feed(vad, concatPcm(silence(500), speech, silence(1000)));
    expect(r.marks.map(([k]) => k)).toEqual(['start', 'start', 'end']);
    vad.close();
  }, 60_000);

  it('a model file that is not a model: the detector reports failed, and says why', async () => {
    const bad = path.join(os.tmpdir(), `not-a-model-${process.pid}.onnx`);
    writeFileSync(bad, 'this is not an ONNX model');
    const vad = new SileroVoiceActivityDetector({ model: bad });
    const err = await new Promise<Error>((resolve) => vad.on('failed', resolve));
    expect(err.message).toContain(bad);
    vad.process(new Int16Array(160)); // no crash, no answer
    await vad.settled();
    vad.close();
    expect(() => new SileroVoiceActivityDetector({ model: path.join(os.tmpdir(), 'missing.onnx') })).toThrow(/not found/);
  }, 60_000);
});
