// Recording a phone call: a SIPp caller (the customer) speaks over RTP to a managed number while the
// agent speaks on the socket. After the end the MP3s decode back to the call's length, and each
// channel holds its party (the caller's words transcribed back from the customer channel).
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { synthesizeSpeech, concatPcm, silence } from '../helpers/speech-audio.js';
import { startSipp, eventually, addLoopbackNumber, loopbackSipConfig } from '../helpers/sip-harness.js';
import { decodeMp3, enableRecording, firstLoudMs, pollUntil, rms, transcribePcm } from '../helpers/recordings.js';
import { createApiKey, updateOrg } from '../../src/store/index.js';
import { serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode } from '../../src/media/g711.js';
import { defined } from '../helpers/defined.js';

let t: StreamTestGateway;
let number: string;
let key: string;

beforeAll(async () => {
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  t = await startStreamGateway({
    engines: 'embedded',
    overrides: {
      sip: loopbackSipConfig(rtpBase, { rtpTimeoutSeconds: 30 }),
      // A busy machine: the recognizer transcribing the decoded MP3s back may queue behind the call's own.
      engines: { stt: { timeoutMs: 90_000 } },
      postCall: { jobIntervalMs: 500, leaseSeconds: 30, captureGraceSeconds: 5, retentionIntervalMs: 600_000, mp3BitrateKbps: 16 },
    },
  });
  await updateOrg(t.gw.db, t.org.orgId, { sipEnabled: true, features: ['sip', 'recording'] });
  number = await addLoopbackNumber(t.gw.db, t.org.orgId);
  key = (
    await createApiKey(t.gw.db, { orgId: t.org.orgId, environment: t.gw.config.apiEnvironment, scopes: ['sessions:read', 'sessions:write', 'recordings:read'] })
  ).key!;
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

/** PCM as PCMA RTP in real time (20 ms packets, sent by elapsed time). */
function sendRtp(peer: dgram.Socket, pcm: Int16Array, port: number): Promise<void> {
  const total = Math.floor(pcm.length / 160);
  const start = performance.now();
  let i = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor((performance.now() - start) / 20) + 1);
      for (; i < due; i++) {
        peer.send(
          serializeRtp({
            marker: i === 0,
            payloadType: 8,
            sequence: i & 0xffff,
            timestamp: i * 160,
            ssrc: 4343,
            payload: alawEncode(pcm.subarray(i * 160, i * 160 + 160)),
          }),
          port,
          '127.0.0.1',
        );
      }
      if (i >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
}

describe('a recorded SIP call', () => {
  it('records the phone caller on the customer channel and the socket agent on the agent channel', async () => {
    // The customer (phone) speaks English; the agent's (socket) language is Spanish, which is not transcribed here, but their audio is recorded.
    const { id, token } = await t.createSession({ source_language: 'es', target_language: 'en', routing: { phone_number: number } });
    await t.gw.db.query('UPDATE sessions SET phone_number = $2 WHERE id = $1', [id, number]);
    await enableRecording(t.gw.db, id);
    const socket = await t.connect(id, token);
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
    let gatewayPort = 0;
    peer.once('message', (_m, rinfo) => {
      gatewayPort = rinfo.port;
    });
    const sipp = await startSipp({
      scenario: 'uac-call-remote-bye.xml',
      target: `127.0.0.1:${t.gw.telephony!.sipPort}`,
      service: number,
      keys: { rtp_port: String(peer.address().port), codecs: '8 0 101' },
    });
    await socket.waitForType('session.ready', 20_000);
    await eventually(() => gatewayPort > 0);

    const words = await synthesizeSpeech('i would like to check my account balance');
    const t0 = performance.now();
    await sendRtp(peer, concatPcm(words, silence(1200)), gatewayPort);
    const customerEndMs = performance.now() - t0 - 1200;
    await socket.waitFor((m) => m.type === 'transcript.final' && m.speaker === 'customer', 60_000, 'customer transcript');
    // The English→Spanish translation is voiced to the agent (recorded on the customer's side); let it finish.
    await pollUntil(async () => t.registry.get(id)!.queuedOutput('agent') === 0 && socket.of('audio.output').length > 10, 40_000, 'translation played');
    const agentStartMs = performance.now() - t0;
    await socket.sendAudio(concatPcm(await synthesizeSpeech('good morning, thank you very much'), silence(500)), { speaker: 'agent', chunkMs: 100, pace: 1 });
    const agentEndMs = performance.now() - t0 - 500;
    await t.gw.telephony!.hangup(id, t.org.orgId, {});
    expect((await sipp.done).code).toBe(0);
    peer.close();
    expect((await t.api(key, 'POST', `/v1/sessions/${id}/end`)).status).toBe(200);

    const recs = await pollUntil(
      async () => {
        const list = await t.api(key, 'GET', `/v1/sessions/${id}/recordings`);
        return list.body.data.length === 3 && list.body.data.every((r: { status: string }) => r.status === 'ready') ? list.body.data : null;
      },
      90_000,
      'three ready recordings',
    );
    const pcm: Record<string, Int16Array> = {};
    const session = (await t.api(key, 'GET', `/v1/sessions/${id}`)).body;
    const callSeconds = (Date.parse(session.ended_at) - Date.parse(session.started_at)) / 1000;
    for (const item of recs) {
      const r = (await t.api(key, 'GET', `/v1/recordings/${item.id}`)).body;
      const res = await fetch(`${t.gw.httpUrl}${r.download_url}`, { headers: { authorization: `Bearer ${key}` } });
      const decoded = await decodeMp3(new Uint8Array(await res.arrayBuffer()));
      expect(decoded.sampleRate).toBe(8000);
      expect(Math.abs(decoded.pcm.length / 8000 - callSeconds)).toBeLessThan(1);
      pcm[r.channel] = decoded.pcm;
    }
    const m = 400;
    const customer = defined(pcm.customer, 'customer recording');
    const agent = defined(pcm.agent, 'agent recording');
    // The caller's words are on the customer channel only; the agent's on the agent channel only.
    expect(rms(customer, m, customerEndMs - m)).toBeGreaterThan(300);
    expect(rms(agent, m, customerEndMs - m)).toBeLessThan(50);
    expect(rms(agent, agentStartMs + m, agentEndMs - m)).toBeGreaterThan(300);
    expect(rms(customer, agentStartMs + m, agentEndMs - m)).toBeLessThan(50);
    // The recording starts with the session, before t0 by the call's set-up (longer on a busy machine), so
    // the caller's words are found by their level, not by t0: they end before the translation is voiced.
    const onsetMs = firstLoudMs(customer, 300);
    const wordsMs = words.length / 8;
    const heard = await transcribePcm(t.engines.stt!, customer.subarray(Math.max(0, (onsetMs - 200) * 8), (onsetMs + wordsMs + m) * 8));
    expect(heard).toMatch(/account|balance/);
  }, 240_000);
});
