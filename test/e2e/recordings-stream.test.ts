// Recordings end to end over the socket with the embedded engines: a bidirectional translation call
// is recorded (agent, customer, mixed), encoded to MP3 after the end, announced in the outbox, and
// served with Range. The MP3s are decoded back (lame --decode): each lasts the call and each channel
// holds its party's speech (transcribed back with the embedded recognizer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { synthesizeSpeech, concatPcm, silence } from '../helpers/speech-audio.js';
import { decodeMp3, enableRecording, pollUntil, rms, transcribePcm } from '../helpers/recordings.js';
import { createApiKey, updateOrg } from '../../src/store/index.js';

let t: StreamTestGateway;
let key: string;

beforeAll(async () => {
  t = await startStreamGateway({
    engines: 'embedded',
    overrides: {
      engines: { stt: { timeoutMs: 90_000 } },
      postCall: { jobIntervalMs: 500, leaseSeconds: 30, captureGraceSeconds: 5, retentionIntervalMs: 600_000, mp3BitrateKbps: 16 },
    },
  });
  await updateOrg(t.gw.db, t.org.orgId, { features: ['recording'] });
  key = (
    await createApiKey(t.gw.db, { orgId: t.org.orgId, environment: t.gw.config.apiEnvironment, scopes: ['sessions:read', 'sessions:write', 'recordings:read'] })
  ).key!;
});
afterAll(async () => {
  await t?.stop();
});

