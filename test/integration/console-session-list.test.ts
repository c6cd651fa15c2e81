// GET /console/api/sessions (SPEC has no list-sessions endpoint, so it is a console route, not /v1):
// cursor pages in creation order like GET /v1/agents, filters, the SPEC error shape, the cookie
// sign-in and the organization boundary, against real PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';

let t: ConsoleGateway;
let org: { orgId: string; key: string };
let cookie: string;
const ids: string[] = [];

async function v1(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${org.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

async function signInCookie(email: string): Promise<string> {
  const res = await fetch(`${t.base}/console/api/auth/sign_in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const set = res.headers.getSetCookie().find((c) => c.startsWith('vb_console='));
  expect(set).toBeDefined();
  return (set ?? '').split(';', 1).join('');
}

async function list(query: string, as = cookie) {
  const res = await fetch(`${t.base}/console/api/sessions${query ? `?${query}` : ''}`, { headers: as ? { cookie: as } : {} });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  t = await startConsoleGateway();
  org = await t.createOrg();
  await t.addUser(org.orgId, 'viewer@example.com', 'viewer');
  cookie = await signInCookie('viewer@example.com');
  const agent = await v1('POST', '/v1/agents', { name: 'Lister' });
  for (const mode of ['bidirectional_translation', 'ai_agent', 'bidirectional_translation', 'assistive_translation', 'bidirectional_translation']) {
    const body =
      mode === 'ai_agent' ? { mode, source_language: 'en', ai_agent: { id: agent.body.id } } : { mode, source_language: 'en', target_language: 'es' };
    const res = await v1('POST', '/v1/sessions', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.id);
  }
  const end = await v1('POST', `/v1/sessions/${ids[1]}/end`);
  expect(end.status).toBe(200);
});
afterAll(async () => {
  await t?.stop();
});

describe('GET /console/api/sessions', () => {
  it('pages forward and backward in creation order with the list shape and no stream tokens', async () => {
    const first = await list('limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1], url: '/console/api/sessions' });
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data[0]).not.toHaveProperty('stream');
    expect(Object.keys(first.body.data[1]).sort()).toEqual([
      'configuration_mode',
      'created_at',
      'end_reason',
      'ended_at',
      'id',
      'metadata',
      'mode',
      'object',
      'provider',
      'recording',
      'source_language',
      'started_at',
      'status',
      'target_language',
    ]);
    expect(first.body.data[1]).toMatchObject({ object: 'session', status: 'ended', mode: 'ai_agent' });
    expect(first.body.data[1].end_reason).toBeTypeOf('string');
    expect(first.body.data[0].end_reason).toBeNull();

    const next = await list(`limit=2&starting_after=${first.body.next_cursor}`);
    expect(next.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(2, 4));
    const last = await list(`limit=2&starting_after=${next.body.next_cursor}`);
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(last.body.data.map((s: { id: string }) => s.id)).toEqual([ids[4]]);

    const back = await list(`limit=2&ending_before=${ids[4]}`);
    expect(back.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(2, 4));
    expect(back.body.next_cursor).toBe(ids[2]);
  });

  it('filters by status, mode and creation time, combined with AND', async () => {
    const ended = await list('status=ended');
    expect(ended.body.data.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    const created = await list('status=created&mode=bidirectional_translation');
    expect(created.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2], ids[4]]);
    const { rows } = await t.gw.db.query<{ created_at: Date }>('SELECT created_at FROM sessions WHERE id = $1', [ids[3]]);
    const row = rows.at(0);
    expect(row).toBeDefined();
    const at = row ? row.created_at.toISOString() : '';
    const after = await list(`created_after=${encodeURIComponent(at)}`);
    expect(after.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(3));
    const before = await list(`created_before=${encodeURIComponent(at)}&mode=bidirectional_translation`);
    expect(before.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2]]);
    const none = await list('phone_number=%2B14155550199');
    expect(none.body).toMatchObject({ data: [], has_more: false, next_cursor: null });
  });

  it('refuses bad filters with the SPEC error shape', async () => {
    for (const q of ['status=open', 'mode=karaoke', 'created_after=yesterday', 'limit=0', 'colour=red']) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect(res.body.error, q).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
    }
    const both = await list(`starting_after=${ids[0]}&ending_before=${ids[4]}`);
    expect(both.body.error).toMatchObject({ code: 'invalid_request', param: 'ending_before' });
    const inverted = await list('created_after=2030-01-02T00:00:00Z&created_before=2030-01-01T00:00:00Z');
    expect(inverted.body.error).toMatchObject({ code: 'invalid_request', param: 'created_before' });
  });

  it('needs the console sign-in (an API key is not enough), shows only the user organization, and is not a /v1 route', async () => {
    const anonymous = await list('status=open', '');
    expect(anonymous.status).toBe(401); // signed in is checked before the query
    expect(anonymous.body.error.code).toBe('sign_in_required');
    const withKey = await fetch(`${t.base}/console/api/sessions`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(withKey.status).toBe(401);

    const other = await t.createOrg();
    await t.addUser(other.orgId, 'other@example.com', 'developer');
    const theirs = await list('', await signInCookie('other@example.com'));
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);

    await t.addUser(null, 'op@example.com', 'operator');
    const operator = await list('', await signInCookie('op@example.com'));
    expect(operator.status).toBe(403);
    expect(operator.body.error.code).toBe('insufficient_permissions');

    const gone = await v1('GET', '/v1/sessions');
    expect(gone.status).toBe(404);
  });
});
