// Stage tests of the agent pipeline on a hand-driven clock: replies played sentence by sentence,
// the agent turn stored once heard, barge-in only after the minimum speech, queued agent audio
// dropped at once, and the interrupted turn keeping only what was played.
import { describe, expect, it } from 'vitest';
import { AgentListener, buildPipeline, isSettled, planPipeline, type Frame } from '../../../src/sessions/index.js';
import { splitSentences } from '../../../src/agents/index.js';
import { fakeEngines, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { defined } from '../../helpers/defined.js';

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
      agent: {
        language: 'en',
        timelineMs: () => clock.n * 20,
        turns: { final: (t) => finals.push(t), early: () => false, settle: () => undefined },
        bargeInMinSpeechMs: 200,
        onBargeIn: () => bargeIns++,
      },
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
    expect(defined(t.agentFinals()[0], 'agent final').interrupted).toBeUndefined();
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

describe('the settle rule (answer before the final)', () => {
  const h = { text: 'what are your opening hours', utteranceMs: 2000, decodedMs: 2000, stableMs: 300 };

  it('settles when the recognizer has decoded the whole utterance and its text held for 200 ms of audio', () => {
    expect(isSettled(h)).toBe(true);
    expect(isSettled({ ...h, stableMs: 200 })).toBe(true);
    expect(isSettled({ ...h, decodedMs: 1980 })).toBe(true); // one frame of rounding
  });

  it('does not settle on a recognizer behind the audio, a text still changing, or fewer than two words', () => {
    expect(isSettled({ ...h, decodedMs: 1900 })).toBe(false);
    expect(isSettled({ ...h, stableMs: 100 })).toBe(false);
    expect(isSettled({ ...h, text: 'hours' })).toBe(false);
    expect(isSettled({ ...h, text: '  ' })).toBe(false);
  });
});

describe('AgentListener (early answers from the settled hypothesis)', () => {
  function listener(accept = true, earlyOn = true) {
    const calls: string[] = [];
    const passed: Frame[] = [];
    const l = new AgentListener(
      {
        final: (t) => calls.push(`final:${t}`),
        early: (t) => (calls.push(`early:${t}`), accept),
        settle: (t) => calls.push(`settle:${t}`),
      },
      earlyOn,
    ).link((f) => passed.push(f));
    return { ev: (f: Frame) => l.process(f), calls, passed };
  }
  const progress = (text: string, startMs: number, endMs: number, decodedMs: number, stableMs: number): Frame => ({
    kind: 'transcript_progress',
    party: 'customer',
    text,
    startMs,
    endMs,
    writtenMs: endMs - startMs,
    decodedMs,
    stableMs,
  });
  const final = (text: string, startMs: number, endMs: number): Frame => ({
    kind: 'transcript_final',
    party: 'customer',
    language: 'en',
    text,
    startMs,
    endMs,
  });

  it('answers a settled hypothesis at once and hands its final over as the verdict, not as a second turn', () => {
    const { ev, calls, passed } = listener();
    ev(progress('what are your opening hours', 1000, 3000, 2000, 400));
    expect(calls).toEqual(['early:what are your opening hours']);
    expect(passed).toHaveLength(0); // turn-taking only: clients never see it
    ev(final('what are your opening hours', 1000, 3000));
    expect(calls).toEqual(['early:what are your opening hours', 'settle:what are your opening hours']);
    expect(passed.map((f) => f.kind)).toEqual(['transcript_final']);
  });

  it('waits for the final when the hypothesis is not settled, the runtime declines, or early answers are off', () => {
    const a = listener();
    a.ev(progress('where is my order one', 0, 2000, 2000, 100)); // changed in the last 200 ms
    a.ev(final('where is my order one two', 0, 2000));
    expect(a.calls).toEqual(['final:where is my order one two']);

    const b = listener(false);
    b.ev(progress('what are your opening hours', 0, 2000, 2000, 400));
    b.ev(final('what are your opening hours', 0, 2000));
    expect(b.calls).toEqual(['early:what are your opening hours', 'final:what are your opening hours']);

    const c = listener(true, false);
    c.ev(progress('what are your opening hours', 0, 2000, 2000, 400));
    c.ev(final('what are your opening hours', 0, 2000));
    expect(c.calls).toEqual(['final:what are your opening hours']);
  });

  it('an utterance answered early that ends without a final settles with null; other utterances are unaffected', () => {
    const { ev, calls } = listener();
    ev(progress('what are your opening hours', 0, 2000, 2000, 400));
    ev({ kind: 'transcript_none', party: 'customer', startMs: 0 });
    ev({ kind: 'transcript_none', party: 'customer', startMs: 5000 });
    ev(final('thanks a lot', 6000, 7000));
    expect(calls).toEqual(['early:what are your opening hours', 'settle:null', 'final:thanks a lot']);
  });
});
