// Two voxbridge nodes behind one Kamailio edge (DESIGN.md "Scale-out", "The SIP edge"): a call for
// a session that lives on node A, dispatched by the edge to node B, is answered 302 by B and the
// edge relays it to A — the caller sees only the 200 OK, and its BYE reaches A through the edge.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { addEdgeCarrier, startSipNode, TRUSTS_THE_EDGE } from '../helpers/sip-nodes.js';
import type { TestGateway, TestOrg } from '../helpers/gateway.js';
import { TestSocket } from '../helpers/stream.js';
import { startSipp, eventually, type SippResult } from '../helpers/sip-harness.js';
import { startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import * as repo from '../../src/store/telephony-repo.js';
import { ownerOf } from '../../src/coord/ownership.js';

let a: TestGateway;
let b: TestGateway;
let edge: KamailioHandle;
let org: TestOrg;
let number: string;

beforeAll(async () => {
  a = await startSipNode('node-a', { sip: TRUSTS_THE_EDGE });
  b = await startSipNode('node-b', { shared: a, sip: TRUSTS_THE_EDGE });
  org = await a.createOrg();
  const conn = await addEdgeCarrier(a, org.orgId);
  number = `+1415${String(Date.now()).slice(-7)}`;
  await repo.createPhoneNumber(a.db, { orgId: org.orgId, number, connectionId: conn.id });
  // Dispatching by priority: every new call goes to B first, so a session on A needs the redirect.
  edge = await startKamailio({ nodes: [`127.0.0.1:${b.telephony!.sipPort}`, `127.0.0.1:${a.telephony!.sipPort}`], dispatchAlg: 8 });
}, 90_000);
afterAll(async () => {
  await edge?.stop();
  await b?.close();
  await a?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}\n${edge.log().slice(-3000)}`).toBe(0);
const FRAME = Buffer.alloc(160, 0xff).toString('base64');

describe('the edge in front of two nodes', () => {
  it("follows B's 302 to A, the session's owner; the caller never sees the redirect", async () => {
    const created = await a.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { phone_number: number, direction: 'inbound' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id, stream } = created.body as { id: string; stream: { url: string; token: string } };
    const socket = await TestSocket.open(`${stream.url}?token=${stream.token}`);
    socket.ws.send(JSON.stringify({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } }));
    await eventually(async () => (await ownerOf(a.redis, id))?.node === 'node-a');

    const caller = await startSipp({
      scenario: 'uac-edge-call.xml',
      target: `127.0.0.1:${edge.port}`,
      localIp: '127.0.0.2',
      service: number,
      durationMs: 1000,
    });
    await eventually(() => a.telephony!.calls(id).length === 1, 30_000);
    expect(b.telephony!.callCounts()['inbound:redirected_302']).toBe(1);
    expect(b.telephony!.calls(id)).toHaveLength(0);
    expect(a.telephony!.calls(id)[0]).toMatchObject({ direction: 'inbound', party: 'customer', to: number });
    ok(await caller.done); // a 302 reaching SIPp would fail the scenario
    // The caller's BYE went through the edge to A.
    await eventually(() => a.telephony!.calls(id).length === 0);
    expect(a.telephony!.callCounts()['inbound:completed']).toBe(1);
    await a.api(org.key, 'POST', `/v1/sessions/${id}/end`);
    await socket.closed;
  });

  it('does not follow a 302 to a node outside its set: the caller gets 480, never a node address', async () => {
    const created = await a.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { phone_number: number, direction: 'inbound' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id, stream } = created.body as { id: string; stream: { url: string; token: string } };
    const socket = await TestSocket.open(`${stream.url}?token=${stream.token}`);
    socket.ws.send(JSON.stringify({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } }));
    await eventually(async () => (await ownerOf(a.redis, id))?.node === 'node-a');
    // An edge that knows only B: A, the owner, is not one of its nodes.
    const onlyB = await startKamailio({ nodes: [`127.0.0.1:${b.telephony!.sipPort}`] });
    try {
      const redirectsBefore = b.telephony!.callCounts()['inbound:redirected_302'] ?? 0;
      const caller = await startSipp({ scenario: 'uac-expect-480.xml', target: `127.0.0.1:${onlyB.port}`, localIp: '127.0.0.2', service: number });
      const r = await caller.done;
      expect(r.code, `${r.errors}\n${r.stderr}\n${onlyB.log().slice(-3000)}`).toBe(0);
      expect(b.telephony!.callCounts()['inbound:redirected_302']).toBe(redirectsBefore + 1);
      expect(a.telephony!.calls(id)).toHaveLength(0);
      expect(onlyB.log()).toMatch(/is not one of our nodes; answering 480/);
    } finally {
      await onlyB.stop();
    }
    await a.api(org.key, 'POST', `/v1/sessions/${id}/end`);
    await socket.closed;
  });
});
