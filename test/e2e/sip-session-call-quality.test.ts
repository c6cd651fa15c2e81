// GET /v1/sessions/{id} shows the leg's RTP/RTCP quality on `call`: live figures while the
// leg is up (read from the node carrying it, so they grow between two reads), the final figures
// stored when it ended afterwards — the same ones the hangup response carried. A real SIPp callee.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { startSipp, eventually, loopbackSipConfig } from '../helpers/sip-harness.js';
import { updateOrg } from '../../src/store/index.js';

let t: StreamTestGateway;

beforeAll(async () => {
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  t = await startStreamGateway({
    engines: 'none',
    overrides: {
      roles: ['api', 'media', 'worker'],
      sip: loopbackSipConfig(rtpBase, { maxConcurrentCalls: 10 }),
    },
  });
  await updateOrg(t.gw.db, t.org.orgId, { sipEnabled: true });
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.gw.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.org.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

describe('call quality on GET /v1/sessions/{id}', () => {
  it('is live while the leg is up and the stored final figures once it ended', async () => {
    const callee = await startSipp({ scenario: 'uas-answer.xml' });
    const { id } = await t.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } } });
    const dial = await api('POST', `/v1/sessions/${id}/dial`, { party: 'customer', ring_timeout_seconds: 10, headers: { 'X-Voxbridge-Test': 'quality' } });
    expect(dial.status).toBe(200);

    const first = await eventually(async () => {
      const g = await api('GET', `/v1/sessions/${id}`);
      return g.body.call?.quality?.packets_sent > 0 ? g.body : null;
    });
    expect(first.call).toMatchObject({ object: 'call', call_sid: dial.body.call_sid, status: 'in-progress' });
    expect(first.call.quality).toMatchObject({ packets_received: 0, rtt_ms: null, rtcp: { mux: false } });
    expect(typeof first.call.quality.mos).toBe('number');
    // Live: the gateway keeps sending 50 packets/s, so a later read shows more.
    const later = await eventually(async () => {
      const g = await api('GET', `/v1/sessions/${id}`);
      return g.body.call.quality.packets_sent > first.call.quality.packets_sent + 10 ? g.body : null;
    });
    expect(later.call.status).toBe('in-progress');

    const hang = await api('POST', `/v1/sessions/${id}/hangup`, {});
    expect(hang.status).toBe(200);
    const final = hang.body.data[0].quality;
    expect(final.packets_sent).toBeGreaterThanOrEqual(later.call.quality.packets_sent);
    expect((await callee.done).code).toBe(0);

    // Ended: the figures stored at the end, unchanged by time.
    const ended = await eventually(async () => {
      const g = await api('GET', `/v1/sessions/${id}`);
      return g.body.call?.status === 'completed' ? g.body : null;
    });
    expect(ended.call.quality).toEqual(final);
    await new Promise((r) => setTimeout(r, 100));
    expect((await api('GET', `/v1/sessions/${id}`)).body.call.quality).toEqual(final);
  }, 60_000);

  it('documents the quality object on the session in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${t.gw.httpUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const retrieved = JSON.stringify(doc.paths['/v1/sessions/{id}']?.get?.responses['200']);
    expect(retrieved).toContain('packets_lost');
    expect(retrieved).toContain('mos');
  });
});
