// Carrier failover for dials through the Kamailio edge (EDGE_CARRIERS): a node with
// SIP_EDGE_OUTBOUND_PROXY dials sip:…@<group>; the edge tries the group's gateways in priority order
// and goes on to the next when one answers 503 or does not reply at all (fr_timer, 5 s), while a
// callee's own answer (486) goes straight back to the node. SIPp plays the gateways; a gateway that
// never replies is a bare UDP socket that counts what reaches it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startTelephonyFixture, startSipp, freePort, eventually, type SippResult, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';
import { defined } from '../helpers/defined.js';

type Sipp = Awaited<ReturnType<typeof startSipp>>;

/** A gateway that takes packets and never answers: what an unreachable carrier SBC looks like. */
class SilentGateway {
  invites = 0;
  options = 0;
  private constructor(readonly socket: dgram.Socket) {
    socket.on('message', (m) => {
      if (m.subarray(0, 7).toString() === 'INVITE ') this.invites++;
      if (m.subarray(0, 8).toString() === 'OPTIONS ') this.options++;
    });
  }
  static async open(): Promise<SilentGateway> {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    return new SilentGateway(s);
  }
  get address(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }
}

let fx: TelephonyFixture;
let edge: KamailioHandle;
const gw: Record<string, Sipp> = {};
let silent: SilentGateway;
let afterBusy: SilentGateway;

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const sipp = (scenario: string) => startSipp({ scenario, timeoutSeconds: 240 });

beforeAll(async () => {
  // The node dials out through the edge, so the edge's port is chosen first.
  const edgePort = await freePort();
  fx = await startTelephonyFixture({
    sip: { transports: ['udp'], trustedEdge: { cidrs: ['127.0.0.1/32'], sourceHeader: 'X-VB-Source', outboundProxy: `127.0.0.1:${edgePort}` } },
  });
  gw.unavailable = await sipp('uas-unavailable.xml');
  gw.answersAfter503 = await sipp('uas-answer-rr.xml');
  gw.answersAfterSilence = await sipp('uas-answer-rr.xml');
  gw.busy = await sipp('uas-busy.xml');
  gw.onlyOne = await sipp('uas-unavailable.xml');
  silent = await SilentGateway.open();
  afterBusy = await SilentGateway.open();
  const at = (s: Sipp) => `127.0.0.1:${s.port}`;
  edge = await startKamailio({
    nodes: [`127.0.0.1:${fx.sipPort}`],
    port: edgePort,
    carriers: {
      'failover.test': [at(gw.unavailable), at(gw.answersAfter503)],
      'silent.test': [silent.address, at(gw.answersAfterSilence)],
      'busy.test': [at(gw.busy), afterBusy.address],
      'down.test': [at(gw.onlyOne)],
    },
  });
}, 90_000);

afterAll(async () => {
  for (const s of Object.values(gw)) s.kill();
  silent?.socket.close();
  afterBusy?.socket.close();
  await edge?.stop();
  await fx?.stop();
});

/** Dials sip:+15550100@<group> through the edge; the leg, or the dial's error. */
async function dialGroup(group: string): Promise<{ leg: SipLeg | null; error: { code?: string; message?: string } | null; sessionId: string }> {
  const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:+15550100@${group}` } } });
  const attached = fx.sessions.nextLeg();
  try {
    // uas-answer-rr.xml checks that the dial's X- header arrived.
    await fx.svc.dial(sessionId, fx.orgId, { headers: { 'X-Voxbridge-Test': 'carrier-failover' } });
    return { leg: (await attached).leg as SipLeg, error: null, sessionId };
  } catch (e) {
    return { leg: null, error: e as { code?: string; message?: string }, sessionId };
  }
}

/** A dial to `group` that must be answered: its leg and session. */
async function answered(group: string): Promise<{ leg: SipLeg; sessionId: string }> {
  const { leg, error, sessionId } = await dialGroup(group);
  expect(error).toBeNull();
  expect(leg).not.toBeNull();
  return { leg: leg!, sessionId };
}

/** A dial to `group` that must fail with `dial_failed` naming the SIP status `status`. */
async function failsWith(group: string, status: RegExp): Promise<void> {
  const { error } = await dialGroup(group);
  expect(error?.code).toBe('dial_failed');
  expect(error?.message).toMatch(status);
}

describe('carrier groups at the edge (EDGE_CARRIERS)', () => {
  it('a gateway answering 503 is followed by the next one, which takes the call; the hang-up reaches it through the edge', async () => {
    const { leg, sessionId } = await answered('failover.test');
    expect(leg.dialog.routeSet.length).toBeGreaterThan(0); // the dialog runs through the edge
    ok(await defined(gw.unavailable, 'unavailable gateway').done); // it got the INVITE, answered 503 and got the edge's ACK
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await defined(gw.answersAfter503, 'answersAfter503 gateway').done);
    expect(edge.log()).toMatch(/carrier gateway failed \(503\)/);
  }, 90_000);

  it('a gateway that does not reply is given up after fr_timer and the next one takes the call', async () => {
    const { sessionId } = await answered('silent.test');
    expect(silent.invites).toBeGreaterThan(0);
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await defined(gw.answersAfterSilence, 'answersAfterSilence gateway').done);
  }, 90_000);

  it("a callee's own refusal (486) goes back to the node: the next gateway is not tried", async () => {
    await failsWith('busy.test', /486/);
    ok(await defined(gw.busy, 'busy gateway').done);
    expect(afterBusy.invites).toBe(0);
  }, 90_000);

  it("the last gateway's failure is the dial's (its 503 as 500: a proxy does not pass 503 on, RFC 3261 §16.7)", async () => {
    await failsWith('down.test', / 500 /);
    ok(await defined(gw.onlyOne, 'onlyOne gateway').done);
  }, 90_000);

  it('probes the nodes with OPTIONS but not the carrier gateways (EDGE_CARRIER_PROBE defaults to no)', async () => {
    const before = fx.svc.ua.requestCounts.OPTIONS ?? 0;
    await eventually(() => (fx.svc.ua.requestCounts.OPTIONS ?? 0) > before, 45_000); // every 10 s
    expect(silent.options + afterBusy.options).toBe(0);
  }, 60_000);
});
