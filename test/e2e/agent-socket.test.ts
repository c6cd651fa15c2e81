// ai_agent and help_chat_voice end to end over the socket with the embedded engines (pocketsphinx,
// espeak-ng): the greeting, an intent answered with a slot value and a signed tool webhook round
// trip, escalation on a socket-only session, barge-in cutting the agent's audio, and a
// knowledge-base answer. Caller speech is flite (recognized reliably by the 8 kHz model).
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway, type TestSocket } from '../helpers/stream.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';
import { createAgentSession, ToolWebhookServer } from '../helpers/agents.js';
import { OpenAiChatServer } from '../helpers/openai-chat-server.js';
import { defined } from '../helpers/defined.js';

const SIGNING_SECRET = 'whsec_agent_tools_test';
let t: StreamTestGateway;
let tools: ToolWebhookServer;
let llm: OpenAiChatServer;

beforeAll(async () => {
  tools = await ToolWebhookServer.start((r) => ({ body: { status: 'shipped', order_id: r.body?.arguments?.order_id ?? null } }));
  llm = await OpenAiChatServer.start();
  t = await startStreamGateway({ engines: 'embedded', overrides: { agents: { secrets: { tool_signing: SIGNING_SECRET, llm_key: 'sk-local-test' } } } });
});
afterAll(async () => {
  await t?.stop();
  await tools?.close();
  await llm?.close();
});

const say = async (text: string, tail = 700) => concatPcm(silence(300), await synthesizeSpeech(text, { voice: 'flite' }), silence(tail));
const agentFinals = (s: TestSocket) => s.of('transcript.final').filter((m) => m.speaker === 'agent');

