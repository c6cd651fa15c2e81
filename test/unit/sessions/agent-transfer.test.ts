// Escalation with a transfer on a phone-leg session: the human is dialed as the agent party, the
// two legs are bridged both ways (the AI steps out, both parties stay transcribed); a failed dial is
// told to the caller by voice. Scripted engines, hand-driven clock, legs recording what they play.
import { describe, expect, it, vi } from 'vitest';
import { LiveSession, type PartyLeg, type StoredTurn, type TranscriptFinal } from '../../../src/sessions/index.js';
import { AgentRuntime, ScriptedBrain, ToolRunner, TRANSFER_FAILED_REPLY, type AgentDefinition } from '../../../src/agents/index.js';
import { fakeEngines, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { defined } from '../../helpers/defined.js';

const agent: AgentDefinition = {
  id: 'agt_1',
  orgId: 'org_1',
  name: 'Desk',
  language: 'en',
  greeting: null,
  instructions: null,
  brain: { provider: 'scripted' },
  intents: [],
  tools: [],
  knowledgeBase: [],
  voice: null,
  escalation: { keywords: ['talk to a person'], message: 'Connecting you now.', transfer_to: 'sip:human@127.0.0.1:5099' },
};

class RecordingLeg implements PartyLeg {
  readonly kind = 'sip' as const;
  frames: Int16Array[] = [];
  cleared = 0;
  constructor(readonly party: 'agent' | 'customer') {}
  playFrame(f: Int16Array) {
    this.frames.push(f);
  }
  clearOutput() {
    this.cleared++;
  }
  close() {}
}

function setup(dial: (s: LiveSession, req: { party: 'agent' | 'customer'; to: string }) => Promise<void>, greeting: string | null = null) {
  const { engines } = fakeEngines(['i want to talk to a person', 'hello is anyone there', 'hi this is the human']);
  const clock = new ManualClock();
  const stored: StoredTurn[] = [];
  const events: Array<{ type: string; data: any }> = [];
  const session: LiveSession = new LiveSession({
    id: 'sess_1',
    orgId: 'org_1',
    mode: 'ai_agent',
    sourceLanguage: 'en',
    targetLanguage: 'en',
    voice: {},
    engines,
    defaultLanguage: 'en',
    clock,
    awaitsLeg: true,
    vad: { calibrationFrames: 2 },
    hooks: {
      firstAudio() {},
      activity() {},
      storeTurn: async (t) => void stored.push(t),
      recordEvent: async (type, data) => void events.push({ type, data }),
      dialParty: (req) => dial(session, req),
    },
    agent: {
      language: 'en',
      bargeInMinSpeechMs: 200,
      createRuntime: (host) =>
        new AgentRuntime({
          agent: { ...agent, greeting },
          brain: new ScriptedBrain(agent),
          host,
          tools: new ToolRunner({ timeoutMs: 100, signingSecrets: async () => [] }),
        }),
    },
  });
  const customer = new RecordingLeg('customer');
  session.attachLeg(customer);
  const finals: TranscriptFinal[] = [];
  session.on('final', (f) => finals.push(f));
  /** One utterance; with `live` the clock ticks with every frame, as on a call. */
  const speak = (party: 'agent' | 'customer', live = false) => {
    const frames = [...Array(10).fill(0).map(quietFrame), ...Array(20).fill(0).map(loudFrame), ...Array(25).fill(0).map(quietFrame)];
    for (const f of frames) {
      session.pushAudio(party, f);
      if (live) clock.tick();
    }
  };
  // Plays queued audio until the agent has said `text`.
  const untilSaid = async (re: RegExp) => {
    await vi.waitFor(
      () => {
        clock.tick(20);
        expect(finals.some((f) => f.speaker === 'agent' && re.test(f.text))).toBe(true);
      },
      { timeout: 5000, interval: 5 },
    );
  };
  return { session, clock, stored, events, customer, finals, speak, untilSaid };
}

describe('barge-in on a phone leg', () => {
  it('stops the RTP output at once and drops what the leg still holds', async () => {
    const t = setup(async () => undefined, 'Welcome to the order desk. I can help with orders, returns, opening hours and prices. What can I do for you?');
    await vi.waitFor(() => expect(t.session.queuedOutput('customer')).toBeGreaterThan(100));
    t.clock.tick(30);
    expect(t.customer.frames).toHaveLength(30);
    t.speak('customer', true); // 400 ms of speech, ticking live: cut off after the minimum speech
    expect(t.customer.cleared).toBe(1);
    expect(t.session.queuedOutput('customer')).toBe(0);
    const played = t.customer.frames.length;
    expect(played).toBeLessThan(30 + 55);
    t.clock.tick(50);
    expect(t.customer.frames.length).toBe(played);
    await vi.waitFor(() =>
      expect(t.finals.find((f) => f.speaker === 'agent')).toMatchObject({ interrupted: true, text: expect.stringMatching(/^Welcome to the order desk\./) }),
    );
    t.session.close('test');
  });
});

describe('agent escalation with transfer', () => {
  it('dials the human as the agent party and bridges both parties, still transcribing both', async () => {
    const human = new RecordingLeg('agent');
    const dialed: string[] = [];
    const t = setup(async (s, req) => {
      dialed.push(`${req.party} ${req.to}`);
      s.attachLeg(human);
    });
    t.speak('customer');
    await t.untilSaid(/Connecting you now/);
    await vi.waitFor(() => expect(dialed).toEqual(['agent sip:human@127.0.0.1:5099']));
    expect(t.events.map((e) => e.type)).toEqual(['ai_agent.escalation_requested']);
    const escalation = defined(t.events[0], 'escalation event');
    expect(escalation.data).toMatchObject({ session_id: 'sess_1', reason: 'keyword: talk to a person', context: { sentiment: 'neutral' } });
    await vi.waitFor(() => expect(t.session.agentRuntime!.active).toBe(false));

    // The customer's voice now reaches the human, the human's the customer; the AI says nothing more.
    const heardBefore = human.frames.length;
    t.speak('customer', true);
    expect(human.frames.length - heardBefore).toBeGreaterThanOrEqual(54);
    const customerHeard = t.customer.frames.length;
    t.speak('agent', true);
    expect(t.customer.frames.length - customerHeard).toBeGreaterThanOrEqual(54);
    await vi.waitFor(() => expect(t.finals.filter((f) => f.speaker === 'agent' && /human/.test(f.text))).toHaveLength(1));
    expect(t.finals.filter((f) => f.speaker === 'customer').map((f) => f.text)).toEqual(['i want to talk to a person', 'hello is anyone there']);
    t.session.close('test');
  });

  it('tells the caller when the transfer fails', async () => {
    const t = setup(async () => {
      throw new Error('486 Busy Here');
    });
    t.speak('customer');
    await t.untilSaid(new RegExp(TRANSFER_FAILED_REPLY.slice(0, 20).replace(/[.*+?^${}()|[\]\\']/g, '.')));
    expect(t.session.agentRuntime!.active).toBe(true);
    t.session.close('test');
  });
});
