// Admission of inbound INVITEs over a fake repo port: no PostgreSQL, no SIP socket.
import { describe, expect, it } from 'vitest';
import type { SipRequest } from 'sip';
import { InboundAdmission, type AdmissionInvite, type AdmissionOptions, type InboundRepo, type SourceCheck } from '../../../src/telephony/inbound.js';
import { SipError } from '../../../src/telephony/sip/errors.js';
import type { ConnectionRecord, PhoneNumberRecord } from '../../../src/store/index.js';

const OFFER = [
  'v=0',
  'o=- 1 1 IN IP4 192.0.2.10',
  's=-',
  'c=IN IP4 192.0.2.10',
  't=0 0',
  'm=audio 4000 RTP/AVP 0 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  '',
].join('\r\n');
const G729_ONLY = OFFER.replace('RTP/AVP 0 101', 'RTP/AVP 18').replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:18 G729/8000');

function numberRow(over: Partial<PhoneNumberRecord> = {}): PhoneNumberRecord {
  return { id: 'pn_1', org_id: 'org_1', number: '+15550100', connection_id: null, default_session_id: null, created_at: new Date(0), ...over };
}

/** A fake store that records which lookups admission made, in order. */
class FakeRepo implements InboundRepo {
  calls: string[] = [];
  constructor(
    public numbers: PhoneNumberRecord[] = [numberRow()],
    public waiting: string[] = ['sess_a'],
    public open = new Set<string>(),
  ) {}
  async findPhoneNumber(n: string) {
    this.calls.push(`number ${n}`);
    return this.numbers.find((r) => r.number === n) ?? null;
  }
  async findSessionsWaitingForNumber(orgId: string, n: string) {
    this.calls.push(`waiting ${orgId} ${n}`);
    return this.waiting;
  }
  async isSessionOpen(id: string) {
    this.calls.push(`open ${id}`);
    return this.open.has(id);
  }
}

interface Rejection {
  status: number;
  reason: string;
  headers?: Record<string, unknown>;
}

function invite(
  o: { to?: string; sdp?: string | null; address?: string; protocol?: string; cancelled?: boolean } = {},
): AdmissionInvite & { rejections: Rejection[] } {
  const rejections: Rejection[] = [];
  const to = o.to ?? '15550100';
  const req = {
    method: 'INVITE',
    uri: `sip:${to}@198.51.100.1`,
    headers: { via: [{ protocol: o.protocol ?? 'UDP', params: {} }], to: { uri: `sip:${to}@198.51.100.1`, params: {} } },
  } as unknown as SipRequest;
  return {
    callId: 'call-1',
    remote: { protocol: o.protocol ?? 'UDP', address: o.address ?? '203.0.113.9', port: 5060 },
    req,
    from: { uri: 'sip:caller@203.0.113.9', params: { tag: 'ft' } },
    to: { uri: `sip:${to}@198.51.100.1`, params: {} },
    sdp: o.sdp === undefined ? OFFER : o.sdp,
    isCancelled: o.cancelled ?? false,
    reject: (status: number, reason: string, headers?: Record<string, unknown>) => void rejections.push({ status, reason, headers }),
    rejections,
  };
}

const connection: ConnectionRecord = {
  id: 'conn_1',
  org_id: 'org_1',
  provider: 'carrier_a',
  host: '203.0.113.9',
  port: 5060,
  transport: 'udp',
  username: null,
  password_enc: null,
  inbound_cidrs: ['203.0.113.9/32'],
  status: 'active',
  credentials_valid: true,
  rtp_latching: 'nat',
  require_secure: false,
  require_client_cert: false,
  tls_client_ca: null,
  tls_client_subject: null,
  created_at: new Date(),
  updated_at: new Date(),
};

function setup(over: Partial<AdmissionOptions> & { checkResult?: ConnectionRecord | null | 'challenged' | SipError } = {}) {
  const repo = (over.repo as FakeRepo | undefined) ?? new FakeRepo();
  const checks: string[] = [];
  const sourceAuth: SourceCheck = {
    async check(_inv, n, trusted) {
      checks.push(`check ${n.number} trusted=${trusted}`);
      const r = over.checkResult === undefined ? connection : over.checkResult;
      if (r instanceof SipError) throw r;
      return r;
    },
    challengeOrRefuse() {
      checks.push('challenge');
      return 'challenged';
    },
  };
  const counted: string[] = [];
  const adm = new InboundAdmission({
    repo,
    sourceAuth,
    isAllowListed: () => false,
    accepting: () => true,
    load: () => 1,
    maxCalls: 10,
    overloaded: () => false,
    anchored: false,
    customerBusy: () => false,
    count: (r) => counted.push(r),
    ...over,
  });
  return { adm, repo, checks, counted };
}

async function sipStatus(p: Promise<unknown>): Promise<number> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SipError);
  return (err as SipError).status;
}

