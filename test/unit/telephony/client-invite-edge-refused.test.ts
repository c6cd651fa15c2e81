// A 2xx to a dial through the edge that carries X-VB-Refused (the edge found the carrier's TLS
// certificate names another host, and Kamailio cannot drop a 2xx): the node acknowledges it, hangs
// up and fails the dial. The same header on a dial that did not go through the edge means nothing.
import { describe, expect, it } from 'vitest';
import sip, { type SipMessage, type SipRequest, type SipResponse } from 'sip';
import { ClientInvite, type ClientInviteHost } from '../../../src/telephony/sip/client-invite.js';
import type { Dialog } from '../../../src/telephony/sip/dialog.js';
import { SipError } from '../../../src/telephony/sip/errors.js';

function fakeHost(outboundProxy: string | null) {
  const acks: number[] = [];
  const inDialog: string[] = [];
  let invite: SipRequest | null = null;
  let onResponse: ((rs: SipResponse) => void) | undefined;
  const host: ClientInviteHost = {
    outboundProxy,
    send(m: SipMessage, cb) {
      if ('method' in m && m.method === 'INVITE') {
        invite = m;
        onResponse = cb;
      }
    },
    contactFor: () => ({ uri: 'sip:node@192.0.2.1:5060', params: {} }),
    sendAck: (_d: Dialog, seq: number) => void acks.push(seq),
    addDialog() {},
    async sendRequest(_d: Dialog, method: string) {
      inDialog.push(method);
      if (!invite) throw new Error('no INVITE sent');
      return sip.makeResponse(invite, 200, 'OK');
    },
    respond() {},
    forget() {},
  };
  const answer = (headers: Record<string, string>): void => {
    if (!invite || !onResponse) throw new Error('no INVITE sent');
    const rs = sip.makeResponse(invite, 200, 'OK');
    rs.headers.to = { ...rs.headers.to, params: { ...rs.headers.to.params, tag: 'callee' } };
    rs.headers.contact = [{ uri: 'sip:carrier@203.0.113.5:5061;transport=tls', params: {} }];
    Object.assign(rs.headers, headers);
    rs.content = 'v=0\r\n';
    onResponse(rs);
  };
  return { host, acks, inDialog, answer };
}

const dial = (host: ClientInviteHost): Promise<Dialog> =>
  new ClientInvite(host, 'sip:+15550100@carrier.example;transport=tls', { from: 'sip:+15550000@node', sdp: 'v=0\r\n' }, 'cid-1@node', 'ft').run();

describe('a 2xx the edge refuses (X-VB-Refused)', () => {
  it('is acknowledged, hung up, and fails the dial with the reason', async () => {
    const f = fakeHost('192.0.2.9:5060');
    const result = dial(f.host).then(
      () => null,
      (e: unknown) => e,
    );
    f.answer({ 'x-vb-refused': 'carrier certificate does not name carrier.example' });
    const err = await result;
    expect(err).toBeInstanceOf(SipError);
    expect((err as SipError).status).toBe(502);
    expect((err as SipError).reason).toContain('carrier certificate does not name carrier.example');
    expect(f.acks).toEqual([1]);
    await untilTrue(() => f.inDialog.includes('BYE'));
  });

  it('means nothing on a dial that did not go through the edge', async () => {
    const f = fakeHost(null);
    const result = dial(f.host);
    f.answer({ 'x-vb-refused': 'written by the callee' });
    const d = await result;
    expect(d.callId).toBe('cid-1@node');
    expect(f.inDialog).toEqual([]);
  });
});

/** Waits for a condition the code under test reaches through its own promise chain (no timers involved). */
async function untilTrue(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
