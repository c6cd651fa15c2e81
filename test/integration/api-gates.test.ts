// Conformance: the gates every authenticated route passes (SPEC "Authentication", "Gate failures",
// "Errors", "Idempotency") against real PostgreSQL and Redis.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { buildApp } from '../../src/api/app.js';
import { revokeApiKey } from '../../src/store/index.js';
import { canonicalJson } from '../../src/api/plugins/idempotency.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const SESSION = { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' };

/** The SPEC error body, exactly: type, code, message, request_id (+ param / retry_after when given). */
function expectError(res: { status: number; headers: Headers; body: any }, status: number, type: string, code: string, extra: Record<string, unknown> = {}) {
  expect(res.status).toBe(status);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  expect(res.body).toEqual({ error: { type, code, message: expect.any(String), request_id: requestId, ...extra } });
  expect(res.body.error.message.length).toBeGreaterThan(5);
}

describe('API key gate (401)', () => {
  it('rejects a missing key with api_key_invalid', async () => {
    expectError(await gw.api(null, 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_invalid');
  });

  it('rejects a malformed Authorization header and a malformed key', async () => {
    expectError(await gw.api(null, 'GET', '/v1/agents', undefined, { authorization: 'Basic abc' }), 401, 'authentication_error', 'api_key_invalid');
    expectError(await gw.api('not-a-key', 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_invalid');
  });

  it('rejects an unknown well-formed key', async () => {
    expectError(await gw.api('sk_test_00000000000000000000000000000000', 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_invalid');
  });

  it('rejects an expired key with api_key_expired', async () => {
    const org = await gw.createOrg({ expiresAt: new Date(Date.now() - 1000) });
    expectError(await gw.api(org.key, 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_expired');
  });

  it('rejects a revoked key with api_key_revoked', async () => {
    const org = await gw.createOrg();
    expect((await gw.api(org.key, 'GET', '/v1/agents')).status).toBe(200);
    await revokeApiKey(gw.db, org.keyId);
    expectError(await gw.api(org.key, 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_revoked');
  });

  it('rejects a key of the other environment with api_key_wrong_environment', async () => {
    const org = await gw.createOrg({ environment: gw.config.apiEnvironment === 'test' ? 'live' : 'test' });
    expectError(await gw.api(org.key, 'GET', '/v1/agents'), 401, 'authentication_error', 'api_key_wrong_environment');
  });

  it('accepts X-API-Key as an alternative to Bearer', async () => {
    const org = await gw.createOrg();
    const res = await gw.api(null, 'GET', '/v1/agents', undefined, { 'x-api-key': org.key });
    expect(res.status).toBe(200);
  });
});

describe('organization, scope and credit gates', () => {
  it('refuses an inactive organization with 403 organization_inactive', async () => {
    const org = await gw.createOrg({ changes: { status: 'inactive' } });
    expectError(await gw.api(org.key, 'POST', '/v1/sessions', SESSION), 403, 'permission_error', 'organization_inactive');
  });

  it('refuses a key without sessions:write with 403 insufficient_permissions even with credits', async () => {
    const org = await gw.createOrg({ scopes: ['sessions:read'] });
    const res = await gw.api(org.key, 'POST', '/v1/sessions', SESSION);
    expectError(res, 403, 'permission_error', 'insufficient_permissions');
    expect(res.headers.get('x-api-credits-remaining')).toBe('1000');
  });

  it('refuses each route without its scope', async () => {
    const org = await gw.createOrg({ scopes: ['analysis:read'] });
    for (const [method, path, body] of [
      ['GET', '/v1/sessions/sess_x'],
      ['POST', '/v1/sessions/sess_x/end'],
      ['GET', '/v1/sessions/sess_x/transcript'],
      ['GET', '/v1/sessions/sess_x/recordings'],
      ['GET', '/v1/recordings/rec_x'],
      ['GET', '/v1/recordings/rec_x/audio'],
      ['GET', '/v1/agents'],
      ['POST', '/v1/agents', { name: 'a' }],
      ['GET', '/v1/agents/agt_x'],
      ['PATCH', '/v1/agents/agt_x', { name: 'b' }],
      ['DELETE', '/v1/agents/agt_x'],
    ] as Array<[string, string, unknown?]>) {
      expectError(await gw.api(org.key, method, path, body), 403, 'permission_error', 'insufficient_permissions');
    }
  });

  it('refuses session creation with no credits: 402 insufficient_api_credits', async () => {
    const org = await gw.createOrg({ changes: { credits: 0 } });
    const res = await gw.api(org.key, 'POST', '/v1/sessions', SESSION);
    expectError(res, 402, 'permission_error', 'insufficient_api_credits');
    expect(res.headers.get('x-api-credits-remaining')).toBe('0');
    // Reads are not credit-gated.
    expect((await gw.api(org.key, 'GET', '/v1/agents')).status).toBe(200);
  });

  it('answers authenticated 403s with X-RateLimit-* and counts them toward the limit', async () => {
    const org = await gw.createOrg({ scopes: ['sessions:read'], changes: { rateLimit: 2, rateWindowSeconds: 3600 } });
    const first = await gw.api(org.key, 'POST', '/v1/sessions', SESSION);
    expectError(first, 403, 'permission_error', 'insufficient_permissions');
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(first.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    expect((await gw.api(org.key, 'POST', '/v1/sessions', SESSION)).headers.get('x-ratelimit-remaining')).toBe('0');
    expectError(await gw.api(org.key, 'POST', '/v1/sessions', SESSION), 429, 'rate_limit_error', 'rate_limit_exceeded', { retry_after: expect.any(Number) });
    const inactive = await gw.createOrg({ changes: { status: 'inactive', rateLimit: 5, rateWindowSeconds: 3600 } });
    const res = await gw.api(inactive.key, 'GET', '/v1/agents');
    expectError(res, 403, 'permission_error', 'organization_inactive');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});

describe('rate limit and headers', () => {
  it('sends X-Request-ID, X-RateLimit-* and X-API-Credits-* on authenticated responses', async () => {
    // An hour-long window: the fixed window cannot roll over between the two requests.
    const org = await gw.createOrg({ changes: { rateLimit: 50, rateWindowSeconds: 3600, credits: 777 } });
    const res = await gw.api(org.key, 'POST', '/v1/sessions', SESSION);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('50');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now);
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 3600);
    expect(res.headers.get('x-api-credits-remaining')).toBe('777');
    expect(res.headers.get('x-api-credits-used')).toBe('0');
    // Errors after the key gate carry them too.
    const missing = await gw.api(org.key, 'GET', '/v1/sessions/sess_nope');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('48');
    expect(missing.headers.get('x-api-credits-remaining')).toBe('777');
  });

  it('answers 429 rate_limit_exceeded with Retry-After and error.retry_after once the window is used up', async () => {
    const org = await gw.createOrg({ changes: { rateLimit: 2, rateWindowSeconds: 3600 } });
    expect((await gw.api(org.key, 'GET', '/v1/agents')).status).toBe(200);
    expect((await gw.api(org.key, 'GET', '/v1/agents')).status).toBe(200);
    const res = await gw.api(org.key, 'GET', '/v1/agents');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expectError(res, 429, 'rate_limit_error', 'rate_limit_exceeded', { retry_after: retryAfter });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});

describe('request errors', () => {
  it('answers malformed JSON with 400 invalid_request', async () => {
    const org = await gw.createOrg();
    expectError(await gw.api(org.key, 'POST', '/v1/sessions', '{"mode": '), 400, 'validation_error', 'invalid_request');
  });

  it('answers a non-JSON content type with 400 invalid_request', async () => {
    const org = await gw.createOrg();
    const res = await gw.api(org.key, 'POST', '/v1/sessions', 'mode=ai_agent', { 'content-type': 'application/x-www-form-urlencoded' });
    expectError(res, 400, 'validation_error', 'invalid_request');
    expect(res.body.error.message).toMatch(/application\/json/);
  });

  it("answers over-long or malformed ids with 404 and the resource's not_found code, not 400", async () => {
    const org = await gw.createOrg();
    const long = `x${'a'.repeat(300)}`;
    const cases: Array<[string, string, string, string]> = [
      ['GET', '/v1/sessions/', 'session_not_found', 'session_id'],
      ['POST', '/v1/sessions/{id}/end', 'session_not_found', 'session_id'],
      ['GET', '/v1/sessions/{id}/transcript', 'session_not_found', 'session_id'],
      ['GET', '/v1/recordings/', 'recording_not_found', 'recording_id'],
      ['GET', '/v1/analyses/', 'analysis_not_found', 'analysis_id'],
      ['GET', '/v1/agents/', 'agent_not_found', 'agent_id'],
      ['GET', '/v1/webhook_endpoints/', 'webhook_endpoint_not_found', 'id'],
    ];
    // 301 characters reach the route's schema; 3,000 are refused by the router itself; then malformed ones.
    for (const id of [long, 'y'.repeat(3000), 'sess_%20%27%3B--', '%00', '%zz']) {
      for (const [method, template, code, param] of cases) {
        const path = template.includes('{id}') ? template.replace('{id}', id) : `${template}${id}`;
        const res = await gw.api(org.key, method, path);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
        expect(res.body.error.code, `${method} ${path}`).toBe(code);
        expect(res.body.error.type).toBe('not_found_error');
        expect(res.body.error.param, `${method} ${path}`).toBe(param);
      }
    }
  });

  it('answers unknown routes with 404 route_not_found and a request id', async () => {
    expectError(await gw.api(null, 'GET', '/v1/sessionz'), 404, 'not_found_error', 'route_not_found');
  });

  it('answers an unexpected exception with 500 internal_error and no stack or detail in the body', async () => {
    const app: FastifyInstance = await buildApp({ config: gw.config, logger: gw.logger, db: gw.db, redis: gw.redis }, [
      {
        plugin: async (a: FastifyInstance) => {
          a.get('/v1/explode', { config: { scope: 'sessions:read' } }, async () => {
            throw new Error('secret detail at /srv/app.js:12');
          });
        },
        opts: {},
      },
    ]);
    try {
      const org = await gw.createOrg();
      const res = await app.inject({ method: 'GET', url: '/v1/explode', headers: { authorization: `Bearer ${org.key}` } });
      expect(res.statusCode).toBe(500);
      const body = res.json();
      expect(body).toEqual({
        error: { type: 'api_error', code: 'internal_error', message: 'An unexpected error occurred.', request_id: res.headers['x-request-id'] },
      });
      expect(res.body).not.toMatch(/secret|stack|app\.js/);
    } finally {
      await app.close();
    }
  });

  it('answers a database failure inside a real route with 500 internal_error', async () => {
    const org = await gw.createOrg();
    await gw.db.query('ALTER TABLE agents RENAME TO agents_gone');
    try {
      const res = await gw.api(org.key, 'GET', '/v1/agents');
      expectError(res, 500, 'api_error', 'internal_error');
      expect(JSON.stringify(res.body)).not.toMatch(/agents|relation|at /);
    } finally {
      await gw.db.query('ALTER TABLE agents_gone RENAME TO agents');
    }
  });
});

describe('idempotency', () => {
  const fingerprint = (method: string, path: string, body: unknown) =>
    createHash('sha256').update(method).update(path).update(canonicalJson(body)).digest('hex');

  it('replays the first response for the same key and body, without creating a second session', async () => {
    const org = await gw.createOrg();
    const headers = { 'idempotency-key': 'create-1' };
    const first = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers);
    const second = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const { rows } = await gw.db.query('SELECT count(*)::int AS n FROM sessions WHERE org_id = $1', [org.orgId]);
    expect(rows[0].n).toBe(1);
  });

  it('answers the same key with another body with 400 idempotency_mismatch', async () => {
    const org = await gw.createOrg();
    const headers = { 'idempotency-key': 'create-2' };
    expect((await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers)).status).toBe(201);
    const res = await gw.api(org.key, 'POST', '/v1/sessions', { ...SESSION, target_language: 'fr' }, headers);
    expectError(res, 400, 'invalid_request_error', 'idempotency_mismatch', { param: 'Idempotency-Key' });
  });

  it('answers the same key while the first request is still processing with 409 idempotency_conflict and Retry-After', async () => {
    const org = await gw.createOrg();
    const key = 'create-3';
    // Hold the processing record exactly as the first request would while it runs.
    const redisKey = `idem:${org.orgId}:${createHash('sha256').update(key).digest('hex')}`;
    await gw.redis.set(redisKey, JSON.stringify({ state: 'processing', fingerprint: fingerprint('POST', '/v1/sessions', SESSION) }), 'EX', 60);
    const res = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, { 'idempotency-key': key });
    expectError(res, 409, 'conflict_error', 'idempotency_conflict', { retry_after: 1 });
    expect(res.headers.get('retry-after')).toBe('1');
  });

  it('fingerprints a canonical body: the same body with its keys reordered replays', async () => {
    const org = await gw.createOrg();
    const headers = { 'idempotency-key': 'reordered' };
    const body = { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es', metadata: { a: 1, b: 'x' } };
    const reordered = { metadata: { b: 'x', a: 1 }, target_language: 'es', source_language: 'en', mode: 'bidirectional_translation' };
    const first = await gw.api(org.key, 'POST', '/v1/sessions', body, headers);
    const second = await gw.api(org.key, 'POST', '/v1/sessions', reordered, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
  });

  it('replays a stored error with the new request id in the body and X-Request-ID alike', async () => {
    const org = await gw.createOrg();
    const headers = { 'idempotency-key': 'stored-error' };
    const body = { ...SESSION, routing: { phone_number: '+15550000001' } };
    const first = await gw.api(org.key, 'POST', '/v1/sessions', body, headers);
    expectError(first, 400, 'invalid_request_error', 'phone_number_not_found', { param: 'routing.phone_number' });
    const second = await gw.api(org.key, 'POST', '/v1/sessions', body, headers);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expectError(second, 400, 'invalid_request_error', 'phone_number_not_found', { param: 'routing.phone_number' });
    expect(second.body.error.request_id).not.toBe(first.body.error.request_id);
  });

  it('replays a stored response before the credit gate: a replay after credits ran out is not refused with 402', async () => {
    const org = await gw.createOrg();
    const headers = { 'idempotency-key': 'before-credits' };
    const first = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers);
    expect(first.status).toBe(201);
    await gw.db.query('UPDATE organizations SET credits = 0 WHERE id = $1', [org.orgId]);
    expectError(await gw.api(org.key, 'POST', '/v1/sessions', { ...SESSION, target_language: 'fr' }), 402, 'permission_error', 'insufficient_api_credits');
    const replay = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });

  it('does not keep a 402 under an Idempotency-Key: after a top-up the same key runs again', async () => {
    const org = await gw.createOrg({ changes: { credits: 0 } });
    const headers = { 'idempotency-key': 'after-top-up' };
    expectError(await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers), 402, 'permission_error', 'insufficient_api_credits');
    await gw.db.query('UPDATE organizations SET credits = 10 WHERE id = $1', [org.orgId]);
    const retry = await gw.api(org.key, 'POST', '/v1/sessions', SESSION, headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('scopes keys per organization', async () => {
    const a = await gw.createOrg();
    const b = await gw.createOrg();
    const headers = { 'idempotency-key': 'shared' };
    const ra = await gw.api(a.key, 'POST', '/v1/sessions', SESSION, headers);
    const rb = await gw.api(b.key, 'POST', '/v1/sessions', SESSION, headers);
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.body.id).not.toBe(ra.body.id);
  });
});

describe('OpenAPI document', () => {
  it('describes every route with tags, scopes and error responses', async () => {
    const doc = (await gw.api(null, 'GET', '/v1/openapi.json')).body;
    const expected: Array<[string, string]> = [
      ['/v1/sessions', 'post'],
      ['/v1/sessions/{id}', 'get'],
      ['/v1/sessions/{id}/end', 'post'],
      ['/v1/sessions/{id}/transcript', 'get'],
      ['/v1/sessions/{id}/recordings', 'get'],
      ['/v1/recordings/{id}', 'get'],
      ['/v1/recordings/{id}/audio', 'get'],
      ['/v1/agents', 'get'],
      ['/v1/agents', 'post'],
      ['/v1/agents/{id}', 'get'],
      ['/v1/agents/{id}', 'patch'],
      ['/v1/agents/{id}', 'delete'],
    ];
    for (const [path, method] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.tags.length).toBeGreaterThan(0);
      expect(op.description).toMatch(/Scope (sessions|recordings|agents):(read|write)/);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '429', '500', '503']));
    }
    const create = doc.paths['/v1/sessions'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '402', '404', '409']));
    expect(create.requestBody.content['application/json'].schema.properties.routing.properties.phone_number.pattern).toBeDefined();
    // Error responses share one schema (the SPEC error body) and list their codes.
    const errorSchema = create.responses['404'].content['application/json'].schema;
    const shared = doc.components.schemas[errorSchema.$ref.split('/').pop()];
    expect(Object.keys(shared.properties.error.properties)).toEqual(expect.arrayContaining(['type', 'code', 'message', 'param', 'request_id', 'retry_after']));
    expect(create.responses['404'].description).toBe('ai_agent_not_found');
    expect(create.responses['429'].description).toBe('rate_limit_exceeded, concurrent_session_limit');
  });
});

describe('dependency outages', () => {
  it('answers 503 service_unavailable when PostgreSQL or Redis cannot be reached', async () => {
    const { Redis } = await import('ioredis');
    const { createPool } = await import('../../src/store/index.js');
    const org = await gw.createOrg();
    const deadPg = createPool('postgres://postgres@127.0.0.1:1/none', 'public', undefined, 1);
    const deadRedis = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    deadRedis.on('error', () => undefined);
    const noPg = await buildApp({ config: gw.config, logger: gw.logger, db: deadPg, redis: gw.redis });
    const noRedis = await buildApp({ config: gw.config, logger: gw.logger, db: gw.db, redis: deadRedis });
    try {
      for (const app of [noPg, noRedis]) {
        const res = await app.inject({ method: 'GET', url: '/v1/agents', headers: { authorization: `Bearer ${org.key}` } });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toEqual({
          error: { type: 'api_error', code: 'service_unavailable', message: expect.any(String), request_id: res.headers['x-request-id'] },
        });
      }
    } finally {
      await noPg.close();
      await noRedis.close();
      await deadPg.end();
      deadRedis.disconnect();
    }
  });
});
