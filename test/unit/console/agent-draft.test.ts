// The agent editor's form state (web/src/pages/agent-draft.ts): an agent loaded into the form and
// saved unchanged gives back its editable fields; blanks, lines and JSON text become the API's
// shapes; an API error's param finds its form field.
import { describe, expect, it } from 'vitest';
import { bodyOf, draftOf, DraftError, emptyDraft, fieldOf, NEW_TOOL, type AgentObject } from '../../../web/src/pages/agent-draft.js';

const agent: AgentObject = {
  id: 'agt_01',
  object: 'agent',
  name: 'Order desk',
  description: 'Answers order questions',
  language: 'en',
  voice: null,
  greeting: 'Hello.',
  instructions: null,
  brain: { provider: 'openai_compatible', model: 'small', base_url: 'https://llm.example/v1', api_key_secret: 'llm_key' },
  intents: [{ name: 'status', examples: ['where is my order', 'order status'], reply: 'It has shipped.', tool: 'lookup', end_call: true }],
  tools: [
    { name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: { id: { type: 'string' } } }, webhook_url: 'https://t.example/x' },
  ],
  escalation: { keywords: ['human', 'a person'], message: 'One moment.', transfer_to: '+14155550100' },
  knowledge_base: [{ title: 'Hours', content: 'Nine to five.' }],
  metadata: null,
  created_at: '2026-11-23T00:00:00.000Z',
  updated_at: '2026-11-23T00:00:00.000Z',
};

describe('agent draft', () => {
  it('round-trips an agent through the form unchanged', () => {
    const { id: _id, object: _o, voice: _v, metadata: _m, created_at: _c, updated_at: _u, ...editable } = agent;
    expect(bodyOf(draftOf(agent))).toEqual(editable);
  });

  it('turns blanks into null, lines into phrases, and leaves out unset optional parts', () => {
    const d = { ...emptyDraft(), name: '  Desk ', greeting: '  ', language: '' };
    d.intents = [{ name: 'hi', examples: ' hello \n\n  good morning\n', reply: 'Hi.', tool: '', escalate: false, end_call: false }];
    d.tools = [{ ...NEW_TOOL, name: 't', description: 'd' }];
    expect(bodyOf(d)).toEqual({
      name: 'Desk',
      description: null,
      language: null,
      greeting: null,
      instructions: null,
      brain: { provider: 'scripted' },
      intents: [{ name: 'hi', examples: ['hello', 'good morning'], reply: 'Hi.' }],
      tools: [{ name: 't', description: 'd', parameters: { type: 'object', properties: {}, required: [] } }],
      escalation: null,
      knowledge_base: [],
    });
  });

  it('does not send a scripted brain the model fields of an LLM brain', () => {
    const d = { ...draftOf(agent), provider: 'scripted' as const };
    expect(bodyOf(d).brain).toEqual({ provider: 'scripted', api_key_secret: 'llm_key' });
  });

  it('names the tool whose parameters are not JSON', () => {
    const d = draftOf(agent);
    d.tools = [...d.tools, { ...NEW_TOOL, name: 'second', description: 'x', parameters: '{"type": ' }];
    expect(() => bodyOf(d)).toThrow(DraftError);
    try {
      bodyOf(d);
    } catch (err) {
      expect((err as DraftError).param).toBe('tools.1.parameters');
    }
  });

  it("finds the form field of an API error's param: the longest known prefix", () => {
    const known = new Set(['name', 'intents', 'intents.0', 'intents.0.examples', 'brain', 'brain.model', 'tools']);
    expect(fieldOf('intents.0.examples.1', known)).toBe('intents.0.examples');
    expect(fieldOf('brain.model', known)).toBe('brain.model');
    expect(fieldOf('tools.3.name', known)).toBe('tools');
    expect(fieldOf('metadata.x', known)).toBeUndefined();
    expect(fieldOf(undefined, known)).toBeUndefined();
  });
});
