// Conformance: POST /v1/sessions, GET /v1/sessions/{id}, POST …/end, GET …/transcript against real
// PostgreSQL and Redis, shapes checked key by key (SPEC "Session object", "Create-session request fields").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { newId } from '../../src/ids.js';
import { activateSession } from '../../src/sessions/index.js';
import { resolveStreamToken } from '../../src/coord/stream-tokens.js';
import { buildApp } from '../../src/api/app.js';

let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  gw = await startTestGateway();
  org = await gw.createOrg();
});
afterAll(async () => {
  await gw?.stop();
});

const TRANSLATION = { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' };
const CREATE_KEYS = [
  'id',
  'object',
  'status',
  'mode',
  'configuration_mode',
  'source_language',
  'target_language',
  'provider',
  'recording',
  'metadata',
  'created_at',
  'stream',
];
const keys = (o: object) => Object.keys(o).sort();

function expectInvalid(
  res: { status: number; body: any },
  code: string,
  param: string | undefined,
  type = code === 'invalid_request' ? 'validation_error' : 'invalid_request_error',
) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.type).toBe(type);
  expect(res.body.error.param).toBe(param);
}

async function addConnection(orgId: string, opts: { provider?: string; status?: string; valid?: boolean } = {}): Promise<string> {
  const id = newId('pcon');
  await gw.db.query(`INSERT INTO provider_connections (id, org_id, provider, host, status, credentials_valid) VALUES ($1, $2, $3, '127.0.0.1', $4, $5)`, [
    id,
    orgId,
    opts.provider ?? 'carrier_a',
    opts.status ?? 'active',
    opts.valid ?? true,
  ]);
  return id;
}

async function addNumber(orgId: string, number: string, connectionId: string | null = null): Promise<void> {
  await gw.db.query('INSERT INTO phone_numbers (id, org_id, number, connection_id) VALUES ($1, $2, $3, $4)', [newId('pn'), orgId, number, connectionId]);
}

