// Routing resolution (SPEC create-session rules 1–2) over an in-memory stand-in for the two tables it
// reads: each rule's result or its catalog error, with the param the API reports.
import { describe, expect, it } from 'vitest';
import type { DbClient } from '../../../src/store/index.js';
import { resolveRouting, type RoutingInput, type RoutingOrg } from '../../../src/telephony/routing.js';
import { TelephonyError } from '../../../src/telephony/errors.js';

interface Conn {
  id: string;
  org_id: string;
  provider: 'carrier_a' | 'carrier_b';
  status: 'active' | 'disabled';
  credentials_valid: boolean;
}
interface Num {
  number: string;
  org_id: string;
  connection_id: string | null;
}

/** Answers the two queries routing.ts makes, keyed by the table named in the SQL. */
function tables(connections: Conn[], numbers: Num[]): DbClient {
  const query = (sql: string, params: unknown[]) => {
    const [key, org] = params;
    if (sql.includes('FROM provider_connections')) return { rows: connections.filter((c) => c.id === key && c.org_id === org) };
    if (sql.includes('FROM phone_numbers')) return { rows: numbers.filter((n) => n.number === key && n.org_id === org) };
    throw new Error(`unexpected query: ${sql}`);
  };
  return { query: async (sql: string, params: unknown[]) => query(sql, params) } as unknown as DbClient;
}

const db = tables(
  [
    { id: 'pcon_ok', org_id: 'org_1', provider: 'carrier_a', status: 'active', credentials_valid: true },
    { id: 'pcon_off', org_id: 'org_1', provider: 'carrier_b', status: 'disabled', credentials_valid: true },
    { id: 'pcon_badcred', org_id: 'org_1', provider: 'carrier_b', status: 'active', credentials_valid: false },
    { id: 'pcon_other', org_id: 'org_2', provider: 'carrier_a', status: 'active', credentials_valid: true },
  ],
  [
    { number: '+15550001', org_id: 'org_1', connection_id: 'pcon_ok' },
    { number: '+15550002', org_id: 'org_1', connection_id: null },
    { number: '+15550003', org_id: 'org_1', connection_id: 'pcon_badcred' },
    { number: '+15550009', org_id: 'org_2', connection_id: null },
  ],
);

const org = (o: Partial<RoutingOrg> = {}): RoutingOrg => ({ id: 'org_1', sip_enabled: true, default_connection_id: null, ...o });

async function failure(routing: RoutingInput | null, o: RoutingOrg = org()): Promise<TelephonyError> {
  const err = await resolveRouting(db, o, routing, { docsUrl: 'https://docs.example/routing' }).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof TelephonyError)) throw new Error(`expected a TelephonyError, got ${String(err)}`);
  return err;
}

describe('resolveRouting', () => {
  it('refuses more than one method, and routing.sip without type sip, as routing_failed with docs_url', async () => {
    const both = await failure({ phone_number: '+15550001', connection_id: 'pcon_ok' });
    expect(both.code).toBe('routing_failed');
    expect(both.message).toContain('phone_number and connection_id');
    expect(both.detail).toMatchObject({ param: 'routing', extra: { docs_url: 'https://docs.example/routing' } });
    expect((await failure({ sip: { to_uri: 'sip:a@b' } })).code).toBe('routing_failed');
  });

  it('type sip: needs SIP enabled and only X- headers', async () => {
    expect(await resolveRouting(db, org(), { type: 'sip', sip: { to_uri: 'sip:a@b', headers: { 'X-Ref': '1' } }, direction: 'outbound' })).toEqual({
      provider: 'sip',
      sip: { to_uri: 'sip:a@b', headers: { 'X-Ref': '1' } },
      direction: 'outbound',
    });
    const off = await failure({ type: 'sip' }, org({ sip_enabled: false }));
    expect([off.code, off.detail.param]).toEqual(['sip_not_enabled', 'routing.type']);
    const header = await failure({ type: 'sip', sip: { headers: { 'X-Ok': '1', Via: 'x' } } });
    expect([header.code, header.detail.param]).toEqual(['invalid_request', 'routing.sip.headers.Via']);
  });

  it('connection_id: active and valid in this organization, else connection_not_found / connection_invalid', async () => {
    expect(await resolveRouting(db, org(), { connection_id: 'pcon_ok' })).toEqual({ provider: 'carrier_a', connectionId: 'pcon_ok' });
    for (const id of ['pcon_off', 'pcon_missing', 'pcon_other']) {
      const e = await failure({ connection_id: id });
      expect([e.code, e.detail.param], id).toEqual(['connection_not_found', 'routing.connection_id']);
    }
    expect((await failure({ connection_id: 'pcon_badcred' })).code).toBe('connection_invalid');
  });

  it("phone_number: carried by its connection, or by our SIP side when unbound; another organization's number is not found", async () => {
    expect(await resolveRouting(db, org(), { phone_number: '+15550001' })).toEqual({
      provider: 'carrier_a',
      phoneNumber: '+15550001',
      connectionId: 'pcon_ok',
    });
    expect(await resolveRouting(db, org(), { phone_number: '+15550002', direction: 'inbound' })).toEqual({
      provider: 'sip',
      phoneNumber: '+15550002',
      direction: 'inbound',
    });
    const other = await failure({ phone_number: '+15550009' });
    expect([other.code, other.detail.param]).toEqual(['phone_number_not_found', 'routing.phone_number']);
    const bad = await failure({ phone_number: '+15550003' });
    expect([bad.code, bad.detail.param]).toEqual(['connection_invalid', 'routing.phone_number']);
  });

  it('inherited default: the default connection, no_default_provider when it is unusable or SIP has none, else webrtc', async () => {
    expect(await resolveRouting(db, org({ default_connection_id: 'pcon_ok' }), { direction: 'outbound' })).toEqual({
      provider: 'carrier_a',
      connectionId: 'pcon_ok',
      direction: 'outbound',
    });
    for (const [id, why] of [
      ['pcon_off', 'is disabled'],
      ['pcon_badcred', 'has invalid credentials'],
      ['pcon_gone', 'no longer exists'],
    ] as const) {
      const e = await failure(null, org({ default_connection_id: id }));
      expect(e.code).toBe('no_default_provider');
      expect(e.message).toContain(why);
    }
    expect((await failure(undefined as unknown as null, org())).code).toBe('no_default_provider');
    expect(await resolveRouting(db, org({ sip_enabled: false }), undefined)).toEqual({ provider: 'webrtc' });
  });
});
