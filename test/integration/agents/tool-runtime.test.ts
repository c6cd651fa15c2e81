// The runtime with a real tool webhook (local HTTP): the result goes back to the brain, a slow tool
// gets a spoken filler, a failing, slow or unreachable tool is reported to the brain and the session
// goes on; the tool_called event is written for every call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRuntime, ScriptedBrain, ToolRunner, type AgentDefinition, type AgentHost } from '../../../src/agents/index.js';
import { ToolWebhookServer } from '../../helpers/agents.js';

let server: ToolWebhookServer;
let mode: { status?: number; delayMs?: number; body?: unknown } = {};
beforeAll(async () => {
  server = await ToolWebhookServer.start(() => ({ status: mode.status, delayMs: mode.delayMs, body: mode.body ?? { status: 'shipped' } }));
});
afterAll(async () => {
  await server?.close();
});

function agent(url: string): AgentDefinition {
  return {
    id: 'agt_1',
    orgId: 'org_1',
    name: 'Desk',
    language: 'en',
    greeting: 'Hi.',
    instructions: null,
    brain: { provider: 'scripted' },
    intents: [{ name: 'order_status', examples: ['where is my order'], reply: 'Order {order_id} has {status}.', tool: 'lookup_order' }],
    tools: [{ name: 'lookup_order', description: 'd', parameters: { type: 'object', properties: { order_id: { type: 'string' } } }, webhook_url: url }],
    escalation: null,
    knowledgeBase: [],
    voice: null,
  };
}

function fakeHost() {
  const said: string[] = [];
  const events: Array<{ type: string; data: any }> = [];
  const host: AgentHost = {
    sessionId: 'sess_1',
    orgId: 'org_1',
    say: async (text) => {
      said.push(text);
      return { spoken: text, interrupted: false };
    },
    recordEvent: async (type, data) => void events.push({ type, data }),
    transfer: async () => 'not_possible',
    end: () => undefined,
    cancelSpeech: () => undefined,
  };
  return { host, said, events };
}

function runtime(url: string, timeoutMs = 2000) {
  const h = fakeHost();
  const rt = new AgentRuntime({
    agent: agent(url),
    brain: new ScriptedBrain(agent(url)),
    host: h.host,
    fillerAfterMs: 300,
    tools: new ToolRunner({ timeoutMs, signingSecrets: async () => ['s3cret'] }),
  });
  return { rt, ...h };
}

describe('AgentRuntime tools', () => {
  it('calls the webhook, records the event, and speaks the result; a slow tool gets a filler first', async () => {
    mode = { delayMs: 700 };
    const r = runtime(server.url);
    r.rt.start();
    r.rt.customerSaid('where is my order 5678');
    await r.rt.idle();
    expect(r.said).toEqual(['Hi.', 'One moment, please.', 'Order 5678 has shipped.']);
    expect(r.events).toEqual([
      {
        type: 'ai_agent.tool_called',
        data: { session_id: 'sess_1', tool: { name: 'lookup_order', arguments: { order_id: '5678' }, call_id: expect.stringMatching(/^call_/) } },
      },
    ]);
    expect(server.requests.at(-1)!.headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('reports a failing, timed-out or unreachable tool to the brain and keeps the conversation going', async () => {
    mode = { status: 500, body: { error: 'boom' } };
    const r = runtime(server.url);
    r.rt.customerSaid('where is my order 1');
    await r.rt.idle();
    expect(r.said).toEqual(["Sorry, I couldn't look that up right now."]);

    mode = { delayMs: 1500 };
    const slow = runtime(server.url, 400);
    slow.rt.customerSaid('where is my order 2');
    await slow.rt.idle();
    expect(slow.said).toEqual(['One moment, please.', "Sorry, I couldn't look that up right now."]);

    const gone = runtime('http://127.0.0.1:9/tool');
    gone.rt.customerSaid('where is my order 3');
    await gone.rt.idle();
    expect(gone.said).toEqual(["Sorry, I couldn't look that up right now."]);
    // Still listening afterwards.
    mode = {};
    gone.rt.customerSaid('where is my order 4');
    await gone.rt.idle();
    expect(gone.said.length).toBe(2);
  });
});
