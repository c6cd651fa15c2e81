// The scripted brain, slots and the knowledge base, frames of text in, actions out.
import { describe, expect, it } from 'vitest';
import {
  extractSlots,
  FALLBACK_REPLY,
  HelpDeskBrain,
  KnowledgeBase,
  NO_MATCH_REPLY,
  rankIntents,
  ScriptedBrain,
  wordsToDigits,
  type AgentDefinition,
  type Brain,
  type BrainAction,
  type BrainInput,
} from '../../../src/agents/index.js';
import { defined } from '../../helpers/defined.js';

const base: AgentDefinition = {
  id: 'agt_1',
  orgId: 'org_1',
  name: 'Desk',
  language: 'en',
  greeting: null,
  instructions: null,
  brain: { provider: 'scripted' },
  intents: [
    { name: 'order_status', examples: ['where is my order', 'track my order'], reply: 'Order {order_id} is {status}.', tool: 'lookup_order' },
    { name: 'book_table', examples: ['i would like to book a table', 'reserve a table'], reply: 'Booked for {date} at {time}.' },
    { name: 'opening_hours', examples: ['what are your opening hours', 'when are you open'], reply: 'We open at nine.' },
    { name: 'goodbye', examples: ['that is all thank you goodbye'], reply: 'Goodbye!', end_call: true },
  ],
  tools: [{ name: 'lookup_order', description: 'd', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
  escalation: { keywords: ['talk to a person', 'human'], message: 'Transferring you.' },
  knowledgeBase: [],
  voice: null,
};

async function run(brain: Brain, input: BrainInput): Promise<BrainAction[]> {
  const out: BrainAction[] = [];
  for await (const a of brain.respond(input)) out.push(a);
  return out;
}
const utter = (text: string): BrainInput => ({ kind: 'utterance', text });

describe('slots and numbers', () => {
  it('reads spoken numbers as digits', () => {
    expect(wordsToDigits('order one two three four')).toBe('order 1234');
    expect(wordsToDigits('twenty five people')).toBe('25 people');
    expect(wordsToDigits('at seven thirty')).toBe('at 730');
    // Words that are Object.prototype keys are words, not numbers.
    expect(wordsToDigits('call the constructor for order one two')).toBe('call the constructor for order 12');
  });

  it('extracts order ids, dates and times', () => {
    const now = new Date('2026-11-23T12:00:00Z'); // a Monday
    expect(extractSlots('where is my order number one two three four', now)).toMatchObject({ order_id: '1234', number: '1234' });
    expect(extractSlots('order AB12345 please', now).order_id).toBe('AB12345');
    expect(extractSlots('a table for tomorrow at 7 pm', now)).toMatchObject({ date: '2026-11-24', time: '19:00' });
    expect(extractSlots('on friday at 10:30', now)).toMatchObject({ date: '2026-11-27', time: '10:30' });
    expect(extractSlots('december the fifth', now).date).toBe('2026-12-05');
  });
});

describe('ScriptedBrain', () => {
  it('matches intents despite recognizer slips and word order', () => {
    expect(defined(rankIntents('where is my order number 12', base.intents)[0], 'best intent').intent.name).toBe('order_status');
    expect(defined(rankIntents('in all time are your opening ours', base.intents)[0], 'best intent').intent.name).toBe('opening_hours');
    expect(defined(rankIntents('can i reserve a table for friday', base.intents)[0], 'best intent').intent.name).toBe('book_table');
  });

  it('fills slots into the reply and into tool arguments, then the tool result into the reply', async () => {
    const brain = new ScriptedBrain(base);
    expect(await run(brain, utter('i would like to book a table tomorrow at 8 pm'))).toEqual([
      { kind: 'say', text: expect.stringMatching(/^Booked for \d{4}-\d{2}-\d{2} at 20:00\.$/) },
    ]);
    const [call] = await run(brain, utter('where is my order one two three'));
    expect(call).toMatchObject({ kind: 'tool_call', call: { name: 'lookup_order', arguments: { order_id: '123' } } });
    const c = (call as Extract<BrainAction, { kind: 'tool_call' }>).call;
    expect(await run(brain, { kind: 'tool_result', call: c, ok: true, result: { status: 'on its way' } })).toEqual([
      { kind: 'say', text: 'Order 123 is on its way.' },
    ]);
    // A failed tool is told to the caller (and escalated when a human is available).
    const [call2] = await run(brain, utter('track my order 456'));
    const failed = await run(brain, { kind: 'tool_result', call: (call2 as any).call, ok: false, result: { error: 'tool_timeout' } });
    expect(failed.map((a) => a.kind)).toEqual(['say', 'escalate']);
  });

  it('asks when unsure, falls back when lost, escalates after repeated misunderstanding or on a keyword', async () => {
    const brain = new ScriptedBrain(base);
    const unsure = await run(brain, utter('hours'));
    expect(unsure).toEqual([{ kind: 'say', text: 'Just to be sure: is this about opening hours?' }]);
    expect(await run(brain, utter('yes'))).toEqual([{ kind: 'say', text: 'We open at nine.' }]);
    expect(await run(brain, utter('purple elephants dancing'))).toEqual([{ kind: 'say', text: FALLBACK_REPLY }]);
    const second = await run(brain, utter('banana spaceship'));
    expect(second).toMatchObject([{ kind: 'escalate', reason: 'repeated misunderstanding' }]);
    const kw = await run(new ScriptedBrain(base), utter('let me talk to a person'));
    expect(kw).toMatchObject([{ kind: 'escalate', reason: 'keyword: talk to a person', sentiment: 'neutral' }]);
  });

  it('ends the call after a closing intent', async () => {
    expect(await run(new ScriptedBrain(base), utter('that is all thank you goodbye'))).toEqual([
      { kind: 'say', text: 'Goodbye!' },
      { kind: 'end', reason: 'agent_completed' },
    ]);
  });
});

describe('help desk (knowledge base)', () => {
  const kb = [
    {
      title: 'Resetting your password',
      content:
        'To reset your password, choose forgot password on the sign in page. The link works for one hour.\n\nIf the email does not arrive, check your spam folder.',
    },
    { title: 'Password rules', content: 'A password needs twelve characters. It must not repeat your last password.' },
    { title: 'Shipping costs', content: 'Shipping is free for orders over fifty dollars. Express delivery costs ten dollars.' },
  ];

  it('ranks passages and answers from the best one', () => {
    const hits = new KnowledgeBase(kb).search('how much does express delivery cost');
    expect(defined(hits[0], 'best hit').passage.title).toBe('Shipping costs');
  });

  it('answers, asks which article when two tie, and offers a human when nothing matches', async () => {
    const brain = new HelpDeskBrain({ ...base, knowledgeBase: kb });
    expect(await run(brain, utter('how much is shipping'))).toEqual([
      { kind: 'say', text: 'Shipping is free for orders over fifty dollars. Express delivery costs ten dollars.' },
    ]);
    const tie = await run(brain, utter('password'));
    expect(tie[0]).toMatchObject({ kind: 'say', text: expect.stringMatching(/^Is your question about .*password.*, or about .*password.*\?$/i) });
    expect(await run(brain, utter('the rules'))).toEqual([{ kind: 'say', text: 'A password needs twelve characters. It must not repeat your last password.' }]);
    expect(await run(brain, utter('do you sell bicycles'))).toEqual([{ kind: 'say', text: NO_MATCH_REPLY }]);
    expect(await run(brain, utter('yes please'))).toMatchObject([{ kind: 'escalate', reason: 'no help article matched' }]);
  });
});

describe('resolveAgent', () => {
  it('applies only the overrides the organization allows', async () => {
    const { resolveAgent } = await import('../../../src/agents/index.js');
    const row = {
      id: 'agt_1',
      org_id: 'org_1',
      name: 'Desk',
      description: null,
      language: 'en',
      voice: null,
      greeting: 'Hi.',
      instructions: null,
      brain: { provider: 'scripted' },
      intents: [],
      tools: [],
      escalation: null,
      knowledge_base: [],
      metadata: null,
      created_at: new Date(),
      updated_at: new Date(),
    };
    const def = resolveAgent(row, { greeting: 'Hola.', language: 'es' }, ['greeting']);
    expect(def).toMatchObject({ greeting: 'Hola.', language: 'en', brain: { provider: 'scripted' } });
  });
});
