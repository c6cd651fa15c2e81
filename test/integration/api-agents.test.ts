// Conformance: the Agents API (SPEC "Agents", "Pagination") against real PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';

let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  gw = await startTestGateway();
  org = await gw.createOrg();
});
afterAll(async () => {
  await gw?.stop();
});

const AGENT_KEYS = [
  'brain',
  'created_at',
  'description',
  'escalation',
  'greeting',
  'id',
  'instructions',
  'intents',
  'knowledge_base',
  'language',
  'metadata',
  'name',
  'object',
  'tools',
  'updated_at',
  'voice',
];

const FULL = {
  name: 'Billing helper',
  description: 'Answers billing questions',
  language: 'en',
  voice: { voice_id: 'en-us', speed: 1.1 },
  greeting: 'Hello, billing here.',
  instructions: 'Be brief.',
  brain: { provider: 'openai_compatible', model: 'llama3', base_url: 'http://127.0.0.1:11434/v1' },
  intents: [
    { name: 'balance', examples: ['what is my balance', 'how much do I owe'], reply: 'Let me check.', tool: 'lookup_balance' },
    { name: 'bye', examples: ['goodbye'], reply: 'Bye!', end_call: true },
  ],
  tools: [
    {
      name: 'lookup_balance',
      description: 'Looks up a balance',
      parameters: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
      webhook_url: 'https://hooks.example.com/balance',
    },
  ],
  escalation: { keywords: ['human', 'agent'], message: 'Transferring you now.', transfer_to: '+14155550100' },
  knowledge_base: [{ title: 'Refunds', content: 'Refunds take 5 days.' }],
  metadata: { team: 'billing' },
};

function expectInvalid(res: { status: number; body: any }, code: string, param: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.param).toBe(param);
}

