import { describe, it, expect } from 'vitest';
import { resolveDialTarget, xHeaders } from '../../../src/telephony/dial-target.js';
import type { ConnectionRecord, PhoneNumberRecord, TelephonySessionRecord } from '../../../src/store/telephony-repo.js';

const session = (o: Partial<TelephonySessionRecord>): TelephonySessionRecord => ({
  id: 'sess_1',
  org_id: 'org_1',
  status: 'created',
  mode: 'bidirectional_translation',
  provider: null,
  phone_number: null,
  connection_id: null,
  routing: null,
  owner_node: null,
  sip_enabled: true,
  default_connection_id: null,
  ...o,
});
const conn = (o: Partial<ConnectionRecord> = {}): ConnectionRecord => ({
  id: 'pcon_1',
  org_id: 'org_1',
  provider: 'carrier_a',
  host: 'sip.carrier.test',
  port: 5080,
  transport: 'udp',
  username: 'u',
  password_enc: 'enc',
  inbound_cidrs: [],
  status: 'active',
  credentials_valid: true,
  rtp_latching: 'nat',
  require_secure: false,
  require_client_cert: false,
  tls_client_ca: null,
  tls_client_subject: null,
  created_at: new Date(),
  updated_at: new Date(),
  ...o,
});
const look = (c: ConnectionRecord | null, n: PhoneNumberRecord | null = null) => ({
  connection: async () => c,
  number: async () => n,
  decrypt: (e: string) => `plain-${e}`,
});

describe('resolveDialTarget', () => {
  it('dials routing.sip.to_uri with X- headers only, request headers winning', async () => {
    const t = await resolveDialTarget(
      session({
        routing: {
          type: 'sip',
          sip: { to_uri: 'sip:bob@10.0.0.1:5070;transport=tcp', from_uri: 'sip:alice@x', headers: { 'X-A': '1', 'P-Asserted-Identity': 'no', 'X-B': 'old' } },
        },
      }),
      { headers: { 'X-B': 'new' } },
      '192.0.2.1',
      look(null),
    );
    expect(t).toMatchObject({
      uri: 'sip:bob@10.0.0.1:5070',
      from: 'sip:alice@x',
      provider: 'sip',
      transport: 'tcp',
      auth: null,
      headers: { 'x-a': '1', 'x-b': 'new' },
    });
  });

  it('dials over TLS with SRTP through a secure connection, and over TLS to a sips: URI', async () => {
    const t = await resolveDialTarget(
      session({ routing: { connection_id: 'pcon_1' } }),
      { to: '+14155550100' },
      'h',
      look(conn({ transport: 'tls', require_secure: true })),
    );
    expect(t).toMatchObject({ uri: 'sip:+14155550100@sip.carrier.test:5080', transport: 'tls', srtp: true });
    const plain = await resolveDialTarget(session({ routing: { connection_id: 'pcon_1' } }), { to: '+14155550100' }, 'h', look(conn()));
    expect(plain).toMatchObject({ transport: 'udp', srtp: false });
    const sips = await resolveDialTarget(session({ routing: { type: 'sip', sip: { to_uri: 'sips:bob@10.0.0.1:5061' } } }), {}, 'h', look(null));
    expect(sips).toMatchObject({ uri: 'sips:bob@10.0.0.1:5061', transport: 'tls', srtp: false });
  });

  it('dials E.164 through the connection with decrypted digest credentials', async () => {
    const t = await resolveDialTarget(
      session({ connection_id: 'pcon_1', routing: { connection_id: 'pcon_1' } }),
      { to: '+14155550100', from: '+15550001111' },
      '192.0.2.1',
      look(conn()),
    );
    expect(t).toMatchObject({
      uri: 'sip:+14155550100@sip.carrier.test:5080',
      from: 'sip:+15550001111@sip.carrier.test',
      provider: 'carrier_a',
      auth: { username: 'u', password: 'plain-enc' },
    });
  });

  it('falls back to the managed number connection, then the org default', async () => {
    const n: PhoneNumberRecord = {
      id: 'pn_1',
      org_id: 'org_1',
      number: '+15550001111',
      connection_id: 'pcon_1',
      default_session_id: null,
      created_at: new Date(),
    };
    const a = await resolveDialTarget(
      session({ phone_number: '+15550001111', routing: { phone_number: '+15550001111' } }),
      { to: '+14155550100' },
      'h',
      look(conn(), n),
    );
    expect(a.from).toBe('sip:+15550001111@sip.carrier.test');
    const b = await resolveDialTarget(
      session({ default_connection_id: 'pcon_1' }),
      { to: '+14155550100' },
      'h',
      look(conn({ username: null, password_enc: null })),
    );
    expect(b.auth).toBeNull();
  });

  it('maps every failure to its catalog code', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e) => e.code,
      );
    expect(await code(resolveDialTarget(session({ sip_enabled: false, routing: { type: 'sip', sip: { to_uri: 'sip:a@b' } } }), {}, 'h', look(null)))).toBe(
      'sip_not_enabled',
    );
    expect(await code(resolveDialTarget(session({}), { to: '+14155550100' }, 'h', look(null)))).toBe('no_default_provider');
    expect(await code(resolveDialTarget(session({ connection_id: 'pcon_x' }), { to: '+14155550100' }, 'h', look(null)))).toBe('connection_not_found');
    expect(await code(resolveDialTarget(session({ connection_id: 'pcon_1' }), { to: '+14155550100' }, 'h', look(conn({ status: 'disabled' }))))).toBe(
      'connection_not_found',
    );
    expect(await code(resolveDialTarget(session({ connection_id: 'pcon_1' }), { to: '+14155550100' }, 'h', look(conn({ credentials_valid: false }))))).toBe(
      'connection_invalid',
    );
    expect(await code(resolveDialTarget(session({ connection_id: 'pcon_1' }), { to: '12345' }, 'h', look(conn())))).toBe('validation_error');
    expect(await code(resolveDialTarget(session({ connection_id: 'pcon_1' }), {}, 'h', look(conn())))).toBe('validation_error');
    expect(await code(resolveDialTarget(session({ routing: { type: 'sip' } }), { to: 'sip:a@b\r\nX-Evil: 1' }, 'h', look(null)))).toBe('validation_error');
    expect(
      await code(
        resolveDialTarget(session({ phone_number: '+15550009999', routing: { phone_number: '+15550009999' } }), { to: '+14155550100' }, 'h', look(null, null)),
      ),
    ).toBe('phone_number_not_found');
  });

  it('keeps only well-formed X- headers', () => {
    expect(xHeaders({ 'X-Ok': 'v', 'X-Bad': 'a\r\nb', Via: 'x', 'X-Num': 5 as unknown as string })).toEqual({ 'x-ok': 'v' });
  });
});
