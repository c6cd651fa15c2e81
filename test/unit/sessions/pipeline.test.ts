// Stage tests (frames in, frames out) for each pipeline processor, with scripted engines.
import { describe, expect, it, vi } from 'vitest';
import {
  VadProcessor,
  SttProcessor,
  TranslateProcessor,
  TtsProcessor,
  OutputPacer,
  BridgeProcessor,
  InterruptionProcessor,
  planPipeline,
  buildPipeline,
  vadParties,
  MAX_LIVE_BACKLOG_FRAMES,
  IDLE_TICKS,
  type Frame,
} from '../../../src/sessions/index.js';
import { buildEngines } from '../../../src/speech/index.js';
import { fakeEngines, FakeStt, FakeTranslator, FakeTts, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { defined } from '../../helpers/defined.js';

function collect(): { frames: Frame[]; sink: (f: Frame) => void; kinds: () => string[] } {
  const frames: Frame[] = [];
  return { frames, sink: (f) => frames.push(f), kinds: () => frames.map((f) => f.kind) };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

const audio = (party: 'agent' | 'customer', pcm: Int16Array, mediaMs: number): Frame => ({ kind: 'audio', party, pcm, mediaMs });

describe('VadProcessor', () => {
  it('passes audio on and marks one utterance with vad_start (with preroll) and vad_end', () => {
    const c = collect();
    const vad = new VadProcessor({ hangoverMs: 100 }).link(c.sink);
    let ms = 0;
    for (let i = 0; i < 20; i++, ms += 20) vad.process(audio('agent', quietFrame(), ms));
    for (let i = 0; i < 20; i++, ms += 20) vad.process(audio('agent', loudFrame(), ms));
    for (let i = 0; i < 20; i++, ms += 20) vad.process(audio('agent', quietFrame(), ms));
    const kinds = c.kinds();
    expect(kinds.filter((k) => k === 'audio')).toHaveLength(60);
    expect(kinds.filter((k) => k === 'vad_start')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'vad_end')).toHaveLength(1);
    const start = c.frames.find((f) => f.kind === 'vad_start')!;
    if (start.kind !== 'vad_start') throw new Error();
    expect(start.preroll.length).toBeGreaterThan(1);
    // The audio frame that completed the start comes before vad_start (it is the preroll's last frame).
    const i = kinds.indexOf('vad_start');
    expect(kinds[i - 1]).toBe('audio');
    expect(start.preroll[start.preroll.length - 1]).toBe((c.frames[i - 1] as { pcm: Int16Array }).pcm);
    // The other party is independent.
    expect(vad.speaking('customer')).toBe(false);
  });
});

describe('SttProcessor', () => {
  it('feeds the engine only inside utterances and turns each into one final with its time bounds', async () => {
    const c = collect();
    const stt = new FakeStt(['hello there']);
    const p = new SttProcessor({ engine: stt, languages: { agent: 'en', customer: 'es' }, enabled: { agent: true, customer: false } }).link(c.sink);
    p.process(audio('agent', loudFrame(), 0)); // before vad_start: not sent
    p.process({ kind: 'vad_start', party: 'agent', mediaMs: 100, preroll: [loudFrame(), loudFrame()] });
    for (let i = 0; i < 6; i++) p.process(audio('agent', loudFrame(), 140 + i * 20));
    p.process({ kind: 'vad_end', party: 'agent', mediaMs: 900 });
    p.process(audio('agent', loudFrame(), 920)); // after vad_end: not sent
    await settle();
    expect(defined(stt.streams[0], 'stt stream').written).toBe(8);
    expect(c.frames.filter((f) => f.kind === 'audio')).toHaveLength(0); // raw audio stops here
    expect(c.frames.find((f) => f.kind === 'transcript_partial')).toMatchObject({ party: 'agent', language: 'en', text: 'partial words' });
    expect(c.frames.find((f) => f.kind === 'transcript_final')).toEqual({
      kind: 'transcript_final',
      party: 'agent',
      language: 'en',
      text: 'hello there',
      confidence: 0.9,
      startMs: 100,
      endMs: 900,
    });
    // A party the engine does not serve is not sent to it.
    p.process({ kind: 'vad_start', party: 'customer', mediaMs: 0, preroll: [loudFrame()] });
    expect(stt.streams).toHaveLength(1);
  });

  it('turns an engine failure into an error frame and carries on with the next utterance', async () => {
    const c = collect();
    const stt = new FakeStt([new Error('no result in time'), 'second try']);
    const p = new SttProcessor({ engine: stt, languages: { agent: 'en', customer: 'en' }, enabled: { agent: true, customer: true } }).link(c.sink);
    for (const text of [1, 2]) {
      p.process({ kind: 'vad_start', party: 'customer', mediaMs: text * 1000, preroll: [loudFrame()] });
      p.process({ kind: 'vad_end', party: 'customer', mediaMs: text * 1000 + 500 });
    }
    await settle();
    expect(c.frames.find((f) => f.kind === 'error')).toMatchObject({ code: 'engine_error', party: 'customer' });
    expect(c.frames.find((f) => f.kind === 'transcript_final')).toMatchObject({ text: 'second try', startMs: 2000, endMs: 2500 });
  });
});

describe('TranslateProcessor', () => {
  const final = (party: 'agent' | 'customer', text: string): Frame => ({ kind: 'transcript_final', party, language: 'en', text, startMs: 0, endMs: 100 });

  it('holds a final until its translation, sends the translation first, and keeps one party in order', async () => {
    const c = collect();
    const tr = new FakeTranslator();
    tr.delays.set('slow first', 30);
    const p = new TranslateProcessor(tr, { agent: { to: 'es', speakTo: 'customer' } }).link(c.sink);
    p.process(final('agent', 'slow first'));
    p.process(final('agent', 'fast second'));
    p.process(final('customer', 'no route'));
    expect(c.kinds()).toEqual(['transcript_final']); // the customer's final passes at once
    await vi.waitFor(() => expect(c.frames).toHaveLength(5));
    const texts = c.frames.map((f) => `${f.kind}:${'text' in f ? f.text : ''}`);
    expect(texts).toEqual([
      'transcript_final:no route',
      'translation:[es] slow first',
      'transcript_final:slow first',
      'translation:[es] fast second',
      'transcript_final:fast second',
    ]);
    expect(c.frames[2]).toMatchObject({ translation: { language: 'es', text: '[es] slow first' } });
    expect(c.frames[1]).toMatchObject({ speakTo: 'customer', from: 'en', to: 'es' });
  });

  it('lets the final through without translation and reports an error when translation fails', async () => {
    const c = collect();
    const tr = new FakeTranslator();
    tr.fail = true;
    new TranslateProcessor(tr, { agent: { to: 'es', speakTo: null } }).link(c.sink).process(final('agent', 'hi'));
    await vi.waitFor(() => expect(c.frames).toHaveLength(2));
    expect(c.kinds()).toEqual(['error', 'transcript_final']);
    expect(c.frames[1]).not.toHaveProperty('translation');
  });
});

describe('TtsProcessor', () => {
  it('synthesizes translations for their listener and labels the audio translated_<speaker>', async () => {
    const c = collect();
    const p = new TtsProcessor(new FakeTts(), { speed: 1 }).link(c.sink);
    p.process({ kind: 'translation', party: 'agent', from: 'en', to: 'es', text: 'uno dos', speakTo: 'customer' });
    p.process({ kind: 'translation', party: 'customer', from: 'en', to: 'es', text: 'text only', speakTo: null });
    await vi.waitFor(() => expect(c.frames.filter((f) => f.kind === 'tts_audio')).toHaveLength(1));
    const tts = c.frames.filter((f) => f.kind === 'tts_audio');
    expect(tts).toHaveLength(1);
    expect(tts[0]).toMatchObject({ to: 'customer', speaker: 'translated_agent' });
    expect((tts[0] as { pcm: Int16Array }).pcm.length).toBe(1600);
  });

  it('reports a synthesis failure as an error frame', async () => {
    const c = collect();
    const tts = new FakeTts();
    tts.fail = true;
    new TtsProcessor(tts, {}).link(c.sink).process({ kind: 'translation', party: 'agent', from: 'en', to: 'es', text: 'x', speakTo: 'customer' });
    await vi.waitFor(() => expect(c.frames).toHaveLength(2));
    expect(c.frames.map((f) => f.kind)).toEqual(['translation', 'error']);
  });
});

describe('OutputPacer', () => {
  it('releases one 20 ms frame per party per tick, pads the tail, and leaves the clock after a second with nothing queued', () => {
    const c = collect();
    const clock = new ManualClock();
    const pacer = new OutputPacer(clock).link(c.sink);
    pacer.process({ kind: 'tts_audio', to: 'customer', speaker: 'translated_agent', pcm: new Int16Array(400).fill(7) });
    pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: new Int16Array(160) });
    expect(c.frames).toHaveLength(0); // nothing before the clock ticks
    expect(pacer.queued('customer')).toBe(3);
    clock.tick();
    // Each party's lane is on the clock by itself (in the sub-tick its frames came in): the order in a tick is theirs.
    expect(c.frames.map((f) => (f.kind === 'playout' ? `${f.to}@${f.timestampMs}` : f.kind)).sort()).toEqual(['agent@0', 'customer@0']);
    clock.tick(2);
    const playouts = c.frames.filter((f) => f.kind === 'playout' && f.to === 'customer') as Array<{ pcm: Int16Array; timestampMs: number }>;
    expect(playouts.map((p) => p.timestampMs)).toEqual([0, 20, 40]);
    expect(playouts.every((p) => p.pcm.length === 160)).toBe(true);
    expect(defined(playouts[2], 'third playout').pcm[79]).toBe(7);
    expect(defined(playouts[2], 'third playout').pcm[80]).toBe(0); // 400 samples = 2.5 frames: the tail is padded with silence
    // The third tick emptied the queues; a bridged call's queue empties every tick, so the pacer stays a while.
    // Lanes leave by themselves: the agent's, empty since the first tick, has left; the customer's has not.
    clock.tick(IDLE_TICKS - 2);
    expect(clock.listeners.size).toBe(1);
    clock.tick();
    expect(clock.listeners.size).toBe(0);
    expect(c.frames).toHaveLength(4);
  });

  it('keeps at most 300 ms of live bridged audio queued, dropping the oldest', () => {
    const c = collect();
    const clock = new ManualClock();
    const pacer = new OutputPacer(clock).link(c.sink);
    for (let i = 0; i < 40; i++) pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: new Int16Array(160).fill(i) });
    expect(pacer.queued('agent')).toBe(MAX_LIVE_BACKLOG_FRAMES);
    clock.tick();
    expect((c.frames[0] as { pcm: Int16Array }).pcm[0]).toBe(40 - MAX_LIVE_BACKLOG_FRAMES);
  });

  it("drops a party's queued audio on an interruption (barge-in)", () => {
    const c = collect();
    const clock = new ManualClock();
    const pacer = new OutputPacer(clock).link(c.sink);
    pacer.process({ kind: 'tts_audio', to: 'customer', speaker: 'translated_agent', pcm: new Int16Array(1600) });
    new InterruptionProcessor().link(pacer).process({ kind: 'vad_start', party: 'customer', mediaMs: 0, preroll: [] });
    expect(pacer.queued('customer')).toBe(0);
    expect(c.kinds()).toEqual(['interruption', 'vad_start']);
  });
});

