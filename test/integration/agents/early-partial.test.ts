// Early answering with the real recognizer: flite speech through a live ai_agent session on the
// embedded engines (pocketsphinx pool, espeak-ng). The decoder reports its hypothesis once it has
// decoded the whole utterance, before its end-of-utterance search; the agent's brain is asked about
// that settled hypothesis before the customer's final exists, the final confirms it, and the reply
// is spoken and stored once (held until the final by default, or played at once). The settle rule counts audio, not wall-clock time, so the outcome does
// not depend on how loaded the machine is.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createEngines, type Engines } from '../../../src/speech/index.js';
import { LiveSession, type StoredTurn } from '../../../src/sessions/index.js';
import { AgentRuntime, ScriptedBrain, ToolRunner, type AgentDefinition, type Brain, type BrainInput } from '../../../src/agents/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { defined } from '../../helpers/defined.js';

const REPLY = 'We are open from nine to five.';
const agent: AgentDefinition = {
  id: 'agt_1',
  orgId: 'org_1',
  name: 'Desk',
  language: 'en',
  greeting: null,
  instructions: null,
  brain: { provider: 'scripted' },
  intents: [
    { name: 'opening_hours', examples: ['what are your opening hours'], reply: REPLY },
    { name: 'order_help', examples: ['i need help with my order'], reply: 'Orders arrive within three days.' },
  ],
  tools: [],
  knowledgeBase: [],
  voice: null,
  escalation: null,
};

/** The scripted brain, logging when it is asked (into the same log as the session's finals). */
function loggingBrain(log: string[]): Brain {
  const inner = new ScriptedBrain(agent);
  return {
    respond: (input: BrainInput) => {
      if (input.kind === 'utterance') log.push(`brain: ${input.text}`);
      return inner.respond(input);
    },
    checkpoint: () => inner.checkpoint(),
    sameMeaning: (a, b) => inner.sameMeaning(a, b),
  };
}

let engines: Engines;
beforeAll(async () => {
  // A generous recognizer timeout: on a busy machine the decoder's final can come many seconds late,
  // and a timed-out utterance has no turn at all.
  engines = await createEngines(loadConfig({ ...process.env, STT_TIMEOUT_MS: '120000' }).engines);
}, 180_000);
afterAll(async () => {
  await engines?.close();
});

async function talk(earlyPartial: boolean, speakBeforeFinal = false) {
  const log: string[] = [];
  const stored: StoredTurn[] = [];
  const clock = new ManualClock();
  const session = new LiveSession({
    id: `sess_early_${earlyPartial}`,
    orgId: 'org_1',
    mode: 'ai_agent',
    sourceLanguage: 'en',
    targetLanguage: 'en',
    voice: {},
    engines,
    defaultLanguage: 'en',
    clock,
    awaitsLeg: false,
    hooks: { firstAudio() {}, activity() {}, storeTurn: async (t) => void stored.push(t) },
    agent: {
      language: 'en',
      earlyPartial,
      createRuntime: (host) =>
        new AgentRuntime({
          agent,
          brain: loggingBrain(log),
          host,
          speakBeforeFinal,
          tools: new ToolRunner({ timeoutMs: 500, signingSecrets: async () => [] }),
        }),
    },
  });
  session.on('final', (f) => log.push(`final ${f.speaker}: ${f.text}`));
  session.on('error', (e) => log.push(`error: ${e.message}`));
  session.on('output', (o) => {
    if (o.speaker === 'agent' && !log.includes('agent audio')) log.push('agent audio');
  });
  session.carrierAttached();
  const question = await synthesizeSpeech('what are your opening hours', { voice: 'flite' });
  const pcm = concatPcm(silence(400), question, silence(1200));
  for (let off = 0; off + 160 <= pcm.length; off += 160) session.pushAudio('customer', pcm.slice(off, off + 160));
  // Play the reply out on the session's clock until the agent's turn and the customer's are stored
  // (the reply may be heard in full before the final arrives: the final waits for the end search).
  await vi
    .waitFor(
      () => {
        clock.tick(25);
        expect(stored.some((t) => t.speaker === 'agent')).toBe(true);
        expect(stored.some((t) => t.speaker === 'customer')).toBe(true);
      },
      { timeout: 150_000, interval: 20 },
    )
    .catch((err: Error) => {
      throw new Error(`${err.message}\nsession log: ${JSON.stringify(log)}`);
    });
  const stats = { ...session.agentRuntime!.earlyStats };
  session.close('test');
  return { log, stored, stats };
}

describe('early answering from the recognizer (pocketsphinx, flite speech)', () => {
  it('is on by default, held until the final, and set from the environment', () => {
    expect(loadConfig({}).agents).toMatchObject({ earlyPartial: true, earlySpeak: false });
    expect(loadConfig({ AGENT_EARLY_PARTIAL: 'false', AGENT_EARLY_SPEAK: 'true' }).agents).toMatchObject({ earlyPartial: false, earlySpeak: true });
  });

  it('asks the brain about the settled hypothesis before the final and plays the reply once the final confirms it; one reply, stored once', async () => {
    const { log, stored, stats } = await talk(true);
    const asked = log.findIndex((l) => l.startsWith('brain: '));
    const final = log.findIndex((l) => l.startsWith('final customer: '));
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(final).toBeGreaterThan(asked); // the reply started before the final existed…
    expect(log.indexOf('agent audio')).toBeGreaterThan(final); // …and was heard only once the final confirmed it
    expect(log.filter((l) => l.startsWith('brain: '))).toHaveLength(1);
    expect(stats).toEqual({ started: 1, confirmed: 1, cancelled: 0 });
    const customer = stored.filter((t) => t.speaker === 'customer');
    expect(customer).toHaveLength(1);
    expect(defined(customer[0], 'customer turn').text).toMatch(/opening hours/); // the stored turn is the final
    expect(stored.filter((t) => t.speaker === 'agent').map((t) => t.text)).toEqual([REPLY]);
  }, 200_000);

  it('spoken before the final (speakBeforeFinal): the same single reply, the brain asked before the final', async () => {
    const { log, stored, stats } = await talk(true, true);
    expect(log.findIndex((l) => l.startsWith('final customer: '))).toBeGreaterThan(log.findIndex((l) => l.startsWith('brain: ')));
    expect(log.filter((l) => l.startsWith('brain: '))).toHaveLength(1);
    expect(stats).toEqual({ started: 1, confirmed: 1, cancelled: 0 });
    expect(stored.filter((t) => t.speaker === 'agent').map((t) => t.text)).toEqual([REPLY]);
  }, 200_000);

  it('off: the brain is asked only after the final', async () => {
    const { log, stored, stats } = await talk(false);
    const asked = log.findIndex((l) => l.startsWith('brain: '));
    const final = log.findIndex((l) => l.startsWith('final customer: '));
    expect(asked).toBeGreaterThan(final);
    expect(stats.started).toBe(0);
    expect(stored.filter((t) => t.speaker === 'agent').map((t) => t.text)).toEqual([REPLY]);
  }, 200_000);
});