async function events(sessionId: string, type: string): Promise<any[]> {
  const { rows } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = $1 AND data->>'session_id' = $2 ORDER BY created_at`, [type, sessionId]);
  return rows.map((r) => r.data);
}

const orderAgent = () => ({
  name: 'Order desk',
  language: 'en',
  greeting: 'Hello, this is the order desk.',
  brain: { provider: 'scripted' },
  intents: [
    {
      name: 'order_status',
      examples: ['where is my order', 'what is the status of my order number'],
      reply: 'Your order {order_id} has {status}.',
      tool: 'lookup_order',
    },
    { name: 'opening_hours', examples: ['what are your opening hours', 'when are you open'], reply: 'We are open from nine to five.' },
  ],
  tools: [
    {
      name: 'lookup_order',
      description: 'Looks an order up.',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
      webhook_url: tools.url,
    },
  ],
  escalation: { keywords: ['talk to a person', 'human'], message: 'I will hand you over to a colleague.' },
});

describe('ai_agent over the socket (scripted brain)', () => {
  it('greets, answers an intent with a slot through a signed tool webhook, and escalates', async () => {
    const { id, token } = await createAgentSession(t, orderAgent());
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');

    // The greeting is spoken (audio.output speaker agent) and stored as an agent turn.
    const greeting = await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent', 30_000, 'greeting');
    expect(greeting.text).toBe('Hello, this is the order desk.');
    expect(s.of('audio.output').filter((m) => m.speaker === 'agent').length).toBeGreaterThan(20);

    // "where is my order number one two three four": intent, slot 1234 into the tool arguments.
    await s.sendAudio(await say('where is my order number one two three four'), { pace: 2 });
    const answer = await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent' && /shipped/.test(m.text), 40_000, 'order answer');
    expect(answer.text).toBe('Your order 1234 has shipped.');
    const customer = s.of('transcript.final').find((m) => m.speaker === 'customer')!;
    expect(customer.text).toMatch(/order/);

    // The tool webhook got the arguments, signed with the organization's tool signing secret.
    expect(tools.requests.length).toBeGreaterThanOrEqual(1);
    const req = tools.requests.find((r) => r.body.session_id === id)!;
    expect(req.body).toMatchObject({ tool: 'lookup_order', arguments: { order_id: '1234' } });
    const sig = String(req.headers['service-signature']);
    const ts = /t=(\d+)/.exec(sig)![1];
    expect(sig).toContain(`v1=${createHmac('sha256', SIGNING_SECRET).update(`${ts}.${req.rawBody}`).digest('hex')}`);
    const called = await events(id, 'ai_agent.tool_called');
    expect(called).toEqual([{ session_id: id, tool: { name: 'lookup_order', arguments: { order_id: '1234' }, call_id: req.body.call_id } }]);

    // Escalation on a socket-only session: the event, then the escalation message spoken.
    await s.sendAudio(await say('i want to talk to a person'), { pace: 2 });
    await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent' && /colleague/.test(m.text), 40_000, 'escalation message');
    const [escalation] = await events(id, 'ai_agent.escalation_requested');
    expect(escalation).toMatchObject({ session_id: id, reason: 'keyword: talk to a person', context: { sentiment: 'neutral' } });
    expect(escalation.context.summary).toMatch(/person/);

    // Every agent turn is stored with its speaker.
    await t.registry.get(id)?.flushStore();
    const { rows } = await t.gw.db.query(`SELECT speaker, text, interrupted FROM transcript_turns WHERE session_id = $1 ORDER BY sequence`, [id]);
    expect(rows.filter((r) => r.speaker === 'agent').map((r) => r.text)).toEqual([
      'Hello, this is the order desk.',
      'Your order 1234 has shipped.',
      'I will hand you over to a colleague.',
    ]);
    await s.close();
  }, 150_000);

  it('barge-in: customer speech stops the agent audio and the stored turn keeps only what was played', async () => {
    const long =
      'Hello and welcome to the order desk. I can tell you where your order is. I can also tell you our opening hours and our prices. ' +
      'And I can connect you to a colleague at any time. How can I help you today?';
    const { id, token } = await createAgentSession(t, { ...orderAgent(), greeting: long });
    const s = await t.connect(id, token);
    await s.waitFor((m) => m.type === 'audio.output' && m.speaker === 'agent', 30_000, 'agent audio');
    await s.sendAudio(await say('what are your opening hours', 900), { pace: 1 });
    const cut = await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent', 30_000, 'interrupted greeting');
    expect(cut.interrupted).toBe(true);
    expect(cut.text.length).toBeGreaterThan(0);
    expect(cut.text.length).toBeLessThan(long.length);
    expect(long.startsWith(cut.text.replace(/\.$/, '').split(' ').slice(0, 3).join(' '))).toBe(true);

    // Agent audio stopped within 200 ms of the barge-in decision (plus one socket hop).
    const bargeInAt = t.registry.get(id)!.lastBargeInAt;
    expect(bargeInAt).toBeGreaterThan(0);
    const greetingFrames = s.of('audio.output').filter((m) => m.speaker === 'agent' && m.receivedAt <= bargeInAt + 1000);
    const lastGreetingFrame = defined(greetingFrames[greetingFrames.length - 1], 'last greeting frame');
    expect(lastGreetingFrame.receivedAt - bargeInAt).toBeLessThan(200);

    // The customer's question is then answered.
    await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent' && /nine to five/.test(m.text), 40_000, 'answer after barge-in');
    await t.registry.get(id)?.flushStore();
    const { rows } = await t.gw.db.query(`SELECT text, interrupted FROM transcript_turns WHERE session_id = $1 AND speaker = 'agent' ORDER BY sequence`, [id]);
    expect(rows[0]).toEqual({ text: cut.text, interrupted: true });
    expect(rows[rows.length - 1]).toMatchObject({ interrupted: false });
    await s.close();
  }, 150_000);
});

describe('help_chat_voice over the socket', () => {
  it('answers a spoken question from the best knowledge-base passage', async () => {
    const { id, token } = await createAgentSession(
      t,
      {
        name: 'Help desk',
        language: 'en',
        brain: { provider: 'scripted' },
        knowledge_base: [
          {
            title: 'Resetting your password',
            content: 'To reset your password, open the sign in page and choose forgot password. We email you a link that works for one hour.',
          },
          { title: 'Opening hours', content: 'Our stores are open from nine in the morning to six in the evening, Monday to Saturday.' },
          { title: 'Shipping costs', content: 'Shipping is free for orders over fifty dollars.' },
        ],
      },
      { mode: 'help_chat_voice' },
    );
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.sendAudio(await say('what are your opening hours'), { pace: 2 });
    const answer = await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent', 40_000, 'kb answer');
    expect(answer.text).toBe('Our stores are open from nine in the morning to six in the evening, Monday to Saturday.');
    expect(s.of('audio.output').filter((m) => m.speaker === 'agent').length).toBeGreaterThan(20);
    await s.close();
    expect(agentFinals(s)).toHaveLength(1);
  }, 120_000);
});

describe('ai_agent with an openai_compatible brain (local chat-completions server)', () => {
  it('streams a tool call, runs the tool webhook, feeds the result back and speaks the answer', async () => {
    llm.replies.push(
      { toolCalls: [{ id: 'call_e2e_1', name: 'lookup_order', arguments: '{"order_id":"1234"}' }], chunkSize: 4 },
      { text: 'Your order 1234 has shipped. Is there anything else?', chunkSize: 5 },
    );
    const { id, token } = await createAgentSession(t, {
      ...orderAgent(),
      greeting: null,
      intents: [],
      brain: { provider: 'openai_compatible', model: 'local-test', base_url: llm.baseUrl, api_key_secret: 'llm_key' },
      instructions: 'You are the order desk. Use lookup_order for order questions.',
    });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.sendAudio(await say('where is my order number one two three four'), { pace: 2 });
    await s.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent' && /anything else/.test(m.text), 40_000, 'llm answer');
    const said = agentFinals(s).map((m) => m.text);
    expect(said).toEqual(['Your order 1234 has shipped.', 'Is there anything else?']);

    const first = defined(llm.requests.at(-2), 'first LLM request');
    const second = defined(llm.requests.at(-1), 'second LLM request');
    expect(first.headers.authorization).toBe('Bearer sk-local-test');
    expect(first.body.messages[0]).toEqual({ role: 'system', content: 'You are the order desk. Use lookup_order for order questions.' });
    expect(defined(first.body.messages[1], 'user message').content).toMatch(/order/);
    const toolMessage = second.body.messages.find((m) => m.role === 'tool');
    expect(toolMessage).toEqual({ role: 'tool', tool_call_id: 'call_e2e_1', content: JSON.stringify({ status: 'shipped', order_id: '1234' }) });
    expect(await events(id, 'ai_agent.tool_called')).toEqual([
      { session_id: id, tool: { name: 'lookup_order', arguments: { order_id: '1234' }, call_id: 'call_e2e_1' } },
    ]);
    await s.close();
  }, 120_000);
});