describe('POST /v1/sessions: success', () => {
  it('returns 201 with exactly the SPEC fields, defaults and a stream', async () => {
    const before = Date.now();
    const res = await gw.api(org.key, 'POST', '/v1/sessions', TRANSLATION);
    expect(res.status).toBe(201);
    const s = res.body;
    expect(keys(s)).toEqual([...CREATE_KEYS].sort());
    expect(s.id).toMatch(/^sess_[0-9a-z]{26}$/);
    expect(s).toMatchObject({
      object: 'session',
      status: 'created',
      mode: 'bidirectional_translation',
      configuration_mode: null,
      source_language: 'en',
      target_language: 'es',
      provider: 'webrtc',
      metadata: null,
    });
    expect(s.recording).toEqual({ enabled: false, mode: 'dual_channel', consent_required: false, consent_status: 'not_required' });
    expect(keys(s.stream)).toEqual(['expires_at', 'token', 'url']);
    const host = new URL(gw.config.publicUrl).host;
    expect(s.stream.url).toBe(`ws://${host}/v1/sessions/${s.id}/connect`);
    expect(s.stream.token).toMatch(/^kst_[0-9a-z]{32}$/);
    const created = Date.parse(s.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    // expires_at = issue + 5 minutes
    expect(Date.parse(s.stream.expires_at) - created).toBeGreaterThanOrEqual(299_000);
    expect(Date.parse(s.stream.expires_at) - created).toBeLessThanOrEqual(301_000);
    expect(await resolveStreamToken(gw.redis, s.stream.token)).toBe(s.id);
    expect(await gw.redis.ttl(`stoken:${s.stream.token}`)).toBeGreaterThan(290);
  });

  it('writes session.created into the outbox with the SPEC data fields', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: { ticket: 'T-9', vip: true } });
    const { rows } = await gw.db.query(`SELECT type, api_version, data FROM webhook_events WHERE data->>'id' = $1`, [res.body.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].type).toBe('session.created');
    expect(rows[0].api_version).toBe('v1');
    expect(rows[0].data).toEqual({
      id: res.body.id,
      object: 'session',
      status: 'created',
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      metadata: { ticket: 'T-9', vip: true },
      created_at: res.body.created_at,
    });
  });

  it('echoes every optional field and stores audio and voice defaults', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', {
      mode: 'assistive_translation',
      configuration_mode: 'cfg-7',
      source_language: 'fr',
      target_language: 'de',
      audio: { sample_rate_hz: 8000, encoding: 'mulaw', channels: 1 },
      voice: { voice_id: 'de', speed: 1.5 },
      recording: { enabled: true, mode: 'mixed', consent_required: true },
      metadata: { a: 'x', n: 1, b: false, z: null },
    });
    expect(res.status).toBe(201);
    expect(res.body.configuration_mode).toBe('cfg-7');
    expect(res.body.recording).toEqual({ enabled: true, mode: 'mixed', consent_required: true, consent_status: 'pending' });
    expect(res.body.metadata).toEqual({ a: 'x', n: 1, b: false, z: null });
    const { rows } = await gw.db.query('SELECT audio, voice FROM sessions WHERE id = $1', [res.body.id]);
    expect(rows[0].audio).toEqual({ sample_rate_hz: 8000, encoding: 'mulaw', channels: 1 });
    expect(rows[0].voice).toEqual({ voice_id: 'de', stability: 0.5, similarity_boost: 0.75, speed: 1.5 });
  });

  it('accepts omitted languages (auto-detect) as null, and help_chat_voice without an agent', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' });
    expect(res.status).toBe(201);
    expect(res.body.source_language).toBeNull();
    expect(res.body.target_language).toBeNull();
  });

  it('accepts source_language and target_language null (auto-detect), as the session object shows them', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', source_language: null, target_language: null });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.source_language).toBeNull();
    expect(res.body.target_language).toBeNull();
    // Any other non-string is still refused.
    const bad = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, source_language: 5 });
    expectInvalid(bad, 'invalid_request', 'source_language');
    expect(bad.body.error.message).toMatch(/string or null/);
  });

  it('uses wss for an https public URL', async () => {
    const app = await buildApp({ config: { ...gw.config, publicUrl: 'https://voice.example.com' }, logger: gw.logger, db: gw.db, redis: gw.redis });
    try {
      const res = await app.inject({ method: 'POST', url: '/v1/sessions', headers: { authorization: `Bearer ${org.key}` }, payload: TRANSLATION });
      expect(res.statusCode).toBe(201);
      expect(res.json().stream.url).toBe(`wss://voice.example.com/v1/sessions/${res.json().id}/connect`);
    } finally {
      await app.close();
    }
  });
});

