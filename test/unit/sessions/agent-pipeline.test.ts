// Stage tests of the agent pipeline on a hand-driven clock: replies played sentence by sentence,
// the agent turn stored once heard, barge-in only after the minimum speech, queued agent audio
// dropped at once, and the interrupted turn keeping only what was played.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentListener, buildPipeline, EARLY_PARTIAL_STABLE_MS, planPipeline, type Frame } from '../../../src/sessions/index.js';
import { splitSentences } from '../../../src/agents/index.js';
import { fakeEngines, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

function setup(script: string[] = []) {
  const { engines } = fakeEngines(script);
  const clock = new ManualClock();
  const frames: Frame[] = [];
  const finals: string[] = [];
  let bargeIns = 0;
  const plan = planPipeline({ mode: 'ai_agent', source_language: 'en', target_language: 'en' }, engines, 'en');
  const p = buildPipeline(
    {
      plan,
      engines,
      voice: {},
      clock,
      vad: { calibrationFrames: 2 },
      agent: { language: 'en', timelineMs: () => clock.n * 20, onCustomerFinal: (t) => finals.push(t), bargeInMinSpeechMs: 200, onBargeIn: () => bargeIns++ },
    },
    (f) => frames.push(f),
  );
  let ms = 0;
  const feed = (frame: Int16Array, n: number) => {
    for (let i = 0; i < n; i++, ms += 20) p.input.process({ kind: 'audio', party: 'customer', pcm: frame, mediaMs: ms });
  };
  const played = () => frames.filter((f) => f.kind === 'playout' && f.to === 'customer').length;
  const agentFinals = () => frames.filter((f): f is Extract<Frame, { kind: 'transcript_final' }> => f.kind === 'transcript_final' && f.party === 'agent');
  return { p, clock, frames, finals, feed, played, agentFinals, bargeIns: () => bargeIns };
}

describe('agent pipeline', () => {
  it('plays a reply sentence by sentence and stores the agent turn once it has been heard', async () => {
    const t = setup();
    const spoken = t.p.agent!.speech.say('Hello there. How can I help?', splitSentences);
    await settle();
    // FakeTts: 100 ms per word → 2 words + 4 words = 30 frames.
    expect(t.p.pacer.queued('customer')).toBe(30);
    t.clock.tick(29);
    expect(t.agentFinals()).toHaveLength(0);
    t.clock.tick(1);
    expect(await spoken).toEqual({ spoken: 'Hello there. How can I help?', interrupted: false });
    expect(t.agentFinals()).toMatchObject([{ text: 'Hello there. How can I help?', language: 'en' }]);
    expect(t.agentFinals()[0].interrupted).toBeUndefined();
    expect(t.frames.filter((f) => f.kind === 'playout').every((f) => f.kind === 'playout' && f.speaker === 'agent')).toBe(true);
  });

  it('ignores short customer sounds, then cuts the agent off after the minimum speech and keeps what was played', async () => {
    const t = setup(['mm', 'what are your hours']);
    const spoken = t.p.agent!.speech.say('We are open every day. Our hours are nine to five on weekdays.', splitSentences);
    await settle();
    const total = t.p.pacer.queued('customer');
    expect(total).toBe(25 + 40); // 5 + 8 words, 5 frames (100 ms) each
    t.feed(quietFrame(), 5);
    t.clock.tick(20); // the first sentence (25 frames) is partly played
    // A short "mm" (100 ms of speech, then silence): no barge-in.
    t.feed(loudFrame(), 5);
    t.feed(quietFrame(), 20);
    await settle();
    expect(t.bargeIns()).toBe(0);
    expect(t.p.pacer.queued('customer')).toBeGreaterThan(0);
    t.clock.tick(10); // first sentence done, second started
    // Real speech: past 200 ms the agent is cut off.
    t.feed(loudFrame(), 9);
    expect(t.bargeIns()).toBe(0);
    t.feed(loudFrame(), 3); // 3 frames to start the VAD + 9 more: 200 ms of voiced speech
    expect(t.bargeIns()).toBe(1);
    expect(t.p.pacer.queued('customer')).toBe(0); // dropped at once: nothing more is played
    const before = t.played();
    t.clock.tick(10);
    expect(t.played()).toBe(before);
    const r = await spoken;
    expect(r.interrupted).toBe(true);
    expect(r.spoken).toBe('We are open every day. Our'); // 5 of the 40 frames of sentence two: 1 of its 8 words
    expect(r.spoken.length).toBeLessThan('We are open every day. Our hours are nine to five on weekdays.'.length);
    expect(t.agentFinals().at(-1)).toMatchObject({ text: r.spoken, interrupted: true });
    // The customer's utterance goes on to the agent runtime once finished.
    t.feed(quietFrame(), 20);
    await settle();
    expect(t.finals).toContain('what are your hours');
  });
});

describe('AgentListener (end of turn from partials)', () => {
  afterEach(() => vi.useRealTimers());

  it('answers a settled partial at the end of speech and skips its final; waits for the final otherwise', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const heard: string[] = [];
    const l = new AgentListener((t) => heard.push(t)).link(() => undefined);
    const ev = (f: Frame) => l.process(f);
    ev({ kind: 'vad_start', party: 'customer', mediaMs: 0, preroll: [] });
    ev({ kind: 'transcript_partial', party: 'customer', language: 'en', text: 'what are your opening hours' });
    vi.advanceTimersByTime(EARLY_PARTIAL_STABLE_MS);
    ev({ kind: 'vad_end', party: 'customer', mediaMs: 1000 });
    expect(heard).toEqual(['what are your opening hours']);
    ev({ kind: 'transcript_final', party: 'customer', language: 'en', text: 'what are your opening hours', startMs: 0, endMs: 1000 });
    expect(heard).toHaveLength(1);

    // A partial still changing at the end of speech (recognizer behind): the final is used.
    ev({ kind: 'vad_start', party: 'customer', mediaMs: 2000, preroll: [] });
    ev({ kind: 'transcript_partial', party: 'customer', language: 'en', text: 'where is my order one' });
    vi.advanceTimersByTime(50);
    ev({ kind: 'vad_end', party: 'customer', mediaMs: 3000 });
    expect(heard).toHaveLength(1);
    ev({ kind: 'transcript_final', party: 'customer', language: 'en', text: 'where is my order one two', startMs: 2000, endMs: 3000 });
    expect(heard).toEqual(['what are your opening hours', 'where is my order one two']);
  });
});
