// The Kamailio edge's OPTIONS probing against nodes that refuse calls (README "Edge: Kamailio",
// "Dispatching"): a node answers OPTIONS 503 + Retry-After while it would refuse an INVITE (here: at
// sip.maxConcurrentCalls), the edge's dispatcher takes it out after two such probes and sends new calls
// to the next node without trying it, and puts it back once it answers 200 again. Two nodes behind one
// edge that takes the first live node in list order (B, then A) and probes every second.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { addEdgeCarrier, startSipNode, TRUSTS_THE_EDGE } from '../helpers/sip-nodes.js';
import type { TestGateway, TestOrg } from '../helpers/gateway.js';
import { TestSocket } from '../helpers/stream.js';
import { startSipp, eventually, type SippResult } from '../helpers/sip-harness.js';
import { startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import { optionsMessage, udpExchange } from '../helpers/sip-raw.js';
import * as repo from '../../src/store/telephony-repo.js';
import { ownerOf } from '../../src/coord/ownership.js';

const PING_INTERVAL_SECONDS = 1;

let a: TestGateway;
let b: TestGateway;
let edge: KamailioHandle;
let org: TestOrg;
let connectionId: string;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  a = await startSipNode('node-a', { sip: TRUSTS_THE_EDGE });
  // B takes one call at a time: with it, B refuses INVITEs and answers OPTIONS 503.
  b = await startSipNode('node-b', { shared: a, sip: { ...TRUSTS_THE_EDGE, maxConcurrentCalls: 1 } });
  org = await a.createOrg();
  const conn = await addEdgeCarrier(a, org.orgId);
  connectionId = conn.id;
  edge = await startKamailio({
    nodes: [`127.0.0.1:${b.telephony!.sipPort}`, `127.0.0.1:${a.telephony!.sipPort}`],
    dispatchAlg: 8,
    pingIntervalSeconds: PING_INTERVAL_SECONDS,
  });
}, 90_000);
afterAll(async () => {
  await Promise.allSettled(sockets.map((s) => s.close()));
  await edge?.stop();
  await b?.close();
  await a?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}\n${edge.log().slice(-3000)}`).toBe(0);
const FRAME = Buffer.alloc(160, 0xff).toString('base64');

/** A new number of the connection, and a session waiting for a call to it that lives on `gw` (its socket is there). */
async function sessionOn(gw: TestGateway): Promise<{ id: string; number: string }> {
  const number = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  await repo.createPhoneNumber(a.db, { orgId: org.orgId, number, connectionId });
  const created = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { phone_number: number, direction: 'inbound' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { id, stream } = created.body as { id: string; stream: { url: string; token: string } };
  const socket = await TestSocket.open(`${stream.url}?token=${stream.token}`);
  sockets.push(socket);
  socket.ws.send(JSON.stringify({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } }));
  await eventually(async () => (await ownerOf(gw.redis, id))?.node === gw.config.nodeId);
  return { id, number };
}

/** The node's answer to an OPTIONS sent straight to it (from 127.0.0.1, the edge's address). */
async function optionsTo(gw: TestGateway, callId: string): Promise<{ status?: number; retryAfter?: string }> {
  const rs = await udpExchange(gw.telephony!.sipPort, optionsMessage(callId, 'UDP', 9, ['Content-Length: 0']));
  return { status: rs?.status, retryAfter: rs?.header('retry-after') };
}

const invites = (gw: TestGateway) => gw.telephony!.requestCounts().INVITE ?? 0;
const probes = (gw: TestGateway) => gw.telephony!.requestCounts().OPTIONS ?? 0;
const calling = (number: string, scenario = 'uac-edge-call.xml') =>
  startSipp({ scenario, target: `127.0.0.1:${edge.port}`, localIp: '127.0.0.2', service: number, durationMs: 1000, timeoutSeconds: 60 });
/** Waits for the edge to log `line` (its dispatcher's dst-down or dst-up), with the log in the error. */
async function edgeLogs(line: RegExp, failure: string): Promise<void> {
  await eventually(() => line.test(edge.log()), 60_000).catch((e: unknown) => {
    throw new Error(`${failure}: ${String(e)}\n${edge.log().slice(-3000)}`);
  });
}

/** A call through the edge to a session living on `to` is answered there, and `other` never sees its INVITE; returns the session. */
async function callLandsOn(to: TestGateway, other: TestGateway, otherGotIt: string): Promise<{ id: string }> {
  const s = await sessionOn(to);
  const otherInvites = invites(other);
  const call = await calling(s.number);
  await eventually(() => to.telephony!.calls(s.id).length === 1, 30_000);
  ok(await call.done);
  expect(invites(other), otherGotIt).toBe(otherInvites);
  return s;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

describe("the edge's OPTIONS probing", () => {
  it('takes a node that answers its probes 503 (full) out of dispatching, and puts it back once it answers 200', async () => {
    const bUri = `sip:127.0.0.1:${b.telephony!.sipPort}`;
    const takenOut = new RegExp(`edge: ${bUri.replaceAll('.', '\\.')} taken out of dispatching: probe answered 503`);
    const putBack = new RegExp(`edge: ${bUri.replaceAll('.', '\\.')} back in dispatching: probe answered 200`);
    // Both nodes answer the edge's probes (200: neither refuses calls).
    await eventually(() => probes(a) >= 2 && probes(b) >= 2, 30_000);
    expect(edge.log()).not.toMatch(/taken out of dispatching/);

    // Call 1 goes to B, first in the list, and stays up until B hangs up: B is then full.
    const s1 = await sessionOn(b);
    const call1 = await calling(s1.number, 'uac-edge-call-remote-bye.xml');
    await eventually(() => b.telephony!.calls(s1.id).length === 1, 30_000);
    const full = Date.now();
    expect(a.telephony!.calls(s1.id)).toHaveLength(0);
    expect(await optionsTo(b, 'probing-full')).toEqual({ status: 503, retryAfter: '5' });

    // The edge's probes hear the 503 and take B out.
    await edgeLogs(takenOut, 'B was not taken out');
    const outAfter = Date.now() - full;

    // Call 2 goes straight to A: B never sees its INVITE (without the probing it would get it, answer
    // 503 and the edge's failure route would try A next).
    const s2 = await callLandsOn(a, b, 'B got call 2');
    expect(b.telephony!.callCounts()['inbound:rejected_503'] ?? 0).toBe(0);
    expect(b.telephony!.calls(s1.id)).toHaveLength(1);

    // B hangs up call 1 (its session ends): its BYE reaches the caller through the edge, and B answers 200 again.
    const ended = await b.api(org.key, 'POST', `/v1/sessions/${s1.id}/end`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    ok(await call1.done);
    await eventually(() => b.telephony!.activeCalls === 0, 30_000);
    const free = Date.now();
    expect((await optionsTo(b, 'probing-free')).status).toBe(200);

    await edgeLogs(putBack, 'B was not put back');
    const backAfter = Date.now() - free;

    // Call 3 goes to B again, first in the list: A never sees it (no 302 from A to B either).
    const s3 = await callLandsOn(b, a, 'A got call 3');
    expect(a.telephony!.callCounts()['inbound:redirected_302'] ?? 0).toBe(0);
    expect(b.telephony!.callCounts()).toMatchObject({ 'inbound:completed': 2 });
    expect(a.telephony!.callCounts()).toMatchObject({ 'inbound:completed': 1 });
    expect(b.telephony!.callCounts()['inbound:rejected_503'] ?? 0).toBe(0);

    console.log(
      `edge probing every ${PING_INTERVAL_SECONDS} s: B taken out ${seconds(outAfter)} s after it became full, put back ${seconds(backAfter)} s after it was free`,
    );
    for (const s of [s2, s3]) await b.api(org.key, 'POST', `/v1/sessions/${s.id}/end`);
  }, 120_000);
});
