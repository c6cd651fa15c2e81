// Phone legs in the real pipeline (server.ts wiring, embedded engines): a caller on a SIP trunk
// speaks over RTP and the socket client receives the transcript; the socket client speaks and
// the translated speech arrives as RTP at the phone.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { synthesizeSpeech, concatPcm, silence } from '../helpers/speech-audio.js';
import { startSipp, eventually, type SippResult, addLoopbackNumber, loopbackSipConfig } from '../helpers/sip-harness.js';
import { updateOrg } from '../../src/store/index.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode, alawDecode } from '../../src/media/g711.js';
import type { Telephony } from '../../src/telephony/index.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { defined } from '../helpers/defined.js';

interface PhoneGateway {
  t: StreamTestGateway;
  telephony: Telephony;
  number: string;
}

/** A gateway with every role, embedded engines, SIP on a free port and a managed number; media through rtpengine when `rtpengineNg` is set. */
async function startPhoneGateway(rtpengineNg: string | null): Promise<PhoneGateway> {
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  const gw = await startStreamGateway({
    engines: 'embedded',
    overrides: {
      roles: ['api', 'media', 'worker'],
      sip: loopbackSipConfig(rtpBase, { rtpTimeoutSeconds: 30 }),
      rtpengine: { ng: rtpengineNg, timeoutMs: 3000 },
    },
  });
  const tel = gw.gw.telephony;
  if (!tel) throw new Error('the media role did not start telephony');
  await updateOrg(gw.gw.db, gw.org.orgId, { sipEnabled: true });
  const num = await addLoopbackNumber(gw.gw.db, gw.org.orgId);
  return { t: gw, telephony: tel, number: num };
}

let t: StreamTestGateway;
let plain: PhoneGateway;

