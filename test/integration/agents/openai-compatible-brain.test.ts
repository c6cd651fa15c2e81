// The openai_compatible brain against a local server speaking the chat-completions SSE protocol:
// sentence-by-sentence streaming, tool_calls deltas split across chunks, tool results fed back with
// the conversation kept, the API key from a named secret, error bodies and timeouts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentRuntime,
  LlmError,
  OpenAiCompatibleBrain,
  ToolRunner,
  type AgentDefinition,
  type AgentHost,
  type BrainAction,
  type BrainInput,
} from '../../../src/agents/index.js';
import { OpenAiChatServer } from '../../helpers/openai-chat-server.js';
import { defined } from '../../helpers/defined.js';

let server: OpenAiChatServer;
beforeAll(async () => {
  server = await OpenAiChatServer.start();
});
afterAll(async () => {
  await server?.close();
});

const agent = (over: Partial<AgentDefinition> = {}): AgentDefinition => ({
  id: 'agt_test',
  orgId: 'org_test',
  name: 'Test',
  language: 'en',
  greeting: null,
  instructions: 'You are the order desk of Acme.',
  brain: { provider: 'openai_compatible', model: 'test-model', base_url: server.baseUrl, api_key_secret: 'llm_key' },
  intents: [],
  knowledgeBase: [],
  voice: null,
  tools: [{ name: 'lookup_order', description: 'Looks an order up.', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
  escalation: { keywords: [], message: 'One moment.' },
  ...over,
});

const secrets = async (orgId: string, name: string) => (orgId === 'org_test' && name === 'llm_key' ? 'sk-test-123' : null);

async function collect(brain: OpenAiCompatibleBrain, input: BrainInput): Promise<Array<BrainAction & { at: number }>> {
  const out: Array<BrainAction & { at: number }> = [];
  for await (const a of brain.respond(input)) out.push({ ...a, at: performance.now() });
  return out;
}

describe('OpenAiCompatibleBrain', () => {
  it('streams sentences as they complete, with the instructions as system prompt and the key from the named secret', async () => {
    server.replies.push({ text: 'Sure, I can help. Which order is it?', chunkSize: 4, gapMs: 30 });
    const brain = new OpenAiCompatibleBrain({ agent: agent(), secrets, timeoutMs: 5000 });
    const actions = await collect(brain, { kind: 'utterance', text: 'i need help with my order' });
    expect(actions.map((a) => a.kind === 'say' && a.text)).toEqual(['Sure, I can help.', 'Which order is it?']);
    // The first sentence was handed over before the stream ended (it is spoken while the rest streams).
    expect(defined(actions[1], 'second action').at - defined(actions[0], 'first action').at).toBeGreaterThan(100);
    const req = server.requests.at(-1)!;
    expect(req.headers.authorization).toBe('Bearer sk-test-123');
    expect(req.body).toMatchObject({ model: 'test-model', stream: true });
    expect(req.body.messages).toEqual([
      { role: 'system', content: 'You are the order desk of Acme.' },
      { role: 'user', content: 'i need help with my order' },
    ]);
    expect(req.body.tools).toHaveLength(2); // lookup_order + escalate_to_human
  });

  it('assembles a tool call split across chunks, and feeds the result back with the conversation', async () => {
    server.replies.push(
      { toolCalls: [{ id: 'call_abc123', name: 'lookup_order', arguments: '{"order_id": "1234"}' }], chunkSize: 3 },
      { text: 'Your order 1234 has shipped.' },
    );
    const brain = new OpenAiCompatibleBrain({ agent: agent(), secrets, timeoutMs: 5000 });
    const first = await collect(brain, { kind: 'utterance', text: 'where is order 1234' });
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ kind: 'tool_call', call: { name: 'lookup_order', arguments: { order_id: '1234' }, call_id: 'call_abc123' } });
    const call = (first[0] as Extract<BrainAction, { kind: 'tool_call' }>).call;
    const second = await collect(brain, { kind: 'tool_result', call, ok: true, result: { status: 'shipped' } });
    expect(second.map((a) => a.kind === 'say' && a.text)).toEqual(['Your order 1234 has shipped.']);
    const messages = server.requests.at(-1)!.body.messages;
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'where is order 1234' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id": "1234"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_abc123', content: '{"status":"shipped"}' },
    ]);
  });

  it('turns the escalate_to_human function into an escalate action', async () => {
    server.replies.push({ toolCalls: [{ id: 'call_esc', name: 'escalate_to_human', arguments: '{"reason":"caller is upset"}' }] });
    const brain = new OpenAiCompatibleBrain({ agent: agent(), secrets, timeoutMs: 5000 });
    const actions = await collect(brain, { kind: 'utterance', text: 'this is ridiculous, get me a manager' });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ kind: 'escalate', reason: 'caller is upset', sentiment: 'negative' });
  });

  it('reports an error body, a timeout and a missing secret as LlmError', async () => {
    server.replies.push({ status: 429, error: 'Rate limit reached for requests' });
    const brain = new OpenAiCompatibleBrain({ agent: agent(), secrets, timeoutMs: 300 });
    await expect(collect(brain, { kind: 'utterance', text: 'hello' })).rejects.toMatchObject({
      code: 'llm_http_error',
      message: expect.stringMatching(/429.*Rate limit/),
    });
    server.replies.push({ hang: true });
    const started = performance.now();
    await expect(collect(brain, { kind: 'utterance', text: 'hello again' })).rejects.toMatchObject({ code: 'llm_timeout' });
    expect(performance.now() - started).toBeLessThan(5000);
    const noKey = new OpenAiCompatibleBrain({
      agent: agent({ brain: { provider: 'openai_compatible', model: 'm', base_url: server.baseUrl, api_key_secret: 'missing' } }),
      secrets,
      timeoutMs: 300,
    });
    await expect(collect(noKey, { kind: 'utterance', text: 'hi' })).rejects.toBeInstanceOf(LlmError);
  });

  it('an early turn the final does not confirm is dropped: its request aborted, its user message gone from the conversation', async () => {
    server.replies.push({ hang: true }, { text: 'We open at nine.' });
    const said: string[] = [];
    const host: AgentHost = {
      sessionId: 'sess_1',
      orgId: 'org_test',
      say: async (text, hold) => {
        said.push(text);
        return { spoken: !hold || (await hold) ? text : '', interrupted: false };
      },
      recordEvent: async () => undefined,
      transfer: async () => 'not_possible',
      end: () => undefined,
      cancelSpeech: () => undefined,
    };
    // A minute's LLM timeout: only the abort on the verdict can end the hanging request within the test.
    const brain = new OpenAiCompatibleBrain({ agent: agent(), secrets, timeoutMs: 60_000 });
    const rt = new AgentRuntime({ agent: agent(), brain, host, tools: new ToolRunner({ timeoutMs: 500, signingSecrets: async () => [] }) });
    const before = server.requests.length;
    expect(rt.customerSaidEarly('where is my order')).toBe(true);
    await expect.poll(() => server.requests.length).toBe(before + 1); // the early request is in flight
    rt.customerFinalAfterEarly('what are your opening hours');
    await rt.idle();
    expect(server.requests).toHaveLength(before + 2);
    expect(server.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You are the order desk of Acme.' },
      { role: 'user', content: 'what are your opening hours' },
    ]);
    expect(said).toEqual(['We open at nine.']); // no apology for the dropped request
    expect(rt.earlyStats).toEqual({ started: 1, confirmed: 0, cancelled: 1 });
  }, 30_000);
});
