// GET /v1/sessions (a gateway addition; SPEC has no list-sessions route): cursor pages in creation
// order like GET /v1/agents, filters, scope and the organization boundary, against real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';

let gw: TestGateway;
let org: TestOrg;
const ids: string[] = [];
beforeAll(async () => {
  gw = await startTestGateway();
  org = await gw.createOrg();
  const agent = await gw.api(org.key, 'POST', '/v1/agents', { name: 'Lister' });
  for (const mode of ['bidirectional_translation', 'ai_agent', 'bidirectional_translation', 'assistive_translation', 'bidirectional_translation']) {
    const body = mode === 'ai_agent' ? { mode, source_language: 'en', ai_agent: { id: agent.body.id } } : { mode, source_language: 'en', target_language: 'es' };
    const res = await gw.api(org.key, 'POST', '/v1/sessions', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.id);
  }
  const end = await gw.api(org.key, 'POST', `/v1/sessions/${ids[1]}/end`);
  expect(end.status).toBe(200);
});
afterAll(async () => {
  await gw?.stop();
});

describe('GET /v1/sessions', () => {
  it('pages forward and backward in creation order with the list shape and no stream tokens', async () => {
    const first = await gw.api(org.key, 'GET', '/v1/sessions?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1], url: '/v1/sessions' });
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data[0]).not.toHaveProperty('stream');
    expect(Object.keys(first.body.data[1]).sort()).toEqual(
      ['configuration_mode', 'created_at', 'ended_at', 'id', 'metadata', 'mode', 'object', 'provider', 'recording', 'source_language', 'started_at', 'status', 'target_language'],
    );
    expect(first.body.data[1]).toMatchObject({ object: 'session', status: 'ended', mode: 'ai_agent' });

    const next = await gw.api(org.key, 'GET', `/v1/sessions?limit=2&starting_after=${first.body.next_cursor}`);
    expect(next.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(2, 4));
    const last = await gw.api(org.key, 'GET', `/v1/sessions?limit=2&starting_after=${next.body.next_cursor}`);
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(last.body.data.map((s: { id: string }) => s.id)).toEqual([ids[4]]);

    const back = await gw.api(org.key, 'GET', `/v1/sessions?limit=2&ending_before=${ids[4]}`);
    expect(back.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(2, 4));
    expect(back.body.next_cursor).toBe(ids[2]);
  });

  it('filters by status, mode and creation time, combined with AND', async () => {
    const ended = await gw.api(org.key, 'GET', '/v1/sessions?status=ended');
    expect(ended.body.data.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    const created = await gw.api(org.key, 'GET', '/v1/sessions?status=created&mode=bidirectional_translation');
    expect(created.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2], ids[4]]);
    const { rows } = await gw.db.query<{ created_at: Date }>('SELECT created_at FROM sessions WHERE id = $1', [ids[3]]);
    const at = rows[0].created_at.toISOString();
    const after = await gw.api(org.key, 'GET', `/v1/sessions?created_after=${encodeURIComponent(at)}`);
    expect(after.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(3));
    const before = await gw.api(org.key, 'GET', `/v1/sessions?created_before=${encodeURIComponent(at)}&mode=bidirectional_translation`);
    expect(before.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2]]);
    const none = await gw.api(org.key, 'GET', '/v1/sessions?phone_number=%2B14155550199');
    expect(none.body).toMatchObject({ data: [], has_more: false, next_cursor: null });
  });

  it('refuses bad filters with the SPEC error shape', async () => {
    for (const q of ['status=open', 'mode=karaoke', 'created_after=yesterday', 'limit=0', 'colour=red']) {
      const res = await gw.api(org.key, 'GET', `/v1/sessions?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.type, q).toBeTypeOf('string');
    }
    const both = await gw.api(org.key, 'GET', `/v1/sessions?starting_after=${ids[0]}&ending_before=${ids[4]}`);
    expect(both.body.error).toMatchObject({ code: 'invalid_request', param: 'ending_before' });
    const inverted = await gw.api(org.key, 'GET', '/v1/sessions?created_after=2030-01-02T00:00:00Z&created_before=2030-01-01T00:00:00Z');
    expect(inverted.body.error).toMatchObject({ code: 'invalid_request', param: 'created_before' });
  });

  it('shows only the caller organization and needs sessions:read', async () => {
    const other = await gw.createOrg();
    const mine = await gw.api(other.key, 'GET', '/v1/sessions');
    expect(mine.body.data).toEqual([]);
    const noScope = await gw.createOrg({ scopes: ['agents:read'] });
    const refused = await gw.api(noScope.key, 'GET', '/v1/sessions');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_permissions');
  });
});
