// A turn started from the recognizer's hypothesis before the final: its reply is prepared at once
// and held until the final confirms it (or, with speakBeforeFinal, played at once), it acts (tools,
// escalation) only once the final confirms it, and a final asking something else cancels it
// (speech dropped or cut, brain state back) and is answered instead. One utterance never gets two
// replies.
import { describe, expect, it } from 'vitest';
import { AgentRuntime, ScriptedBrain, ToolRunner, type AgentDefinition, type AgentHost, type SpokenResult } from '../../../src/agents/index.js';

const agent: AgentDefinition = {
  id: 'agt_1',
  orgId: 'org_1',
  name: 'Desk',
  language: 'en',
  greeting: null,
  instructions: null,
  brain: { provider: 'scripted' },
  intents: [
    { name: 'opening_hours', examples: ['what are your opening hours'], reply: 'We are open from nine to five.' },
    { name: 'order_status', examples: ['where is my order'], reply: 'Your order {order_id} is {status}.', tool: 'lookup_order' },
    { name: 'refund', examples: ['i want a refund'], reply: 'I can help with a refund.' },
  ],
  tools: [{ name: 'lookup_order', description: 'order status', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
  escalation: null,
  knowledgeBase: [],
  voice: null,
};

/** Speech that plays until the test says so (`playAll`) or the runtime cancels it; held speech waits for its hold. */
function host() {
  const said: string[] = [];
  const holds: Array<Promise<boolean> | undefined> = [];
  const heard: SpokenResult[] = [];
  const events: string[] = [];
  const playing: Array<(r: SpokenResult) => void> = [];
  let cancels = 0;
  const h: AgentHost = {
    sessionId: 'sess_1',
    orgId: 'org_1',
    say: (text, hold) =>
      new Promise<SpokenResult>((resolve) => {
        said.push(text);
        holds.push(hold);
        const done = (r: SpokenResult) => {
          heard.push(r);
          resolve(r);
        };
        if (!hold) return void playing.push(done);
        void hold.then((go) => (go ? playing.push(done) : done({ spoken: '', interrupted: false })));
      }),
    recordEvent: async (type) => void events.push(type),
    transfer: async () => 'not_possible',
    end: () => undefined,
    cancelSpeech: () => {
      cancels++;
      for (const done of playing.splice(0)) done({ spoken: '', interrupted: true });
    },
  };
  const playAll = () => {
    for (const done of playing.splice(0)) done({ spoken: 'all', interrupted: false });
  };
  return { h, said, heard, events, holds, playAll, cancels: () => cancels };
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

function runtime(hh: ReturnType<typeof host>, speakBeforeFinal = true) {
  return new AgentRuntime({
    agent,
    brain: new ScriptedBrain(agent),
    host: hh.h,
    speakBeforeFinal,
    tools: new ToolRunner({ timeoutMs: 500, signingSecrets: async () => [] }),
  });
}

describe('early turns, held until the final (the default)', () => {
  it('prepares the reply at once and releases it when the final confirms it', async () => {
    const hh = host();
    const rt = runtime(hh, false);
    rt.customerSaidEarly('what are your opening hours');
    await flush();
    expect(hh.said).toEqual(['We are open from nine to five.']); // synthesized now…
    expect(hh.holds[0]).toBeInstanceOf(Promise); // …held
    hh.playAll();
    expect(hh.heard).toEqual([]);
    rt.customerFinalAfterEarly('what are your opening hours');
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.heard).toEqual([{ spoken: 'all', interrupted: false }]);
    expect(hh.said).toHaveLength(1);
  });

  it('drops the held reply unheard when the final asks something else, and answers the final', async () => {
    const hh = host();
    const rt = runtime(hh, false);
    rt.customerSaidEarly('what are your opening hours');
    await flush();
    rt.customerFinalAfterEarly('i want a refund');
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.said).toEqual(['We are open from nine to five.', 'I can help with a refund.']);
    expect(hh.heard).toEqual([
      { spoken: '', interrupted: false },
      { spoken: 'all', interrupted: false },
    ]);
    expect(hh.holds[1]).toBeUndefined(); // the final's own reply is not held
    expect(hh.cancels()).toBe(0); // nothing was audible: nothing to cut
  });
});

describe('early turns spoken before the final (speakBeforeFinal)', () => {
  it('speaks the hypothesis at once; the same final confirms it and gets no second reply', async () => {
    const hh = host();
    const rt = runtime(hh);
    expect(rt.customerSaidEarly('what are your opening hours')).toBe(true);
    await flush();
    expect(hh.said).toEqual(['We are open from nine to five.']);
    rt.customerFinalAfterEarly('What are your opening hours?');
    hh.playAll();
    await rt.idle();
    expect(hh.said).toEqual(['We are open from nine to five.']);
    expect(hh.cancels()).toBe(0);
    expect(rt.earlyStats).toEqual({ started: 1, confirmed: 1, cancelled: 0 });
  });

  it('a final asking something else cuts the early reply and is answered instead', async () => {
    const hh = host();
    const rt = runtime(hh);
    rt.customerSaidEarly('what are your opening hours');
    await flush();
    rt.customerFinalAfterEarly('i want a refund');
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.said).toEqual(['We are open from nine to five.', 'I can help with a refund.']);
    expect(hh.heard[0]).toEqual({ spoken: '', interrupted: true });
    expect(hh.cancels()).toBe(1);
    expect(rt.earlyStats).toEqual({ started: 1, confirmed: 0, cancelled: 1 });
  });

  it('a final worded differently but asking the same (same intent and slots) confirms the reply', async () => {
    const hh = host();
    const rt = runtime(hh);
    rt.customerSaidEarly('what are your opening hours');
    await flush();
    rt.customerFinalAfterEarly('what are the opening hours');
    hh.playAll();
    await rt.idle();
    expect(hh.said).toHaveLength(1);
    expect(rt.earlyStats.confirmed).toBe(1);
  });

  it('calls no tool on an unconfirmed hypothesis: the call waits for the final, and a different final drops it', async () => {
    const hh = host();
    const rt = runtime(hh);
    rt.customerSaidEarly('where is my order one two three');
    await flush();
    expect(hh.events).toEqual([]); // waiting for the verdict
    rt.customerFinalAfterEarly('what are your opening hours');
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.events).toEqual([]);
    expect(hh.said).toEqual(['We are open from nine to five.']);

    const h2 = host();
    const rt2 = runtime(h2);
    rt2.customerSaidEarly('where is my order one two three');
    await flush();
    rt2.customerFinalAfterEarly('where is my order one two three');
    await flush();
    h2.playAll();
    await rt2.idle();
    expect(h2.events).toEqual(['ai_agent.tool_called']); // confirmed: the tool runs once
  });

  it('a final that comes before the early turn could start replaces it without a word of it spoken', async () => {
    const hh = host();
    const rt = runtime(hh);
    rt.customerSaid('what are your opening hours'); // a reply still playing holds the queue
    await flush();
    rt.customerSaidEarly('i want a refund');
    rt.customerFinalAfterEarly('where is my order one two three');
    hh.playAll();
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.said[1]).not.toBe('I can help with a refund.');
    expect(hh.said.filter((s) => s === 'I can help with a refund.')).toHaveLength(0);
    expect(hh.cancels()).toBe(0);
  });

  it('no final at all (recognizer error, empty final): the early reply is cut and nothing else is said', async () => {
    const hh = host();
    const rt = runtime(hh);
    rt.customerSaidEarly('what are your opening hours');
    await flush();
    rt.customerFinalAfterEarly(null);
    await rt.idle();
    expect(hh.said).toHaveLength(1);
    expect(hh.cancels()).toBe(1);
  });

  it('one early turn at a time, and none for a brain that cannot restore its state', async () => {
    const hh = host();
    const rt = runtime(hh);
    expect(rt.customerSaidEarly('what are your opening hours')).toBe(true);
    expect(rt.customerSaidEarly('i want a refund')).toBe(false);
    const plain = new AgentRuntime({
      agent,
      brain: { async *respond() {} },
      host: hh.h,
      tools: new ToolRunner({ timeoutMs: 500, signingSecrets: async () => [] }),
    });
    expect(plain.customerSaidEarly('what are your opening hours')).toBe(false);
  });

  it('restores the brain: a cancelled misunderstanding does not count toward escalation', async () => {
    const esc: AgentDefinition = { ...agent, escalation: { keywords: [], message: 'Connecting you.' } };
    const hh = host();
    const rt = new AgentRuntime({
      agent: esc,
      brain: new ScriptedBrain(esc),
      host: hh.h,
      tools: new ToolRunner({ timeoutMs: 500, signingSecrets: async () => [] }),
    });
    rt.customerSaid('blah blah nonsense'); // miss 1
    await flush();
    hh.playAll();
    rt.customerSaidEarly('zzz qqq words'); // would be miss 2 → escalation, but the final corrects it
    await flush();
    rt.customerFinalAfterEarly('what are your opening hours');
    await flush();
    hh.playAll();
    await flush();
    hh.playAll();
    await rt.idle();
    expect(hh.events).toEqual([]);
    expect(hh.said.at(-1)).toBe('We are open from nine to five.');
  });
});