async function fetchAudio(id: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.gw.httpUrl}/v1/recordings/${id}/audio`, { headers: { authorization: `Bearer ${key}`, ...headers } });
}

describe('a recorded bidirectional translation call', () => {
  it('yields agent, customer and mixed MP3s as long as the call, each channel with its party, announced and served with Range', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    await enableRecording(t.gw.db, id);
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');

    const t0 = performance.now();
    await s.sendAudio(concatPcm(await synthesizeSpeech('i would like to check my account balance'), silence(900)), { speaker: 'agent', chunkMs: 100, pace: 1 });
    const agentEndMs = performance.now() - t0;
    await s.waitForType('transcript.final', 60_000);
    // Let the Spanish translation be spoken to the customer (recorded on the agent's side) before the customer talks.
    await pollUntil(async () => s.of('audio.output').length > 10 && t.registry.get(id)!.queuedOutput('customer') === 0, 30_000, 'translated speech played');
    const customerStartMs = performance.now() - t0;
    await s.sendAudio(concatPcm(await synthesizeSpeech('i need help with my order'), silence(600)), { speaker: 'customer', chunkMs: 100, pace: 1 });
    const customerEndMs = performance.now() - t0;
    s.send({ type: 'session.end' });
    await s.waitForType('session.ended');

    const recs = await pollUntil(
      async () => {
        const list = await t.api(key, 'GET', `/v1/sessions/${id}/recordings`);
        return list.body.data.length === 3 && list.body.data.every((r: { status: string }) => r.status === 'ready') ? list.body.data : null;
      },
      90_000,
      'three ready recordings',
    );
    const byChannel: Record<string, any> = {};
    for (const item of recs) {
      const r = await t.api(key, 'GET', `/v1/recordings/${item.id}`);
      expect(r.status).toBe(200);
      byChannel[r.body.channel] = r.body;
    }
    expect(Object.keys(byChannel).sort()).toEqual(['agent', 'customer', 'mixed']);
    const session = (await t.api(key, 'GET', `/v1/sessions/${id}`)).body;
    const callSeconds = (Date.parse(session.ended_at) - Date.parse(session.started_at)) / 1000;

    for (const r of Object.values(byChannel)) {
      expect(r).toMatchObject({
        object: 'recording',
        session_id: id,
        status: 'ready',
        format: 'mp3',
        sample_rate: 8000,
        bit_depth: 16,
        download_url: `/v1/recordings/${r.id}/audio`,
      });
      expect(Date.parse(r.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000); // default retention: 30 days
      expect(Math.abs(r.duration - callSeconds)).toBeLessThan(1);
      const res = await fetchAudio(r.id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/mpeg');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('content-disposition')).toContain(id);
      const mp3 = new Uint8Array(await res.arrayBuffer());
      expect(mp3.length).toBe(r.size);
      const decoded = await decodeMp3(mp3);
      expect(decoded.sampleRate).toBe(8000);
      expect(Math.abs(decoded.pcm.length / 8000 - r.duration)).toBeLessThan(0.2);
      r.pcm = decoded.pcm;
    }

    // Each channel holds its own party: loud where the party spoke, silent where the other did.
    const margin = 400;
    const agentWin: [number, number] = [margin, agentEndMs - 900 - margin];
    const customerWin: [number, number] = [customerStartMs + margin, customerEndMs - 600 - margin];
    expect(rms(byChannel.agent.pcm, ...agentWin)).toBeGreaterThan(300);
    expect(rms(byChannel.customer.pcm, ...agentWin)).toBeLessThan(50);
    expect(rms(byChannel.customer.pcm, ...customerWin)).toBeGreaterThan(300);
    expect(rms(byChannel.agent.pcm, ...customerWin)).toBeLessThan(50);
    expect(rms(byChannel.mixed.pcm, ...agentWin)).toBeGreaterThan(300);
    expect(rms(byChannel.mixed.pcm, ...customerWin)).toBeGreaterThan(300);
    const cut = (pcm: Int16Array, [a, b]: [number, number]) => pcm.subarray(Math.floor(((a - margin) * 8000) / 1000), Math.floor(((b + margin) * 8000) / 1000));
    const stt = t.engines.stt!;
    const agentText = await transcribePcm(stt, cut(byChannel.agent.pcm, agentWin));
    const customerText = await transcribePcm(stt, cut(byChannel.customer.pcm, customerWin));
    expect(agentText).toMatch(/account|balance/);
    expect(customerText).toMatch(/help|order/);

    // Range for players.
    const mixed = byChannel.mixed;
    const part = await fetchAudio(mixed.id, { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${mixed.size}`);
    expect((await part.arrayBuffer()).byteLength).toBe(100);
    const tail = await fetchAudio(mixed.id, { range: 'bytes=-50' });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${mixed.size - 50}-${mixed.size - 1}/${mixed.size}`);
    const beyond = await fetchAudio(mixed.id, { range: `bytes=${mixed.size + 10}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${mixed.size}`);

    // The outbox: session.ended names the mixed recording and the transcript; transcript.ready; recording.ready ×3.
    const { rows: events } = await t.gw.db.query<{ type: string; data: any }>('SELECT type, data FROM webhook_events WHERE org_id = $1 ORDER BY created_at', [
      t.org.orgId,
    ]);
    const ended = events.find((e) => e.type === 'session.ended' && e.data.id === id)!;
    expect(ended.data.recording.id).toBe(mixed.id);
    expect(Math.abs(ended.data.recording.duration - mixed.duration)).toBeLessThan(1);
    expect(ended.data.transcript.available).toBe(true);
    expect(ended.data.transcript.word_count).toBeGreaterThan(3);
    const ready = events.find((e) => e.type === 'transcript.ready' && e.data.session_id === id)!;
    expect(ready.data).toMatchObject({ session_id: id, segment_count: 1, word_count: ended.data.transcript.word_count, languages: ['en'] });
    expect(ready.data.duration).toBeCloseTo(session.duration_seconds ?? ready.data.duration, 3);
    const recReady = events.filter((e) => e.type === 'recording.ready' && e.data.session_id === id);
    expect(recReady).toHaveLength(3);
    for (const e of recReady) {
      const r = byChannel[e.data.channel];
      expect(e.data).toEqual({
        id: r.id,
        object: 'recording',
        session_id: id,
        channel: r.channel,
        duration: r.duration,
        format: 'mp3',
        size: r.size,
        download_url: r.download_url,
      });
    }
  }, 180_000);

  it("mode 'mixed' records one mixed channel; an organization without the 'recording' feature records nothing", async () => {
    const speak = async (id: string, token: string) => {
      const s = await t.connect(id, token);
      await s.waitForType('session.ready');
      await s.sendAudio(concatPcm(await synthesizeSpeech('good morning'), silence(500)), { speaker: 'customer', chunkMs: 100, pace: 2 });
      s.send({ type: 'session.end' });
      await s.waitForType('session.ended');
    };
    const mixedOnly = await t.createSession({ mode: 'bidirectional_translation', source_language: 'es', target_language: 'en' });
    await enableRecording(t.gw.db, mixedOnly.id, { mode: 'mixed' });
    await speak(mixedOnly.id, mixedOnly.token);
    const recs = await pollUntil(
      async () => {
        const list = await t.api(key, 'GET', `/v1/sessions/${mixedOnly.id}/recordings`);
        return list.body.data.length > 0 && list.body.data.every((r: { status: string }) => r.status === 'ready') ? list.body.data : null;
      },
      90_000,
      'the mixed recording',
    );
    expect(recs).toHaveLength(1);
    expect((await t.api(key, 'GET', `/v1/recordings/${recs[0].id}`)).body.channel).toBe('mixed');

    await updateOrg(t.gw.db, t.org.orgId, { features: [] });
    try {
      const denied = await t.createSession({ mode: 'bidirectional_translation', source_language: 'es', target_language: 'en' });
      await enableRecording(t.gw.db, denied.id);
      await speak(denied.id, denied.token);
      const { rows: ended } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = 'session.ended' AND data->>'id' = $1`, [denied.id]);
      expect(ended[0].data.recording).toBeNull();
      const { rows } = await t.gw.db.query('SELECT id FROM recordings WHERE session_id = $1', [denied.id]);
      expect(rows).toEqual([]);
    } finally {
      await updateOrg(t.gw.db, t.org.orgId, { features: ['recording'] });
    }
  }, 180_000);
});
