// /v1/webhook_endpoints: SPEC conventions (list object, cursor pagination, error shape,
// scope webhooks:manage, another organization's endpoint is 404), URL and subscription validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';

let gw: TestGateway;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  gw = await startTestGateway({ roles: ['api'], webhooks: { allowLoopbackHttp: true } });
  org = await gw.createOrg();
  other = await gw.createOrg();
}, 60_000);
afterAll(async () => {
  await gw?.stop();
});

const URL = 'http://127.0.0.1:9/hook';

describe('webhook endpoint management', () => {
  it('creates an endpoint and shows its secret once', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', {
      url: URL,
      events: ['sessions', 'analysis.complete'],
      description: 'CRM',
      metadata: { team: 'ops' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'webhook_endpoint',
      url: URL,
      events: ['sessions', 'analysis.completed'],
      realtime: false,
      enabled: true,
      status: 'enabled',
      disabled_reason: null,
      description: 'CRM',
      metadata: { team: 'ops' },
      previous_secret_expires_at: null,
    });
    expect(res.body.id).toMatch(/^wh_/);
    expect(res.body.secret).toMatch(/^whsec_[0-9a-z]{32}$/);
    const got = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    // Stored sealed, never in clear.
    const row = (await gw.db.query('SELECT secret_enc FROM webhook_endpoints WHERE id = $1', [res.body.id])).rows[0];
    expect(row.secret_enc).not.toContain(res.body.secret);
  });

  it('lists with cursor pagination in creation order', async () => {
    const o = await gw.createOrg();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await gw.api(o.key, 'POST', '/v1/webhook_endpoints', { url: `${URL}${i}`, events: ['*'] })).body.id);
    const first = await gw.api(o.key, 'GET', '/v1/webhook_endpoints?limit=2');
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1], url: '/v1/webhook_endpoints' });
    expect(first.body.data.map((e: any) => e.id)).toEqual(ids.slice(0, 2));
    const rest = await gw.api(o.key, 'GET', `/v1/webhook_endpoints?limit=2&starting_after=${ids[1]}`);
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(rest.body.data.map((e: any) => e.id)).toEqual([ids[2]]);
  });

  it('updates fields, disables and re-enables', async () => {
    const id = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL, events: ['sessions'] })).body.id;
    const patched = await gw.api(org.key, 'PATCH', `/v1/webhook_endpoints/${id}`, {
      events: ['transcripts'],
      realtime: true,
      enabled: false,
      url: 'http://localhost:9/other',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      events: ['transcripts'],
      realtime: true,
      enabled: false,
      status: 'disabled',
      disabled_reason: 'disabled by the organization',
      url: 'http://localhost:9/other',
    });
    const back = await gw.api(org.key, 'PATCH', `/v1/webhook_endpoints/${id}`, { enabled: true });
    expect(back.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    expect((await gw.api(org.key, 'PATCH', `/v1/webhook_endpoints/${id}`, {})).status).toBe(400);
  });

  it('rotates the secret', async () => {
    const created = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL, events: ['*'] })).body;
    const rotated = await gw.api(org.key, 'POST', `/v1/webhook_endpoints/${created.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(rotated.body.previous_secret_expires_at).not.toBeNull();
  });

  it('deletes, after which the endpoint is not found', async () => {
    const id = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL, events: ['*'] })).body.id;
    const del = await gw.api(org.key, 'DELETE', `/v1/webhook_endpoints/${id}`);
    expect(del.body).toEqual({ id, object: 'webhook_endpoint', deleted: true });
    const again = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('webhook_endpoint_not_found');
  });

  it("answers 404 webhook_endpoint_not_found for another organization's endpoint on every route", async () => {
    const id = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL, events: ['*'] })).body.id;
    for (const [method, path, body] of [
      ['GET', `/v1/webhook_endpoints/${id}`],
      ['PATCH', `/v1/webhook_endpoints/${id}`, { enabled: false }],
      ['DELETE', `/v1/webhook_endpoints/${id}`],
      ['POST', `/v1/webhook_endpoints/${id}/rotate_secret`],
      ['POST', `/v1/webhook_endpoints/${id}/test`],
      ['GET', `/v1/webhook_endpoints/${id}/deliveries`],
    ] as [string, string, unknown?][]) {
      const res = await gw.api(other.key, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'webhook_endpoint_not_found' });
      expect(res.body.error.request_id).toMatch(/^req_/);
    }
    expect((await gw.api(other.key, 'GET', '/v1/webhook_endpoints')).body.data.map((e: any) => e.id)).not.toContain(id);
    expect((await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${id}`)).body.enabled).toBe(true);
  });

  it('needs the webhooks:manage scope', async () => {
    const limited = await gw.createOrg({ scopes: ['sessions:read'] });
    const res = await gw.api(limited.key, 'GET', '/v1/webhook_endpoints');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_permissions');
  });

  it('refuses bad URLs and subscriptions with validation errors naming the field', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ url: 'http://93.184.216.34/hook', events: ['*'] }, 'url', /https/],
      [{ url: 'https://169.254.169.254/latest', events: ['*'] }, 'url', /metadata/],
      [{ url: 'https://10.0.0.1/hook', events: ['*'] }, 'url', /private/],
      [{ url: 'https://192.168.1.20/hook', events: ['*'] }, 'url', /private/],
      [{ url: 'https://[fe80::1]/hook', events: ['*'] }, 'url', /private/],
      [{ url: 'https://host.invalid/hook', events: ['*'] }, 'url', /resolve/],
      [{ url: URL, events: ['session.exploded'] }, 'events', /unknown/],
      [{ url: URL, events: ['transcript.segment'] }, 'events', /realtime/],
    ];
    for (const [body, param, message] of cases) {
      const res = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', param });
      expect(res.body.error.message).toMatch(message);
    }
    const missing = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL });
    expect(missing.status).toBe(400);
    const id = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: URL, events: ['*'] })).body.id;
    const patched = await gw.api(org.key, 'PATCH', `/v1/webhook_endpoints/${id}`, { url: 'https://10.0.0.1/x' });
    expect(patched.body.error).toMatchObject({ code: 'validation_error', param: 'url' });
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await gw.api(null, 'GET', '/v1/openapi.json')).body;
    for (const p of [
      '/v1/webhook_endpoints',
      '/v1/webhook_endpoints/{id}',
      '/v1/webhook_endpoints/{id}/rotate_secret',
      '/v1/webhook_endpoints/{id}/test',
      '/v1/webhook_endpoints/{id}/deliveries',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});