describe('BridgeProcessor', () => {
  it("copies the customer's frames to the agent as customer_original and passes all audio on", () => {
    const c = collect();
    const b = new BridgeProcessor('customer', 'agent').link(c.sink);
    const f = loudFrame();
    b.process(audio('customer', f, 0));
    b.process(audio('agent', f, 0));
    expect(c.frames).toEqual([{ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: f }, audio('customer', f, 0), audio('agent', f, 0)]);
  });
});

describe('planPipeline', () => {
  const { engines } = fakeEngines();

  it('bidirectional: Party A is the agent (source_language), Party B the customer (target_language)', () => {
    const plan = planPipeline({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' }, engines, 'en');
    expect(plan.languages).toEqual({ agent: 'en', customer: 'es' });
    expect(plan.routes).toEqual({ agent: { to: 'es', speakTo: 'customer' } });
    expect(plan.unavailable).toEqual(["customer speech (es) will not be transcribed: no speech-to-text engine for 'es'"]);
    expect(plan.bridge).toBeNull();
  });

  it('assistive: the agent is spoken to the customer, the customer is text for the agent and bridged', () => {
    const both = buildEngines(new FakeStt([], ['en', 'es']), new FakeTranslator(), new FakeTts());
    const plan = planPipeline({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' }, both, 'en');
    expect(plan.routes).toEqual({ agent: { to: 'es', speakTo: 'customer' }, customer: { to: 'en', speakTo: null } });
    expect(plan.bridge).toEqual({ from: 'customer', to: 'agent' });
    expect(plan.unavailable).toEqual([]);
  });

  it('null languages fall back to the default; ai modes only transcribe', () => {
    const plan = planPipeline({ mode: 'ai_agent', source_language: null, target_language: null }, engines, 'en');
    expect(plan.languages).toEqual({ agent: 'en', customer: 'en' });
    expect(plan.defaulted).toEqual({ agent: true, customer: true });
    expect(plan.routes).toEqual({});
    expect(plan.transcribe).toEqual({ agent: true, customer: true });
  });

  it('names every gap when engines are off', () => {
    const plan = planPipeline({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' }, buildEngines(null, null, null), 'en');
    expect(plan.unavailable).toHaveLength(2);
  });
});

describe('buildPipeline: the VAD runs only where its marks are read', () => {
  const build = (engines: ReturnType<typeof buildEngines>, o: { mode?: 'assistive_translation' | 'bidirectional_translation'; bargeIn?: boolean } = {}) => {
    const plan = planPipeline({ mode: o.mode ?? 'assistive_translation', source_language: 'en', target_language: 'es' }, engines, 'en');
    const c = collect();
    const pipeline = buildPipeline({ plan, engines, voice: { speed: 1 }, clock: new ManualClock(), vad: { hangoverMs: 100 }, bargeIn: o.bargeIn }, c.sink);
    return { pipeline, c, plan };
  };
  /** 200 ms quiet, 400 ms loud, 400 ms quiet for both parties, through the pipeline's entry. */
  const talk = (pipeline: ReturnType<typeof buildPipeline>) => {
    let ms = 0;
    for (const f of [...Array(10).fill(quietFrame), ...Array(20).fill(loudFrame), ...Array(20).fill(quietFrame)] as Array<() => Int16Array>) {
      for (const p of ['agent', 'customer'] as const) pipeline.input.process(audio(p, f(), ms));
      ms += 20;
    }
  };

  it('with no speech-to-text engine ("none") builds no VAD: no detector, not in the chain, bridged audio flows', () => {
    const { pipeline, c, plan } = build(buildEngines(null, null, null));
    expect(vadParties(plan, buildEngines(null, null, null), false)).toEqual([]);
    expect(pipeline.vad.parties).toEqual([]);
    expect(pipeline.stages).not.toContain(pipeline.vad);
    talk(pipeline);
    expect(c.kinds().filter((k) => k === 'vad_start' || k === 'vad_end')).toEqual([]);
    pipeline.vad.flush(() => 0); // callable (the live session flushes on hang-up): nothing to end
    expect(c.kinds().filter((k) => k === 'vad_end')).toEqual([]);
    for (const s of pipeline.stages) s.close();
  });

  it('with speech-to-text for both languages detects both parties and marks their utterances', () => {
    const engines = buildEngines(new FakeStt([], ['en', 'es']), new FakeTranslator(), new FakeTts());
    const { pipeline, c } = build(engines);
    expect(pipeline.vad.parties.sort()).toEqual(['agent', 'customer']);
    expect(pipeline.stages).toContain(pipeline.vad);
    talk(pipeline);
    const starts = c.frames.filter((f) => f.kind === 'vad_start').map((f) => (f as { party: string }).party);
    expect(starts.sort()).toEqual(['agent', 'customer']);
    for (const s of pipeline.stages) s.close();
  });

  it('detects only the party whose language is transcribed; barge-in needs every party', () => {
    const enOnly = buildEngines(new FakeStt([], ['en']), null, null);
    const { pipeline, c } = build(enOnly, { mode: 'bidirectional_translation' });
    expect(pipeline.vad.parties).toEqual(['agent']); // the agent speaks en, the customer es
    talk(pipeline);
    expect(c.frames.filter((f) => f.kind === 'vad_start').map((f) => (f as { party: string }).party)).toEqual(['agent']);
    for (const s of pipeline.stages) s.close();
    const none = build(buildEngines(null, null, null), { bargeIn: true });
    expect(none.pipeline.vad.parties.sort()).toEqual(['agent', 'customer']);
    expect(none.pipeline.stages).toContain(none.pipeline.vad);
    for (const s of none.pipeline.stages) s.close();
  });
});