describe('POST /v1/sessions: request rules', () => {
  it('refuses a mode outside the four with unsupported_mode, and a missing mode as invalid_request', async () => {
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'karaoke' }), 'unsupported_mode', 'mode');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', {}), 'invalid_request', 'mode');
  });

  it('refuses codes outside ISO 639-1 naming the field, with the SPEC message', async () => {
    for (const [field, value] of [
      ['source_language', 'xx'],
      ['target_language', 'eng'],
      ['source_language', 'EN'],
      ['target_language', 'en-US'],
      ['source_language', 'bh'],
    ] as const) {
      const res = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, [field]: value });
      expectInvalid(res, 'invalid_request', field);
      expect(res.body.error.message).toMatch(/must be a valid ISO 639-1 code/);
    }
    expect((await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, source_language: 'zu', target_language: 'yo' })).status).toBe(201);
  });

  it('refuses a top-level provider by name', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, provider: { type: 'carrier_a' } });
    expectInvalid(res, 'invalid_request', 'provider');
    expect(res.body.error.message).toMatch(/routing/);
  });

  it('refuses unknown fields and out-of-range hints naming the field', async () => {
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, colour: 'red' }), 'invalid_request', 'colour');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, voice: { stability: 1.5 } }), 'invalid_request', 'voice.stability');
    expectInvalid(
      await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, voice: { similarity_boost: -0.1 } }),
      'invalid_request',
      'voice.similarity_boost',
    );
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, voice: { speed: 0.4 } }), 'invalid_request', 'voice.speed');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, voice: { speed: '1' } }), 'invalid_request', 'voice.speed');
    expectInvalid(
      await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, audio: { sample_rate_hz: 16000 } }),
      'invalid_request',
      'audio.sample_rate_hz',
    );
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, audio: { encoding: 'opus' } }), 'invalid_request', 'audio.encoding');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, audio: { channels: 2 } }), 'invalid_request', 'audio.channels');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, recording: { enabled: 'yes' } }), 'invalid_request', 'recording.enabled');
    expectInvalid(
      await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, recording: { consent_status: 'maybe' } }),
      'invalid_request',
      'recording.consent_status',
    );
  });

  it('names every allowed value when a field takes one of several', async () => {
    const consent = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, recording: { consent_status: 'maybe' } });
    expectInvalid(consent, 'invalid_request', 'recording.consent_status');
    for (const value of ['granted', 'denied', 'pending', 'not_required']) expect(consent.body.error.message).toContain(value);
    const mode = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, recording: { mode: 'stereo' } });
    expectInvalid(mode, 'invalid_request', 'recording.mode');
    for (const value of ['dual_channel', 'mixed']) expect(mode.body.error.message).toContain(value);
  });

  it('reports a non-JSON Content-Type as such, not as a body of the wrong type', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await gw.api(org.key, 'POST', '/v1/sessions', JSON.stringify(TRANSLATION), { 'content-type': contentType });
      expectInvalid(res, 'invalid_request', undefined);
      expect(res.body.error.message).toBe(`Content-Type must be application/json, not ${contentType}.`);
    }
  });

  it('refuses two equal languages in a translation mode', async () => {
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, target_language: 'en' }), 'validation_error', 'target_language');
  });

  it('enforces the documented metadata limits', async () => {
    const many = Object.fromEntries(Array.from({ length: gw.config.limits.metadataMaxKeys + 1 }, (_, i) => [`k${i}`, i]));
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: many }), 'invalid_request', 'metadata');
    const longKey = 'k'.repeat(41);
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: { [longKey]: 1 } }), 'invalid_request', `metadata.${longKey}`);
    const big = { a: 'x'.repeat(gw.config.limits.metadataMaxBytes) };
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: big }), 'invalid_request', 'metadata');
    const nested = await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: { a: { b: 1 } } });
    expectInvalid(nested, 'invalid_request', 'metadata.a');
    expect(nested.body.error.message).toBe("'metadata.a' must be string, number, boolean or null.");
  });
});