describe('InboundAdmission', () => {
  it('admits a call for a waiting session with the connection the source check matched', async () => {
    const { adm, repo, checks } = setup();
    const a = await adm.admit(invite());
    expect(a).toEqual({ number: numberRow(), connection, sessionId: 'sess_a', offer: OFFER });
    // The number is tried with and without '+', the source is checked before the session lookup.
    expect(repo.calls).toEqual(['number +15550100', 'waiting org_1 +15550100']);
    expect(checks).toEqual(['check +15550100 trusted=false']);
  });

  it('refuses with 503 while draining, at capacity or with the media path overloaded, before any lookup', async () => {
    const draining = setup({ accepting: () => false });
    expect(await sipStatus(draining.adm.admit(invite()))).toBe(503);
    const full = setup({ load: () => 11, maxCalls: 10 });
    expect(await sipStatus(full.adm.admit(invite()))).toBe(503);
    const overloaded = setup({ overloaded: () => true });
    expect(await sipStatus(overloaded.adm.admit(invite()))).toBe(503);
    expect(draining.repo.calls).toEqual([]);
    expect(full.repo.calls).toEqual([]);
    expect(overloaded.repo.calls).toEqual([]);
  });

  it('answers 400 for a body that is not SDP and 488 for SDP without a codec we speak', async () => {
    expect(await sipStatus(setup().adm.admit(invite({ sdp: 'hello' })))).toBe(400);
    expect(await sipStatus(setup().adm.admit(invite({ sdp: G729_ONLY })))).toBe(488);
  });

  it('admits a late offer (no SDP in the INVITE)', async () => {
    const a = await setup().adm.admit(invite({ sdp: null }));
    expect(a?.offer).toBeNull();
  });

  it('gives an untrusted source the same challenge for an unknown number as for a known one (no enumeration)', async () => {
    const unknown = setup({ checkResult: 'challenged' });
    expect(await unknown.adm.admit(invite({ to: '15559999' }))).toBeNull();
    expect(unknown.checks).toEqual(['challenge']);
    const known = setup({ checkResult: 'challenged' });
    expect(await known.adm.admit(invite())).toBeNull();
    expect(known.checks).toEqual(['check +15550100 trusted=false']);
    // Neither looked at sessions.
    expect(unknown.repo.calls.some((c) => c.startsWith('waiting'))).toBe(false);
    expect(known.repo.calls.some((c) => c.startsWith('waiting'))).toBe(false);
  });

  it('tells an allow-listed carrier 404 for a number that does not exist', async () => {
    const { adm, checks } = setup({ isAllowListed: (a) => a === '203.0.113.9' });
    expect(await sipStatus(adm.admit(invite({ to: '15559999' })))).toBe(404);
    expect(checks).toEqual([]);
  });

  it('passes the 403 of a failed source check through', async () => {
    expect(await sipStatus(setup({ checkResult: new SipError(403, 'Forbidden') }).adm.admit(invite()))).toBe(403);
  });

  it('skips a session whose customer is already on a call and falls back to the open default session', async () => {
    const repo = new FakeRepo([numberRow({ default_session_id: 'sess_default' })], ['sess_busy'], new Set(['sess_default']));
    const { adm } = setup({ repo, customerBusy: (id) => id === 'sess_busy' });
    expect((await adm.admit(invite()))?.sessionId).toBe('sess_default');
  });

  it('answers 480 when no session waits and the default session is closed', async () => {
    const repo = new FakeRepo([numberRow({ default_session_id: 'sess_closed' })], []);
    expect(await sipStatus(setup({ repo }).adm.admit(invite()))).toBe(480);
    expect(repo.calls).toContain('open sess_closed');
  });

  it('redirects with 302 to the owning node over the transport the carrier used', async () => {
    const { adm, counted } = setup({ ownerElsewhere: async () => ({ node: 'node-b', sip: { address: '10.0.0.2', port: 5070 } }) });
    const inv = invite({ protocol: 'TCP' });
    expect(await adm.admit(inv)).toBeNull();
    expect(inv.rejections).toEqual([
      { status: 302, reason: 'Moved Temporarily', headers: { contact: [{ uri: 'sip:15550100@10.0.0.2:5070;transport=tcp', params: {} }] } },
    ]);
    expect(counted).toEqual(['redirected_302']);
  });

  it('redirects a call that came over TLS to the owner’s TLS port with ;transport=tls', async () => {
    const { adm, counted } = setup({ ownerElsewhere: async () => ({ node: 'node-b', sip: { address: '10.0.0.2', port: 5070, tlsPort: 5071 } }) });
    const inv = invite({ protocol: 'TLS' });
    expect(await adm.admit(inv)).toBeNull();
    expect(inv.rejections).toEqual([
      { status: 302, reason: 'Moved Temporarily', headers: { contact: [{ uri: 'sip:15550100@10.0.0.2:5071;transport=tls', params: {} }] } },
    ]);
    expect(counted).toEqual(['redirected_302']);
  });

  it('does not downgrade a TLS call: 480 when the owning node has no TLS listener', async () => {
    const { adm } = setup({ ownerElsewhere: async () => ({ node: 'node-b', sip: { address: '10.0.0.2', port: 5070, tlsPort: null } }) });
    expect(await sipStatus(adm.admit(invite({ protocol: 'TLS' })))).toBe(480);
  });

  it('keeps a UDP call on the owner’s UDP port even when it has TLS', async () => {
    const { adm } = setup({ ownerElsewhere: async () => ({ node: 'node-b', sip: { address: '10.0.0.2', port: 5070, tlsPort: 5071 } }) });
    const inv = invite();
    expect(await adm.admit(inv)).toBeNull();
    expect(inv.rejections[0]?.headers).toEqual({ contact: [{ uri: 'sip:15550100@10.0.0.2:5070', params: {} }] });
  });

  it('answers 480 when the owning node runs no SIP', async () => {
    expect(await sipStatus(setup({ ownerElsewhere: async () => ({ node: 'node-b', sip: null }) }).adm.admit(invite()))).toBe(480);
  });

  it('returns null when the caller cancelled during admission', async () => {
    expect(await setup().adm.admit(invite({ cancelled: true }))).toBeNull();
  });
});
