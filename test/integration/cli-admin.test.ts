// The provisioning CLI: one JSON object on stdout and exit 0, or a clear
// error on stderr and a non-zero exit. Runs the real command against an isolated schema, then uses
// what it provisioned against a gateway on the same schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig, dropTestState, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { Config } from '../../src/config/index.js';
import { runCli, type CliResult } from '../helpers/cli.js';

let config: Config;
beforeAll(() => {
  config = testConfig();
});
afterAll(async () => {
  await dropTestState(config);
});

function cli(...args: string[]): Promise<CliResult> {
  return runCli(config, args);
}

// Each CLI run is the real compiled command (test/global-setup.ts rebuilds dist/ when stale); a busy
// 2-core machine still makes each run take a second or two, so tests get a generous budget.
const SLOW = 240_000;

function expectFailure(r: CliResult, pattern: RegExp, code = 2) {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(pattern);
}

describe('voxbridge admin org', () => {
  it(
    'creates an organization with defaults from configuration and prints it as one JSON object',
    async () => {
      const r = await cli('admin', 'org', 'create', '--name', 'Acme');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.json).toMatchObject({
        id: expect.stringMatching(/^org_[0-9a-z]{26}$/),
        name: 'Acme',
        status: 'active',
        credits: 1000,
        credits_used: 0,
        max_concurrent_sessions: config.limits.defaultMaxConcurrentSessions,
        rate_limit: config.limits.defaultRateLimit,
        rate_window_seconds: config.limits.defaultRateWindowSeconds,
        features: [],
        allowed_overrides: [],
      });
    },
    SLOW,
  );

  it(
    'creates with explicit limits and updates status, credits, features and overrides',
    async () => {
      const created = await cli(
        'admin',
        'org',
        'create',
        '--name',
        'Beta',
        '--credits',
        '5',
        '--max-concurrent-sessions',
        '3',
        '--rate-limit',
        '10',
        '--rate-window-seconds',
        '30',
        '--features',
        'ai_agent,sip',
      );
      expect(created.json).toMatchObject({ credits: 5, max_concurrent_sessions: 3, rate_limit: 10, rate_window_seconds: 30, features: ['ai_agent', 'sip'] });
      const id = created.json.id;
      const updated = await cli(
        'admin',
        'org',
        'update',
        id,
        '--status',
        'inactive',
        '--credits',
        '0',
        '--features',
        'ai_agent',
        '--allowed-overrides',
        'greeting,voice',
        '--sip-enabled',
        'true',
      );
      expect(updated.code).toBe(0);
      expect(updated.json).toMatchObject({
        id,
        status: 'inactive',
        credits: 0,
        features: ['ai_agent'],
        allowed_overrides: ['greeting', 'voice'],
        sip_enabled: true,
      });
      const cleared = await cli('admin', 'org', 'update', id, '--features', '');
      expect(cleared.json.features).toEqual([]);
    },
    SLOW,
  );

  it(
    'refuses bad input on stderr with exit 2 and prints nothing on stdout',
    async () => {
      expectFailure(await cli('admin', 'org', 'create', '--name', 'X', '--credits', 'lots'), /--credits must be a non-negative integer/);
      expectFailure(await cli('admin', 'org', 'create', '--name', 'X', '--rate-limit', '0'), /--rate-limit must be a positive integer/);
      expectFailure(await cli('admin', 'org', 'create', '--name', 'X', '--features', 'teleport'), /unknown value\(s\) teleport/);
      expectFailure(await cli('admin', 'org', 'update', 'org_nope', '--status', 'inactive'), /no organization org_nope/);
      expectFailure(await cli('admin', 'org', 'update', 'org_nope', '--status', 'paused'), /--status must be active or inactive/);
      expectFailure(await cli('admin', 'org', 'update', 'org_nope', '--allowed-overrides', 'everything'), /unknown value\(s\) everything/);
      const missing = await cli('admin', 'org', 'create');
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/--name/);
    },
    SLOW,
  );
});