describe('create and retrieve', () => {
  it('creates an agent with every field and returns exactly the agent object', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/agents', FULL);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(AGENT_KEYS);
    expect(res.body.id).toMatch(/^agt_[0-9a-z]{26}$/);
    expect(res.body).toMatchObject({ ...FULL, object: 'agent', voice: { voice_id: 'en-us', stability: 0.5, similarity_boost: 0.75, speed: 1.1 } });
    expect(res.body.created_at).toBe(res.body.updated_at);
    const got = await gw.api(org.key, 'GET', `/v1/agents/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('fills defaults for a minimal agent', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/agents', { name: 'Min' });
    expect(res.body).toMatchObject({
      name: 'Min',
      description: null,
      language: null,
      voice: null,
      greeting: null,
      instructions: null,
      brain: { provider: 'scripted' },
      intents: [],
      tools: [],
      escalation: null,
      knowledge_base: [],
      metadata: null,
    });
  });

  it('honours Idempotency-Key on create', async () => {
    const headers = { 'idempotency-key': 'agent-1' };
    const a = await gw.api(org.key, 'POST', '/v1/agents', { name: 'Once' }, headers);
    const b = await gw.api(org.key, 'POST', '/v1/agents', { name: 'Once' }, headers);
    expect(b.body.id).toBe(a.body.id);
  });
});

describe('validation', () => {
  const cases: Array<[string, object, string, string]> = [
    ['missing name', { description: 'x' }, 'invalid_request', 'name'],
    ['empty name', { name: '' }, 'invalid_request', 'name'],
    ['unknown field', { name: 'a', colour: 'red' }, 'invalid_request', 'colour'],
    ['bad language', { name: 'a', language: 'english' }, 'invalid_request', 'language'],
    ['voice out of range', { name: 'a', voice: { speed: 3 } }, 'invalid_request', 'voice.speed'],
    ['unknown brain', { name: 'a', brain: { provider: 'magic' } }, 'invalid_request', 'brain.provider'],
    [
      'openai brain without model',
      { name: 'a', brain: { provider: 'openai_compatible', base_url: 'https://x.example.com' } },
      'validation_error',
      'brain.model',
    ],
    ['openai brain without base_url', { name: 'a', brain: { provider: 'openai_compatible', model: 'm' } }, 'validation_error', 'brain.base_url'],
    ['scripted brain with a model', { name: 'a', brain: { provider: 'scripted', model: 'm' } }, 'validation_error', 'brain.model'],
    ['bad base_url', { name: 'a', brain: { provider: 'openai_compatible', model: 'm', base_url: 'ftp://x' } }, 'invalid_request', 'brain.base_url'],
    ['intent without examples', { name: 'a', intents: [{ name: 'i', examples: [], reply: 'r' }] }, 'invalid_request', 'intents.0.examples'],
    ['intent without reply', { name: 'a', intents: [{ name: 'i', examples: ['x'] }] }, 'invalid_request', 'intents.0.reply'],
    ['intent naming an unknown tool', { name: 'a', intents: [{ name: 'i', examples: ['x'], reply: 'r', tool: 'nope' }] }, 'validation_error', 'intents.0.tool'],
    [
      'duplicate intents',
      {
        name: 'a',
        intents: [
          { name: 'i', examples: ['x'], reply: 'r' },
          { name: 'i', examples: ['y'], reply: 'r' },
        ],
      },
      'validation_error',
      'intents.1.name',
    ],
    [
      'tool parameters not an object schema',
      { name: 'a', tools: [{ name: 't', description: 'd', parameters: { type: 'string' } }] },
      'validation_error',
      'tools.0.parameters',
    ],
    [
      'tool parameters not JSON Schema',
      { name: 'a', tools: [{ name: 't', description: 'd', parameters: { type: 'object', properties: 5 } }] },
      'validation_error',
      'tools.0.parameters',
    ],
    [
      'tool webhook over http',
      { name: 'a', tools: [{ name: 't', description: 'd', parameters: { type: 'object' }, webhook_url: 'http://x.example.com' }] },
      'invalid_request',
      'tools.0.webhook_url',
    ],
    ['tool name with spaces', { name: 'a', tools: [{ name: 'look up', description: 'd', parameters: { type: 'object' } }] }, 'invalid_request', 'tools.0.name'],
    [
      'duplicate tools',
      {
        name: 'a',
        tools: [
          { name: 't', description: 'd', parameters: { type: 'object' } },
          { name: 't', description: 'd', parameters: { type: 'object' } },
        ],
      },
      'validation_error',
      'tools.1.name',
    ],
    ['escalation without message', { name: 'a', escalation: { keywords: ['human'] } }, 'invalid_request', 'escalation.message'],
    [
      'escalation transfer_to not a number or URI',
      { name: 'a', escalation: { keywords: [], message: 'm', transfer_to: 'bob' } },
      'invalid_request',
      'escalation.transfer_to',
    ],
    ['article without content', { name: 'a', knowledge_base: [{ title: 't' }] }, 'invalid_request', 'knowledge_base.0.content'],
    ['nested metadata', { name: 'a', metadata: { a: [1] } }, 'invalid_request', 'metadata.a'],
  ];
  for (const [what, body, code, param] of cases) {
    it(`refuses ${what}`, async () => {
      expectInvalid(await gw.api(org.key, 'POST', '/v1/agents', body), code, param);
    });
  }
});

describe('update and delete', () => {
  it('patches only the given fields, clears nullable fields with null, and bumps updated_at', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/agents', FULL)).body;
    const res = await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, { name: 'Renamed', description: null, voice: { speed: 2 } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(AGENT_KEYS);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      description: null,
      voice: { stability: 0.5, similarity_boost: 0.75, speed: 2 },
      greeting: FULL.greeting,
      tools: FULL.tools,
    });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect(res.body.created_at).toBe(created.created_at);
  });

  it('checks intent → tool references against the agent after the change', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/agents', FULL)).body;
    expectInvalid(await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, { tools: [] }), 'validation_error', 'intents.0.tool');
    expect((await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, { tools: [], intents: [] })).status).toBe(200);
  });

  it('refuses an empty patch, a null name and unknown fields', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/agents', { name: 'P' })).body;
    expect((await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, {})).status).toBe(400);
    expectInvalid(await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, { name: null }), 'invalid_request', 'name');
    expectInvalid(await gw.api(org.key, 'PATCH', `/v1/agents/${created.id}`, { owner: 'x' }), 'invalid_request', 'owner');
  });

  it('deletes, then answers 404 agent_not_found', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/agents', { name: 'D' })).body;
    const res = await gw.api(org.key, 'DELETE', `/v1/agents/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, object: 'agent', deleted: true });
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as Array<[string, object?]>) {
      const again = await gw.api(org.key, method, `/v1/agents/${created.id}`, body);
      expect(again.status).toBe(404);
      expect(again.body.error).toMatchObject({ type: 'not_found_error', code: 'agent_not_found', param: 'agent_id' });
    }
  });

  it("hides other organizations' agents (404, unchanged)", async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/agents', { name: 'Mine' })).body;
    const other = await gw.createOrg();
    for (const [method, body] of [['GET'], ['PATCH', { name: 'Theirs' }], ['DELETE']] as Array<[string, object?]>) {
      const res = await gw.api(other.key, method, `/v1/agents/${created.id}`, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('agent_not_found');
    }
    expect((await gw.api(other.key, 'GET', '/v1/agents')).body.data).toEqual([]);
    expect((await gw.api(org.key, 'GET', `/v1/agents/${created.id}`)).body.name).toBe('Mine');
  });
});

describe('list', () => {
  it('pages with limit, starting_after and ending_before (has_more, next_cursor, url)', async () => {
    const o = await gw.createOrg();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await gw.api(o.key, 'POST', '/v1/agents', { name: `a${i}` })).body.id);
    const first = await gw.api(o.key, 'GET', '/v1/agents');
    expect(Object.keys(first.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object', 'url']);
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(0, 20));
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[19], url: '/v1/agents' });
    expect(Object.keys(first.body.data[0]).sort()).toEqual(AGENT_KEYS);
    const rest = await gw.api(o.key, 'GET', `/v1/agents?starting_after=${first.body.next_cursor}`);
    expect(rest.body.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(20));
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
    const back = await gw.api(o.key, 'GET', `/v1/agents?limit=10&ending_before=${ids[20]}`);
    expect(back.body.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(10, 20));
    expect(back.body).toMatchObject({ has_more: true, next_cursor: ids[10] });
    const small = await gw.api(o.key, 'GET', '/v1/agents?limit=1');
    expect(small.body.data).toHaveLength(1);
    expect((await gw.api(o.key, 'GET', '/v1/agents?limit=100')).body.data).toHaveLength(25);
    expect((await gw.api(o.key, 'GET', '/v1/agents?limit=101')).status).toBe(400);
  });
});
