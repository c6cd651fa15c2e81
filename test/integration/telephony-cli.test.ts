// `voxbridge admin connection|number`: register() against an isolated schema; output is one JSON
// object, secrets encrypted at rest and never printed.
import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { Command } from 'commander';
import { testConfig, dropTestState, uniqueName } from '../helpers/gateway.js';
import { createPool, createOrg, migrate, type Db } from '../../src/store/index.js';
import { register as registerConnection } from '../../src/cli/admin/connection.js';
import { register as registerNumber } from '../../src/cli/admin/number.js';
import { decryptSecret } from '../../src/secrets/index.js';
import type { CliContext } from '../../src/cli/context.js';
import { makeTestPki } from '../helpers/tls-certs.js';
import type { Config } from '../../src/config/index.js';

let config: Config;
let db: Db;
let orgId: string;

beforeAll(async () => {
  config = testConfig();
  await migrate(config.databaseUrl, config.databaseSchema);
  db = createPool(config.databaseUrl, config.databaseSchema, undefined, 2);
  orgId = (await createOrg(db, { name: uniqueName('org'), maxConcurrentSessions: 5, rateLimit: 10, rateWindowSeconds: 60 })).id;
});
afterAll(async () => {
  await db?.end();
  await dropTestState(config);
});

async function run(...args: string[]): Promise<{ json?: any; error?: Error }> {
  const ctx = { config: () => config, db: async () => db, close: async () => undefined } as unknown as CliContext;
  const program = new Command('voxbridge').exitOverride();
  const admin = program.command('admin');
  registerConnection(admin, ctx);
  registerNumber(admin, ctx);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'voxbridge', 'admin', ...args]);
    return { json: JSON.parse(out) };
  } catch (error) {
    return { error: error as Error };
  } finally {
    spy.mockRestore();
  }
}

