// Two nodes sharing one PostgreSQL schema and one Redis prefix (DESIGN.md "Scale-out"): a live
// session is owned by the node that opened it, and every way in reaches that node — REST dial and
// hangup received by the other node are forwarded over the session bus, REST end closes the owner's
// socket, a socket to the wrong node is told where to go (1013 + URL), an INVITE to the wrong node
// is redirected with 302 to the owner's SIP contact.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSipNode } from '../helpers/sip-nodes.js';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { TestSocket } from '../helpers/stream.js';
import { startSipp, eventually, SCENARIOS, type SippResult, addLoopbackNumber } from '../helpers/sip-harness.js';
import { updateOrg } from '../../src/store/index.js';
import { ownerOf } from '../../src/coord/ownership.js';

let a: TestGateway;
let b: TestGateway;
let org: TestOrg;
/** An organization with SIP enabled: its sessions need phone routing. */
let sipOrg: TestOrg;
let number: string;

beforeAll(async () => {
  a = await startSipNode('node-a');
  b = await startSipNode('node-b', { shared: a });
  org = await a.createOrg();
  sipOrg = await a.createOrg();
  await updateOrg(a.db, sipOrg.orgId, { sipEnabled: true });
  number = await addLoopbackNumber(a.db, sipOrg.orgId);
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const FRAME = Buffer.alloc(160, 0xff).toString('base64'); // 20 ms of mu-law silence

/** Creates a session through `gw`'s API and makes it live on `gw` with a socket (first audio activates it). */
async function liveOn(
  gw: TestGateway,
  body: Record<string, unknown>,
  as: TestOrg = org,
): Promise<{ id: string; token: string; socket: TestSocket; streamUrl: string }> {
  const created = await gw.api(as.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { id, stream } = created.body as { id: string; stream: { url: string; token: string } };
  const socket = await TestSocket.open(`${stream.url}?token=${stream.token}`);
  socket.ws.send(JSON.stringify({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } }));
  await eventually(async () => (await gw.db.query(`SELECT 1 FROM sessions WHERE id = $1 AND status = 'active'`, [id])).rowCount);
  return { id, token: stream.token, socket, streamUrl: stream.url };
}

const wsOf = (gw: TestGateway, id: string) => `${gw.config.publicUrl.replace(/^http/, 'ws')}/v1/sessions/${id}/connect`;

describe('a session lives on one node', () => {
  it('claims the session for the node that opened it and names that node in stream.url', async () => {
    const s = await liveOn(a, {});
    expect(s.streamUrl).toBe(wsOf(a, s.id));
    const claim = await ownerOf(a.redis, s.id);
    expect(claim).toEqual({ node: 'node-a', url: a.config.publicUrl, sip: { address: '127.0.0.1', port: a.telephony!.sipPort, tlsPort: null } });
    const { rows } = await a.db.query('SELECT owner_node FROM sessions WHERE id = $1', [s.id]);
    expect(rows[0].owner_node).toBe('node-a');
    // Asked on node B, the session's stream still points at A.
    const seen = await b.api(org.key, 'GET', `/v1/sessions/${s.id}`);
    expect(seen.body.stream.url).toBe(wsOf(a, s.id));

    // REST end on B reaches A over the bus: A's socket hears session.ended and closes 1000.
    const ended = await b.api(org.key, 'POST', `/v1/sessions/${s.id}/end`);
    expect(ended.status).toBe(200);
    expect((await s.socket.waitForType('session.ended')).reason).toBe('api_request');
    expect(await s.socket.closed).toEqual({ code: 1000, reason: 'api_request' });
    // The claim is released with the live session.
    await eventually(async () => (await ownerOf(a.redis, s.id)) === null);
  });

  it('tells a socket that connects to the wrong node where the session lives (1013 + owner URL)', async () => {
    const s = await liveOn(a, {});
    await s.socket.close();
    await eventually(() => a.stream!.connections === 0);
    const token = (await b.api(org.key, 'GET', `/v1/sessions/${s.id}`)).body.stream.token as string;
    const wrong = await TestSocket.open(`${wsOf(b, s.id)}?token=${token}`);
    expect(await wrong.closed).toEqual({ code: 1013, reason: `session_moved ${wsOf(a, s.id)}` });
    // The same token opens the stream at the named node.
    const right = await TestSocket.open(`${wsOf(a, s.id)}?token=${token}`);
    await right.waitForType('session.ready');
    expect(b.registry!.get(s.id)).toBeUndefined();
    await b.api(org.key, 'POST', `/v1/sessions/${s.id}/end`);
    await right.closed;
  });

  it('forwards dial and hangup received by another node to the owner and returns its answer', async () => {
    const callee = await startSipp({ scenario: 'uas-answer.xml' });
    const s = await liveOn(
      a,
      {
        routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}`, from_uri: 'sip:+15550009999@voxbridge.test' } },
      },
      sipOrg,
    );
    const dial = await b.api(sipOrg.key, 'POST', `/v1/sessions/${s.id}/dial`, { party: 'agent', headers: { 'X-Voxbridge-Test': 'scale-out' } });
    expect(dial.status, JSON.stringify(dial.body)).toBe(200);
    expect(dial.body).toMatchObject({ object: 'call', session_id: s.id, party: 'agent', direction: 'outbound', status: 'in-progress' });
    // The leg is on the owner, not on the node that took the request.
    expect(a.telephony!.calls(s.id)).toHaveLength(1);
    expect(b.telephony!.calls(s.id)).toHaveLength(0);

    // A catalog error from the owner comes back unchanged.
    const again = await b.api(sipOrg.key, 'POST', `/v1/sessions/${s.id}/dial`, { party: 'agent' });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'session_not_dialable' });

    const hangup = await b.api(sipOrg.key, 'POST', `/v1/sessions/${s.id}/hangup`);
    expect(hangup.status, JSON.stringify(hangup.body)).toBe(200);
    expect(hangup.body.data).toHaveLength(1);
    expect(hangup.body.data[0]).toMatchObject({ id: dial.body.id, session_id: s.id, status: 'completed', disconnect_reason: 'hangup' });
    ok(await callee.done);
    expect(a.telephony!.calls(s.id)).toHaveLength(0);
    await b.api(sipOrg.key, 'POST', `/v1/sessions/${s.id}/end`);
  });

  it('answers 503 service_unavailable when the owner does not answer a forwarded command', async () => {
    const s = await liveOn(a, {});
    // A node that no longer listens: its claim is still there but nothing serves its commands.
    await a.redis.set(`owner:${s.id}`, JSON.stringify({ node: 'node-gone', url: 'http://127.0.0.1:9', sip: null }), 'PX', 60_000);
    const started = Date.now();
    const res = await b.api(org.key, 'POST', `/v1/sessions/${s.id}/hangup`);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'service_unavailable' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    await a.redis.del(`owner:${s.id}`);
    await b.api(org.key, 'POST', `/v1/sessions/${s.id}/end`);
    await s.socket.closed;
  }, 30_000);

  it("redirects an INVITE for A's session arriving at B with 302 to A's SIP contact", async () => {
    const s = await liveOn(a, { mode: 'help_chat_voice', routing: { phone_number: number, direction: 'inbound' } }, sipOrg);
    const dir = mkdtempSync(path.join(tmpdir(), 'scale-out-'));
    const scenario = path.join(dir, 'uac-expect-302.xml');
    const contact = `&lt;sip:${number.replace('+', '\\+')}@127\\.0\\.0\\.1:${a.telephony!.sipPort}&gt;`; // XML-escaped regex
    writeFileSync(
      scenario,
      readFileSync(path.join(SCENARIOS, 'uac-expect-480.xml'), 'utf8')
        .replace(
          '<recv response="480"/>',
          `<recv response="302"><action><ereg regexp="${contact}" search_in="hdr" header="Contact:" check_it="true" assign_to="c"/></action></recv>`,
        )
        .replace('uac expects 480', 'uac expects 302')
        .replace('</scenario>', '<Reference variables="c"/>\n</scenario>'),
    );
    const caller = await startSipp({ scenario: path.relative(SCENARIOS, scenario), target: `127.0.0.1:${b.telephony!.sipPort}`, service: number });
    ok(await caller.done);
    expect(b.telephony!.callCounts()['inbound:redirected_302']).toBe(1);
    // Nothing was set up on B, and the session is still A's.
    expect(b.registry!.get(s.id)).toBeUndefined();
    expect((await ownerOf(a.redis, s.id))?.node).toBe('node-a');
    await b.api(sipOrg.key, 'POST', `/v1/sessions/${s.id}/end`);
    await s.socket.closed;
  });
});

describe('a node with the api role alone', () => {
  it('sends dial to a node that can place calls (which then owns the session) and hangup to the owner', async () => {
    const apiOnly = await startTestGateway({
      nodeId: 'node-api',
      roles: ['api'],
      databaseSchema: a.config.databaseSchema,
      redisKeyPrefix: a.config.redisKeyPrefix,
    });
    try {
      const callee = await startSipp({ scenario: 'uas-answer.xml' });
      const created = await apiOnly.api(sipOrg.key, 'POST', '/v1/sessions', {
        mode: 'help_chat_voice',
        routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      const dial = await apiOnly.api(sipOrg.key, 'POST', `/v1/sessions/${id}/dial`, { headers: { 'X-Voxbridge-Test': 'api-only' } });
      expect(dial.status, JSON.stringify(dial.body)).toBe(200);
      expect(dial.body).toMatchObject({ object: 'call', session_id: id, direction: 'outbound', status: 'in-progress' });
      const owner = await ownerOf(a.redis, id);
      expect(['node-a', 'node-b']).toContain(owner?.node);
      const media = owner?.node === 'node-a' ? a : b;
      expect(media.telephony!.calls(id)).toHaveLength(1);

      const hangup = await apiOnly.api(sipOrg.key, 'POST', `/v1/sessions/${id}/hangup`);
      expect(hangup.status, JSON.stringify(hangup.body)).toBe(200);
      expect(hangup.body.data[0]).toMatchObject({ id: dial.body.id, status: 'completed' });
      ok(await callee.done);
      await apiOnly.api(sipOrg.key, 'POST', `/v1/sessions/${id}/end`);
    } finally {
      await apiOnly.close();
    }
  });

  it('answers 503 media_server_unavailable when no node can place calls', async () => {
    const lonely = await startTestGateway({ nodeId: 'node-lonely', roles: ['api'] });
    try {
      const o = await lonely.createOrg();
      await updateOrg(lonely.db, o.orgId, { sipEnabled: true });
      const created = await lonely.api(o.key, 'POST', '/v1/sessions', {
        mode: 'help_chat_voice',
        routing: { type: 'sip', sip: { to_uri: 'sip:callee@127.0.0.1:9' } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const dial = await lonely.api(o.key, 'POST', `/v1/sessions/${created.body.id}/dial`, {});
      expect(dial.status).toBe(503);
      expect(dial.body.error).toMatchObject({ type: 'api_error', code: 'media_server_unavailable' });
    } finally {
      await lonely.stop();
    }
  });
});