beforeAll(async () => {
  plain = await startPhoneGateway(null);
  ({ t } = plain);
}, 60_000);
afterAll(async () => {
  await plain?.t.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / f.length);

async function udpPeer(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

/**
 * Sends PCM as PCMA RTP in real time (20 ms packets) to the gateway's port. Packets are sent by
 * elapsed time, not one per timer callback: a phone's clock does not drift like setInterval.
 */
function sendRtp(peer: dgram.Socket, pcm: Int16Array, port: number): Promise<void> {
  const total = Math.floor(pcm.length / 160);
  const start = performance.now();
  let i = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor((performance.now() - start) / 20) + 1);
      for (; i < due; i++) {
        const payload = alawEncode(pcm.subarray(i * 160, i * 160 + 160));
        peer.send(serializeRtp({ marker: i === 0, payloadType: 8, sequence: i & 0xffff, timestamp: i * 160, ssrc: 4242, payload }), port, '127.0.0.1');
      }
      if (i >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.gw.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.org.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

describe('POST /v1/sessions/{id}/dial and /hangup', () => {
  it('dials a SIPp callee, reports the call and hangs up over the API', async () => {
    const callee = await startSipp({ scenario: 'uas-answer.xml' });
    const { id } = await t.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } } });
    const dial = await api('POST', `/v1/sessions/${id}/dial`, { party: 'customer', ring_timeout_seconds: 10, headers: { 'X-Voxbridge-Test': 'api' } });
    expect(dial.status).toBe(200);
    expect(dial.body).toMatchObject({ object: 'call', session_id: id, provider: 'sip', party: 'customer', direction: 'outbound', status: 'in-progress' });
    // (the helper's row has a bare recording object; give it the shape the API returns)
    await t.gw.db.query(
      `UPDATE sessions SET recording = '{"enabled":false,"mode":"dual_channel","consent_required":false,"consent_status":"not_required"}' WHERE id = $1`,
      [id],
    );
    const got = await api('GET', `/v1/sessions/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.provider).toBe('sip');
    expect(got.body.call).toMatchObject({ object: 'call', provider: 'sip', call_sid: dial.body.call_sid, direction: 'outbound', status: 'in-progress' });
    const hang = await api('POST', `/v1/sessions/${id}/hangup`, {});
    expect(hang.status).toBe(200);
    expect(hang.body.data[0]).toMatchObject({ call_sid: dial.body.call_sid, status: 'completed' });
    ok(await callee.done);
    const again = await api('POST', `/v1/sessions/${id}/hangup`);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('session_not_dialable');
  });

  it('documents dial and hangup in the OpenAPI document', async () => {
    const res = await fetch(`${t.gw.httpUrl}/v1/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> };
    const dial = doc.paths['/v1/sessions/{id}/dial']?.post;
    expect(dial).toBeDefined();
    expect(Object.keys(defined(dial, 'dial operation').responses)).toEqual(expect.arrayContaining(['200', '400', '404', '502', '503']));
    expect(JSON.stringify(defined(dial, 'dial operation').requestBody)).toContain('ring_timeout_seconds');
    expect(doc.paths['/v1/sessions/{id}/hangup']?.post).toBeDefined();
  });

  it('maps dial failures to the catalog', async () => {
    const busy = await startSipp({ scenario: 'uas-busy.xml' });
    const { id } = await t.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${busy.port}` } } });
    const r = await api('POST', `/v1/sessions/${id}/dial`, {});
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ type: 'api_error', code: 'dial_failed' });
    expect(r.body.error.message).toContain('486');
    ok(await busy.done);
    const ended = await t.createSession({ status: 'ended', routing: { type: 'sip', sip: { to_uri: 'sip:x@127.0.0.1:9' } } });
    expect((await api('POST', `/v1/sessions/${ended.id}/dial`)).body.error.code).toBe('session_not_dialable');
    expect((await api('POST', '/v1/sessions/sess_missing/dial', {})).status).toBe(404);
    const bad = await api('POST', `/v1/sessions/${id}/dial`, { headers: { 'P-Asserted-Identity': 'x' } });
    expect(bad.status).toBe(400);
  });
});

/** `callerCodecs`: payload types the SIPp caller offers (scenarios check that PCMA is answered). */
function phoneLegTests(phone: () => PhoneGateway, callerCodecs = '8 0 101'): void {
  it('transcribes a caller speaking over RTP and delivers the transcript to the socket', async () => {
    const { t, telephony, number } = phone();
    // Customer speaks English (target_language), agent Spanish (source_language).
    const { id, token } = await t.createSession({ source_language: 'es', target_language: 'en', routing: { phone_number: number } });
    await t.gw.db.query('UPDATE sessions SET phone_number = $2 WHERE id = $1', [id, number]);
    const socket = await t.connect(id, token);
    const peer = await udpPeer();
    let gatewayPort = 0;
    peer.once('message', (_m, rinfo) => {
      gatewayPort = rinfo.port; // symmetric RTP: the gateway sends from the port it listens on
    });
    const sipp = await startSipp({
      scenario: 'uac-call-remote-bye.xml',
      target: `127.0.0.1:${telephony.sipPort}`,
      service: number,
      keys: { rtp_port: String(peer.address().port), codecs: callerCodecs },
    });
    await socket.waitForType('session.ready', 20_000);
    await eventually(() => gatewayPort > 0);
    const speech = concatPcm(silence(300), await synthesizeSpeech('i would like to check my account balance'), silence(1200));
    await sendRtp(peer, speech, gatewayPort);
    const final = await socket.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'customer', 40_000, 'customer transcript');
    expect(final.language).toBe('en');
    // Key words, not the exact text (test/helpers/speech-audio.ts): G.711 and the jitter buffer sit
    // between the fixture and the recognizer here.
    expect(final.text).toMatch(/account/);
    expect(final.translation).toMatchObject({ language: 'es' });
    expect(final.translation.text).toMatch(/cuenta/i);
    const { rows } = await t.gw.db.query('SELECT status FROM sessions WHERE id = $1', [id]);
    expect(rows[0].status).toBe('active');
    await telephony.hangup(id, t.org.orgId, {});
    ok(await sipp.done);
    peer.close();
  }, 120_000);

  it("plays the socket client's translated speech to the phone as RTP", async () => {
    const { t, telephony, number } = phone();
    // Agent (socket) speaks English; the customer on the phone hears Spanish TTS.
    const { id, token } = await t.createSession({ source_language: 'en', target_language: 'es', routing: { phone_number: number } });
    await t.gw.db.query('UPDATE sessions SET phone_number = $2 WHERE id = $1', [id, number]);
    const socket = await t.connect(id, token);
    const peer = await udpPeer();
    const heard: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p?.payloadType === 8) heard.push(rms(alawDecode(p.payload)));
    });
    const sipp = await startSipp({
      scenario: 'uac-call-remote-bye.xml',
      target: `127.0.0.1:${telephony.sipPort}`,
      service: number,
      keys: { rtp_port: String(peer.address().port), codecs: callerCodecs },
    });
    await socket.waitForType('session.ready', 20_000);
    await socket.sendAudio(concatPcm(silence(300), await synthesizeSpeech('thank you very much'), silence(900)), { speaker: 'agent', chunkMs: 100, pace: 1 });
    await socket.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'agent', 40_000, 'agent transcript');
    // Silence is sent while nothing is queued; the translation arrives as loud frames.
    await eventually(() => heard.filter((v) => v > 500).length >= 25, 40_000);
    await telephony.hangup(id, t.org.orgId, {});
    ok(await sipp.done);
    peer.close();
  }, 120_000);
}

describe('phone legs in the session pipeline', () => {
  phoneLegTests(() => plain);
});

describe('phone legs in the session pipeline, media anchored by rtpengine', () => {
  let rtpengine: RtpengineHandle | undefined;
  let anchored: PhoneGateway | undefined;
  beforeAll(async () => {
    rtpengine = await startRtpengine();
    anchored = await startPhoneGateway(rtpengine.ng);
  }, 60_000);
  afterAll(async () => {
    await anchored?.t.stop();
    await rtpengine?.stop();
  });
  // A PCMA-only caller: rtpengine transcodes, so the gateway's own endpoint speaks PCMU.
  phoneLegTests(() => anchored!, '8 101');
});