describe('POST /v1/sessions: routing', () => {
  it('routes a managed number (bound to a connection) to that carrier and echoes phone_number', async () => {
    const o = await gw.createOrg();
    const pcon = await addConnection(o.orgId, { provider: 'carrier_b' });
    await addNumber(o.orgId, '+14155550101', pcon);
    await addNumber(o.orgId, '+14155550102');
    const bound = await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { phone_number: '+14155550101', direction: 'inbound' } });
    expect(bound.status).toBe(201);
    expect(keys(bound.body)).toEqual([...CREATE_KEYS, 'phone_number'].sort());
    expect(bound.body.provider).toBe('carrier_b');
    expect(bound.body.phone_number).toBe('+14155550101');
    const { rows } = await gw.db.query('SELECT phone_number, connection_id, routing FROM sessions WHERE id = $1', [bound.body.id]);
    expect(rows[0]).toEqual({ phone_number: '+14155550101', connection_id: pcon, routing: { phone_number: '+14155550101', direction: 'inbound' } });
    const unbound = await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { phone_number: '+14155550102' } });
    expect(unbound.body.provider).toBe('sip');
  });

  it('refuses a number that is not E.164, or not managed by this organization', async () => {
    const o = await gw.createOrg();
    const other = await gw.createOrg();
    await addNumber(other.orgId, '+14155550199');
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { phone_number: '4155550101' } }),
      'invalid_request',
      'routing.phone_number',
    );
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { phone_number: '+14155550199' } }),
      'phone_number_not_found',
      'routing.phone_number',
    );
  });

  it('routes a connection to its carrier; refuses missing, disabled, foreign and invalid connections', async () => {
    const o = await gw.createOrg();
    const other = await gw.createOrg();
    const ok = await addConnection(o.orgId, { provider: 'carrier_a' });
    const disabled = await addConnection(o.orgId, { status: 'disabled' });
    const invalid = await addConnection(o.orgId, { valid: false });
    const foreign = await addConnection(other.orgId);
    const res = await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: ok } });
    expect(res.status).toBe(201);
    expect(res.body.provider).toBe('carrier_a');
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: 'pcon_nope' } }),
      'connection_not_found',
      'routing.connection_id',
    );
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: disabled } }),
      'connection_not_found',
      'routing.connection_id',
    );
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: foreign } }),
      'connection_not_found',
      'routing.connection_id',
    );
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: invalid } }),
      'connection_invalid',
      'routing.connection_id',
    );
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { connection_id: 'conn_1' } }),
      'invalid_request',
      'routing.connection_id',
    );
  });

  it('routes SIP when enabled, with X- headers only; sip_not_enabled otherwise', async () => {
    const off = await gw.createOrg();
    const sip = { type: 'sip', sip: { from_uri: 'sip:agent@example.com', to_uri: 'sip:+14155550123@trunk.example.com', headers: { 'X-Ticket': 'T-1' } } };
    expectInvalid(await gw.api(off.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: sip }), 'sip_not_enabled', 'routing.type');
    const on = await gw.createOrg({ changes: { sipEnabled: true } });
    const res = await gw.api(on.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: sip });
    expect(res.status).toBe(201);
    expect(res.body.provider).toBe('sip');
    expectInvalid(
      await gw.api(on.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { type: 'sip', sip: { headers: { 'P-Asserted-Identity': 'x' } } } }),
      'invalid_request',
      'routing.sip.headers.P-Asserted-Identity',
    );
    expectInvalid(
      await gw.api(on.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { type: 'sip', sip: { to_uri: 'http://x' } } }),
      'invalid_request',
      'routing.sip.to_uri',
    );
    expectInvalid(await gw.api(on.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { type: 'pstn' } }), 'invalid_request', 'routing.type');
    expectInvalid(
      await gw.api(on.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { direction: 'sideways', type: 'sip' } }),
      'invalid_request',
      'routing.direction',
    );
  });

  it('refuses more than one routing method, and sip without type sip, with routing_failed and docs_url', async () => {
    const o = await gw.createOrg({ changes: { sipEnabled: true } });
    const pcon = await addConnection(o.orgId);
    await addNumber(o.orgId, '+14155550111', pcon);
    for (const routing of [{ phone_number: '+14155550111', connection_id: pcon }, { type: 'sip', connection_id: pcon }, { sip: { to_uri: 'sip:a@b' } }]) {
      const res = await gw.api(o.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing });
      expectInvalid(res, 'routing_failed', 'routing');
      expect(res.body.error.docs_url).toMatch(/^http.*openapi\.json#/);
    }
  });

  it('applies the inherited default route: default connection, no_default_provider, or a socket-only webrtc session', async () => {
    const plain = await gw.createOrg();
    expect((await gw.api(plain.key, 'POST', '/v1/sessions', TRANSLATION)).body.provider).toBe('webrtc');
    expect((await gw.api(plain.key, 'POST', '/v1/sessions', { ...TRANSLATION, routing: { direction: 'inbound' } })).body.provider).toBe('webrtc');

    const sipNoDefault = await gw.createOrg({ changes: { sipEnabled: true } });
    expectInvalid(await gw.api(sipNoDefault.key, 'POST', '/v1/sessions', TRANSLATION), 'no_default_provider', 'routing');

    const withDefault = await gw.createOrg({ changes: { sipEnabled: true } });
    const pcon = await addConnection(withDefault.orgId, { provider: 'carrier_b' });
    await gw.db.query('UPDATE organizations SET default_connection_id = $1 WHERE id = $2', [pcon, withDefault.orgId]);
    const res = await gw.api(withDefault.key, 'POST', '/v1/sessions', TRANSLATION);
    expect(res.body.provider).toBe('carrier_b');
    await gw.db.query(`UPDATE provider_connections SET status = 'disabled' WHERE id = $1`, [pcon]);
    expectInvalid(await gw.api(withDefault.key, 'POST', '/v1/sessions', TRANSLATION), 'no_default_provider', 'routing');
  });
});