describe('voxbridge admin key', () => {
  it(
    'creates a key shown once and stored only as a hash, then revokes it idempotently',
    async () => {
      const org = (await cli('admin', 'org', 'create', '--name', 'Keys')).json;
      const r = await cli('admin', 'key', 'create', '--org', org.id, '--scopes', 'sessions:read,sessions:write', '--expires-at', '2099-01-01T00:00:00Z');
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject({
        id: expect.stringMatching(/^key_/),
        object: 'api_key',
        org_id: org.id,
        environment: config.apiEnvironment,
        key: expect.stringMatching(new RegExp(`^sk_${config.apiEnvironment}_[0-9a-z]{32}$`)),
        scopes: ['sessions:read', 'sessions:write'],
        expires_at: '2099-01-01T00:00:00.000Z',
        revoked_at: null,
      });
      const live = await cli('admin', 'key', 'create', '--org', org.id, '--env', 'live');
      expect(live.json.key).toMatch(/^sk_live_/);

      const gw: TestGateway = await startTestGateway({ databaseSchema: config.databaseSchema, redisKeyPrefix: config.redisKeyPrefix });
      try {
        const { rows } = await gw.db.query('SELECT key_hash FROM api_keys WHERE id = $1', [r.json.id]);
        expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(rows[0].key_hash).not.toContain(r.json.key);
        const ok = await gw.api(r.json.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' });
        expect(ok.status).toBe(201);
        expect((await gw.api(r.json.key, 'GET', '/v1/agents')).body.error.code).toBe('insufficient_permissions');

        const revoked = await cli('admin', 'key', 'revoke', r.json.id);
        expect(revoked.code).toBe(0);
        expect(revoked.json).toMatchObject({ id: r.json.id, revoked_at: expect.any(String) });
        expect(revoked.json.key).toBeUndefined();
        const again = await cli('admin', 'key', 'revoke', r.json.id);
        expect(again.json.revoked_at).toBe(revoked.json.revoked_at);
        expect((await gw.api(r.json.key, 'GET', `/v1/sessions/${ok.body.id}`)).body.error.code).toBe('api_key_revoked');
      } finally {
        await gw.close();
      }
    },
    SLOW,
  );

  it(
    'refuses bad input on stderr with exit 2',
    async () => {
      const org = (await cli('admin', 'org', 'create', '--name', 'Bad')).json;
      expectFailure(await cli('admin', 'key', 'create', '--org', 'org_nope'), /no organization org_nope/);
      expectFailure(await cli('admin', 'key', 'create', '--org', org.id, '--env', 'prod'), /--env must be live or test/);
      expectFailure(await cli('admin', 'key', 'create', '--org', org.id, '--scopes', 'sessions:read,root'), /unknown scope\(s\) root/);
      expectFailure(await cli('admin', 'key', 'create', '--org', org.id, '--expires-at', 'tomorrow'), /--expires-at must be an ISO 8601 time/);
      expectFailure(await cli('admin', 'key', 'revoke', 'key_nope'), /no API key key_nope/);
    },
    SLOW,
  );
});

describe('voxbridge admin connection and number (the compiled command)', () => {
  it(
    'provisions a trunk, a managed number and the default route an API session then resolves',
    async () => {
      const org = (await cli('admin', 'org', 'create', '--name', 'Trunks')).json;
      const conn = await cli(
        'admin',
        'connection',
        'add',
        '--org',
        org.id,
        '--provider',
        'carrier_a',
        '--host',
        '127.0.0.1:5070',
        '--username',
        'trunkuser',
        '--password',
        's3cret-pass',
        '--inbound-cidrs',
        '127.0.0.0/8',
      );
      expect(conn.code).toBe(0);
      expect(conn.json.id).toMatch(/^pcon_/);
      expect(conn.stdout).not.toContain('s3cret-pass');
      const num = await cli('admin', 'number', 'add', '--org', org.id, '--number', '+14155550100', '--connection', conn.json.id);
      expect(num.code).toBe(0);
      expect(num.json).toMatchObject({ number: '+14155550100' });
      const upd = await cli('admin', 'org', 'update', org.id, '--sip-enabled', 'true', '--default-connection', conn.json.id);
      expect(upd.json).toMatchObject({ sip_enabled: true, default_connection_id: conn.json.id });
      expectFailure(await cli('admin', 'number', 'add', '--org', org.id, '--number', '4155550100'), /E\.164/i);

      const key = (await cli('admin', 'key', 'create', '--org', org.id)).json.key;
      const gw: TestGateway = await startTestGateway({ databaseSchema: config.databaseSchema, redisKeyPrefix: config.redisKeyPrefix });
      try {
        const byNumber = await gw.api(key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { phone_number: '+14155550100' } });
        expect(byNumber.status).toBe(201);
        expect(byNumber.body.provider).toBe('carrier_a');
        const byDefault = await gw.api(key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' });
        expect(byDefault.body.provider).toBe('carrier_a');
        expect((await cli('admin', 'connection', 'disable', conn.json.id)).code).toBe(0);
        const disabled = await gw.api(key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { connection_id: conn.json.id } });
        expect(disabled.body.error.code).toBe('connection_not_found');
      } finally {
        await gw.close();
      }
    },
    SLOW,
  );
});