describe('admin connection and number', () => {
  it('adds a connection with encrypted credentials and prints no secret', async () => {
    const r = await run(
      'connection',
      'add',
      '--org',
      orgId,
      '--provider',
      'carrier_a',
      '--host',
      'sip.carrier.test:5080',
      '--transport',
      'tcp',
      '--username',
      'u1',
      '--password',
      'p@ss',
      '--inbound-cidrs',
      '203.0.113.0/24,198.51.100.7',
    );
    expect(r.json).toMatchObject({
      provider: 'carrier_a',
      host: 'sip.carrier.test',
      port: 5080,
      transport: 'tcp',
      username: 'u1',
      password_set: true,
      inbound_cidrs: ['203.0.113.0/24', '198.51.100.7/32'],
      status: 'active',
    });
    expect(r.json.id).toMatch(/^pcon_/);
    expect(JSON.stringify(r.json)).not.toContain('p@ss');
    const row = (await db.query('SELECT password_enc FROM provider_connections WHERE id = $1', [r.json.id])).rows[0];
    expect(row.password_enc).not.toContain('p@ss');
    expect(decryptSecret(config.secretKey, row.password_enc)).toBe('p@ss');
    const d = await run('connection', 'disable', r.json.id);
    expect(d.json).toMatchObject({ id: r.json.id, status: 'disabled' });
  });

  it('adds and updates a secure trunk (TLS + SRTP required, mutual TLS with a CA file and subject)', async () => {
    const pki = makeTestPki();
    const r = await run(
      'connection',
      'add',
      '--org',
      orgId,
      '--provider',
      'carrier_a',
      '--host',
      'sbc.carrier.test',
      '--transport',
      'tls',
      '--require-secure',
      '--require-client-cert',
      '--client-ca',
      pki.caFile,
      '--client-subject',
      'carrier.test',
    );
    expect(r.json).toMatchObject({
      transport: 'tls',
      port: 5061,
      require_secure: true,
      require_client_cert: true,
      tls_client_ca_set: true,
      tls_client_subject: 'carrier.test',
    });
    const row = (await db.query('SELECT tls_client_ca FROM provider_connections WHERE id = $1', [r.json.id])).rows[0];
    expect(row.tls_client_ca).toContain('BEGIN CERTIFICATE');
    const u = await run('connection', 'update', r.json.id, '--no-require-secure', '--no-require-client-cert', '--client-ca', 'none');
    expect(u.json).toMatchObject({
      transport: 'tls',
      require_secure: false,
      require_client_cert: false,
      tls_client_ca_set: false,
      tls_client_subject: 'carrier.test',
    });
    expect((await run('connection', 'update', r.json.id, '--transport', 'udp', '--require-secure')).error?.message).toMatch(/--require-secure needs/);
    expect((await run('connection', 'add', '--org', orgId, '--provider', 'carrier_a', '--host', 'h', '--require-secure')).error?.message).toMatch(
      /--transport tls/,
    );
    expect((await run('connection', 'update', r.json.id, '--client-ca', pki.serverKey)).error?.message).toMatch(/--client-ca/);
    expect((await run('connection', 'update', 'pcon_nope', '--require-secure')).error?.message).toMatch(/no connection/);
  });

  it('rejects bad input with a usage error', async () => {
    expect((await run('connection', 'add', '--org', orgId, '--provider', 'carrier_z', '--host', 'h')).error?.message).toMatch(/--provider/);
    expect((await run('connection', 'add', '--org', orgId, '--provider', 'carrier_b', '--host', 'h', '--inbound-cidrs', 'nope')).error?.message).toMatch(
      /CIDR/,
    );
    expect((await run('connection', 'add', '--org', orgId, '--provider', 'carrier_b', '--host', 'h', '--username', 'x')).error?.message).toMatch(/together/);
    expect((await run('number', 'add', '--org', orgId, '--number', '4155550100')).error?.message).toMatch(/E\.164/);
    expect((await run('connection', 'disable', 'pcon_missing')).error?.message).toMatch(/no connection/);
  });

  it('sets the RTP latching rule on add and changes it with update', async () => {
    const c = await run('connection', 'add', '--org', orgId, '--provider', 'carrier_a', '--host', '192.0.2.20');
    expect(c.json.rtp_latching).toBe('nat');
    const s = await run('connection', 'add', '--org', orgId, '--provider', 'carrier_a', '--host', '192.0.2.21', '--rtp-latching', 'signalled');
    expect(s.json.rtp_latching).toBe('signalled');
    const u = await run('connection', 'update', c.json.id, '--rtp-latching', 'signalled');
    expect(u.json).toMatchObject({ id: c.json.id, rtp_latching: 'signalled' });
    expect((await db.query('SELECT rtp_latching FROM provider_connections WHERE id = $1', [c.json.id])).rows[0].rtp_latching).toBe('signalled');
    expect((await run('connection', 'update', c.json.id, '--rtp-latching', 'open')).error?.message).toMatch(/--rtp-latching must be one of nat, signalled/);
    expect((await run('connection', 'add', '--org', orgId, '--provider', 'carrier_a', '--host', 'h', '--rtp-latching', 'any')).error?.message).toMatch(
      /--rtp-latching/,
    );
    expect((await run('connection', 'update', 'pcon_missing', '--rtp-latching', 'nat')).error?.message).toMatch(/no connection/);
  });

  it('adds a managed number bound to a connection, once', async () => {
    const c = await run('connection', 'add', '--org', orgId, '--provider', 'carrier_b', '--host', '192.0.2.10');
    const r = await run('number', 'add', '--org', orgId, '--number', '+14155550123', '--connection', c.json.id);
    expect(r.json).toMatchObject({ object: 'phone_number', number: '+14155550123', connection_id: c.json.id, org_id: orgId });
    expect((await run('number', 'add', '--org', orgId, '--number', '+14155550123')).error?.message).toMatch(/already/);
    expect((await run('number', 'add', '--org', orgId, '--number', '+14155550124', '--connection', 'pcon_nope')).error?.message).toMatch(/no connection/);
  });
});