describe('POST /v1/sessions: AI agent rules', () => {
  let agentId: string;
  beforeAll(async () => {
    const res = await gw.api(org.key, 'POST', '/v1/agents', { name: 'Helper', greeting: 'Hello' });
    agentId = res.body.id;
  });

  it('creates an ai_agent session with an agent of the organization and allowed overrides', async () => {
    const o = await gw.createOrg({ changes: { allowedOverrides: ['greeting', 'voice'] } });
    const agent = (await gw.api(o.key, 'POST', '/v1/agents', { name: 'A' })).body.id;
    const res = await gw.api(o.key, 'POST', '/v1/sessions', {
      mode: 'ai_agent',
      source_language: 'en',
      ai_agent: { id: agent, overrides: { greeting: 'Hi there', voice: { speed: 1.2 } } },
    });
    expect(res.status).toBe(201);
    expect(keys(res.body)).toEqual([...CREATE_KEYS].sort());
    const { rows } = await gw.db.query('SELECT ai_agent FROM sessions WHERE id = $1', [res.body.id]);
    expect(rows[0].ai_agent).toEqual({ id: agent, overrides: { greeting: 'Hi there', voice: { speed: 1.2 } } });
  });

  it('requires ai_agent in ai_agent mode and refuses it in translation modes', async () => {
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'ai_agent' }), 'validation_error', 'ai_agent');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, ai_agent: { id: agentId } }), 'validation_error', 'ai_agent');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'assistive_translation', ai_agent: { id: agentId } }), 'validation_error', 'ai_agent');
    expectInvalid(await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'ai_agent', ai_agent: { id: 'bot_1' } }), 'invalid_request', 'ai_agent.id');
  });

  it("answers 404 ai_agent_not_found for an unknown agent or another organization's agent", async () => {
    const other = await gw.createOrg();
    for (const id of ['agt_00000000000000000000000000', agentId]) {
      const res = await gw.api(other.key, 'POST', '/v1/sessions', { mode: 'ai_agent', ai_agent: { id } });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'ai_agent_not_found', param: 'ai_agent.id' });
    }
  });

  it('answers 403 ai_agent_disabled when the organization lacks the ai_agent feature', async () => {
    const o = await gw.createOrg({ changes: { features: ['sip'] } });
    const res = await gw.api(o.key, 'POST', '/v1/sessions', { mode: 'ai_agent', ai_agent: { id: agentId } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'ai_agent_disabled' });
  });

  it('answers 403 override_not_allowed naming the override outside the organization policy', async () => {
    const o = await gw.createOrg({ changes: { allowedOverrides: ['greeting'] } });
    const agent = (await gw.api(o.key, 'POST', '/v1/agents', { name: 'A' })).body.id;
    const res = await gw.api(o.key, 'POST', '/v1/sessions', {
      mode: 'ai_agent',
      ai_agent: { id: agent, overrides: { greeting: 'x', instructions: 'be rude' } },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'override_not_allowed', param: 'ai_agent.overrides.instructions' });
    expectInvalid(
      await gw.api(o.key, 'POST', '/v1/sessions', { mode: 'ai_agent', ai_agent: { id: agent, overrides: { temperature: 2 } } }),
      'invalid_request',
      'ai_agent.overrides.temperature',
    );
  });
});

