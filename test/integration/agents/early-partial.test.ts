// Early answering from the recognizer's partials (AGENT_EARLY_PARTIAL): off by default, because the
// embedded recognizer reports no decoding progress (README "AI agents", turn-taking); when turned on
// the brain gets the settled partial at the end of speech and the stored turn is still the final.
// A live session with scripted engines and a brain that records what it was told.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { LiveSession, type StoredTurn } from '../../../src/sessions/index.js';
import { AgentRuntime, ToolRunner, type AgentDefinition, type Brain, type BrainAction, type BrainInput } from '../../../src/agents/index.js';
import { fakeEngines, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';

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
  escalation: null,
};

class RecordingBrain implements Brain {
  readonly heard: string[] = [];
  // eslint-disable-next-line require-yield -- says nothing: only what it is told matters here
  async *respond(input: BrainInput): AsyncIterable<BrainAction> {
    if (input.kind === 'utterance') this.heard.push(input.text);
  }
}

/** One customer utterance into a live ai_agent session; `Date` moves 20 ms a frame as on a call. */
async function oneTurn(earlyPartial: boolean | undefined): Promise<{ heard: string[]; stored: StoredTurn[] }> {
  vi.useFakeTimers({ toFake: ['Date'] });
  const { engines } = fakeEngines(['where is my order one two three four']);
  const brain = new RecordingBrain();
  const stored: StoredTurn[] = [];
  const session = new LiveSession({
    id: 'sess_1',
    orgId: 'org_1',
    mode: 'ai_agent',
    sourceLanguage: 'en',
    targetLanguage: 'en',
    voice: {},
    engines,
    defaultLanguage: 'en',
    clock: new ManualClock(),
    awaitsLeg: false,
    vad: { calibrationFrames: 2 },
    hooks: { firstAudio() {}, activity() {}, storeTurn: async (t) => void stored.push(t) },
    agent: {
      language: 'en',
      ...(earlyPartial === undefined ? {} : { earlyPartial }),
      createRuntime: (host) => new AgentRuntime({ agent, brain, host, tools: new ToolRunner({ timeoutMs: 100, signingSecrets: async () => [] }) }),
    },
  });
  // The fake recognizer gives the partial "partial words" 5 frames into the utterance; it then
  // stays unchanged through the rest of the speech and the hangover (settled).
  const frames = [...Array(10).fill(0).map(quietFrame), ...Array(30).fill(0).map(loudFrame), ...Array(25).fill(0).map(quietFrame)];
  for (const f of frames) {
    session.pushAudio('customer', f);
    vi.advanceTimersByTime(20);
  }
  await vi.waitFor(() => expect(stored.some((t) => t.speaker === 'customer')).toBe(true));
  await vi.waitFor(() => expect(brain.heard.length).toBeGreaterThan(0));
  session.close('test');
  return { heard: brain.heard, stored };
}

afterEach(() => vi.useRealTimers());

describe('AGENT_EARLY_PARTIAL', () => {
  it('is off by default and set from the environment', () => {
    expect(loadConfig({}).agents.earlyPartial).toBe(false);
    expect(loadConfig({ AGENT_EARLY_PARTIAL: 'true' }).agents.earlyPartial).toBe(true);
  });

  it('off (the default): the brain waits for the final', async () => {
    const { heard, stored } = await oneTurn(undefined);
    expect(heard).toEqual(['where is my order one two three four']);
    expect(stored.find((t) => t.speaker === 'customer')?.text).toBe('where is my order one two three four');
  });

  it('on: the brain answers the settled partial at the end of speech; the final is still what is stored', async () => {
    const { heard, stored } = await oneTurn(true);
    expect(heard).toEqual(['partial words']);
    expect(stored.find((t) => t.speaker === 'customer')?.text).toBe('where is my order one two three four');
  });
});