describe('POST /v1/sessions: concurrency limit', () => {
  it('answers 429 concurrent_session_limit with Retry-After once created|active sessions reach the maximum, and frees a slot on end', async () => {
    const o = await gw.createOrg({ changes: { maxConcurrentSessions: 2 } });
    const a = await gw.api(o.key, 'POST', '/v1/sessions', TRANSLATION);
    const b = await gw.api(o.key, 'POST', '/v1/sessions', TRANSLATION);
    await activateSession(gw.db, b.body.id);
    const refused = await gw.api(o.key, 'POST', '/v1/sessions', TRANSLATION);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.body.error).toEqual({
      type: 'rate_limit_error',
      code: 'concurrent_session_limit',
      message: expect.any(String),
      request_id: refused.headers.get('x-request-id'),
      retry_after: 30,
    });
    expect((await gw.api(o.key, 'POST', `/v1/sessions/${a.body.id}/end`)).status).toBe(200);
    expect((await gw.api(o.key, 'POST', '/v1/sessions', TRANSLATION)).status).toBe(201);
  });

  it('is race-safe: 20 parallel creates against a limit of 5 open exactly 5', async () => {
    const o = await gw.createOrg({ changes: { maxConcurrentSessions: 5 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => gw.api(o.key, 'POST', '/v1/sessions', TRANSLATION)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    const { rows } = await gw.db.query(`SELECT count(*)::int AS n FROM sessions WHERE org_id = $1 AND status <> 'ended'`, [o.orgId]);
    expect(rows[0].n).toBe(5);
  });
});

describe('engine capability check', () => {
  it('refuses translation sessions the configured engines cannot serve, naming the field and why', async () => {
    const engines = {
      canTranscribe: (l: string) => ['en', 'es', 'fr'].includes(l),
      canTranslate: (f: string, t: string) => (f === 'en' && t === 'es') || (f === 'es' && t === 'en') || (f === 'en' && t === 'fr'),
      canSpeak: (l: string) => ['en', 'es', 'fr'].includes(l),
    };
    const app = await buildApp({ config: gw.config, logger: gw.logger, db: gw.db, redis: gw.redis, engines });
    const post = (body: object) => app.inject({ method: 'POST', url: '/v1/sessions', headers: { authorization: `Bearer ${org.key}` }, payload: body });
    try {
      expect((await post(TRANSLATION)).statusCode).toBe(201);
      const noStt = await post({ ...TRANSLATION, source_language: 'ja' });
      expect(noStt.statusCode).toBe(400);
      expect(noStt.json().error).toMatchObject({ type: 'invalid_request_error', code: 'validation_error', param: 'source_language' });
      expect(noStt.json().error.message).toMatch(/no speech-to-text engine for 'ja'/);
      // Served one way (en→fr) only: accepted; the socket says which way is missing on connect.
      expect((await post({ ...TRANSLATION, target_language: 'fr' })).statusCode).toBe(201);
      const neither = await post({ ...TRANSLATION, source_language: 'fr', target_language: 'es' });
      expect(neither.json().error).toMatchObject({ code: 'validation_error', param: 'target_language' });
      expect(neither.json().error.message).toMatch(/no translation engine for 'fr' to 'es'.*no translation engine for 'es' to 'fr'/);
      // Modes without translation are not checked.
      expect((await post({ mode: 'help_chat_voice', source_language: 'ja' })).statusCode).toBe(201);
    } finally {
      await app.close();
    }
  });
});

describe('GET /v1/sessions/{id}', () => {
  const RETRIEVE_KEYS = [
    'id',
    'object',
    'status',
    'mode',
    'configuration_mode',
    'source_language',
    'target_language',
    'provider',
    'recording',
    'metadata',
    'created_at',
    'started_at',
    'ended_at',
  ];

  it('returns a created session without stream, with started_at and ended_at null', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/sessions', { ...TRANSLATION, metadata: { k: 'v' } })).body;
    const res = await gw.api(org.key, 'GET', `/v1/sessions/${created.id}`);
    expect(res.status).toBe(200);
    expect(keys(res.body)).toEqual([...RETRIEVE_KEYS].sort());
    const { stream: _s, ...rest } = created;
    expect(res.body).toEqual({ ...rest, started_at: null, ended_at: null });
  });

  it('returns an active session with a fresh stream token and its call leg', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/sessions', TRANSLATION)).body;
    await activateSession(gw.db, created.id);
    await gw.db.query(
      `INSERT INTO calls (id, session_id, org_id, party, direction, provider, call_sid, from_uri, to_uri, status)
       VALUES ($1, $2, $3, 'customer', 'inbound', 'sip', 'abc@10.0.0.1', 'sip:+14155550100@carrier', 'sip:+14155550101@voxbridge', 'connected')`,
      [newId('call'), created.id, org.orgId],
    );
    const res = await gw.api(org.key, 'GET', `/v1/sessions/${created.id}`);
    expect(keys(res.body)).toEqual([...RETRIEVE_KEYS, 'stream', 'call'].sort());
    expect(res.body.status).toBe('active');
    expect(Date.parse(res.body.started_at)).toBeGreaterThan(0);
    expect(res.body.stream.token).not.toBe(created.stream.token);
    expect(await resolveStreamToken(gw.redis, res.body.stream.token)).toBe(created.id);
    expect(res.body.stream.url).toBe(created.stream.url);
    expect(res.body.call).toEqual({
      id: expect.stringMatching(/^call_/),
      object: 'call',
      provider: 'sip',
      call_sid: 'abc@10.0.0.1',
      direction: 'inbound',
      status: 'connected',
      from: 'sip:+14155550100@carrier',
      to: 'sip:+14155550101@voxbridge',
    });
  });

  it("answers 404 session_not_found for unknown ids and other organizations' sessions", async () => {
    const other = await gw.createOrg();
    const created = (await gw.api(org.key, 'POST', '/v1/sessions', TRANSLATION)).body;
    for (const [key, id] of [
      [org.key, 'sess_00000000000000000000000000'],
      [other.key, created.id],
    ]) {
      for (const path of [`/v1/sessions/${id}`, `/v1/sessions/${id}/transcript`]) {
        const res = await gw.api(key, 'GET', path);
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'session_not_found', param: 'session_id' });
      }
      const end = await gw.api(key, 'POST', `/v1/sessions/${id}/end`);
      expect(end.status).toBe(404);
      expect(end.body.error.code).toBe('session_not_found');
    }
    // The other organization's attempt changed nothing.
    expect((await gw.api(org.key, 'GET', `/v1/sessions/${created.id}`)).body.status).toBe('created');
  });
});

describe('POST /v1/sessions/{id}/end', () => {
  it('ends with the reduced object, records usage and session.ended, and is idempotent', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/sessions', TRANSLATION)).body;
    await activateSession(gw.db, created.id);
    const first = await gw.api(org.key, 'POST', `/v1/sessions/${created.id}/end`);
    expect(first.status).toBe(200);
    expect(keys(first.body)).toEqual(['duration_seconds', 'ended_at', 'id', 'object', 'status']);
    expect(first.body).toMatchObject({ id: created.id, object: 'session', status: 'ended' });
    expect(first.body.duration_seconds).toBeGreaterThanOrEqual(0);
    // A bodyless POST sent with Content-Type: application/json is accepted.
    const again = await gw.api(org.key, 'POST', `/v1/sessions/${created.id}/end`, undefined, { 'content-type': 'application/json' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const { rows } = await gw.db.query(`SELECT type, data FROM webhook_events WHERE data->>'id' = $1 AND type = 'session.ended'`, [created.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].data.end_reason).toBe('api_request');
    const usage = await gw.db.query('SELECT seconds FROM session_usage WHERE session_id = $1', [created.id]);
    expect(usage.rows).toHaveLength(1);
    const got = await gw.api(org.key, 'GET', `/v1/sessions/${created.id}`);
    expect(got.body.status).toBe('ended');
    expect(got.body.ended_at).toBe(first.body.ended_at);
    expect(got.body.stream).toBeUndefined();
  });
});

describe('GET /v1/sessions/{id}/transcript', () => {
  it('returns turns in order with translations, in_progress then completed', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/sessions', TRANSLATION)).body;
    await activateSession(gw.db, created.id);
    const empty = await gw.api(org.key, 'GET', `/v1/sessions/${created.id}/transcript`);
    expect(empty.body).toEqual({
      id: `trn_${created.id}`,
      object: 'transcript',
      session_id: created.id,
      status: 'in_progress',
      turns: [],
      metadata: { total_turns: 0, duration_seconds: expect.any(Number), languages_detected: [] },
    });
    await gw.db.query(
      `INSERT INTO transcript_turns (session_id, sequence, speaker, language, text, translation) VALUES
       ($1, 2, 'customer', 'es', 'hola', '{"language":"en","text":"hello"}'), ($1, 1, 'agent', 'en', 'good morning', NULL)`,
      [created.id],
    );
    await gw.api(org.key, 'POST', `/v1/sessions/${created.id}/end`);
    const res = await gw.api(org.key, 'GET', `/v1/sessions/${created.id}/transcript`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('completed');
    expect(res.body.turns).toEqual([
      { sequence: 1, speaker: 'agent', language: 'en', text: 'good morning', timestamp: expect.any(String) },
      { sequence: 2, speaker: 'customer', language: 'es', text: 'hola', translation: { language: 'en', text: 'hello' }, timestamp: expect.any(String) },
    ]);
    expect(res.body.metadata.total_turns).toBe(2);
    expect(res.body.metadata.languages_detected).toEqual(['en', 'es']);
    const ended = (await gw.api(org.key, 'POST', `/v1/sessions/${created.id}/end`)).body;
    expect(res.body.metadata.duration_seconds).toBe(ended.duration_seconds);
  });
});
