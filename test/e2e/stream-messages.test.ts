// Socket messages and their errors (SPEC "Streaming socket messages"): invalid_message,
// invalid_audio_format, message_too_large keep the connection open; engine_unavailable at connect;
// first audio activates the session; a dropped socket can reconnect; REST end closes the socket.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, type StreamTestGateway, type TestSocket } from '../helpers/stream.js';
import { endSession } from '../../src/sessions/index.js';
import { getSessionRow } from '../../src/store/index.js';
import { socketMaxPayload } from '../../src/stream/index.js';
import { synthesizeSpeech } from '../helpers/speech-audio.js';
import { defined } from '../helpers/defined.js';

let t: StreamTestGateway;
const CEILING = 4096;

beforeAll(async () => {
  t = await startStreamGateway({ overrides: { limits: { socketMessageMaxBytes: CEILING } } });
});
afterAll(async () => {
  await t?.stop();
});

async function connected(): Promise<{ id: string; s: TestSocket }> {
  const { id, token } = await t.createSession();
  const s = await t.connect(id, token);
  await s.waitForType('session.ready');
  return { id, s };
}

/** Sends `msg`, expects one `session.error` with `code`, and checks the socket still answers. */
async function expectSocketError(s: TestSocket, id: string, msg: unknown, code: string): Promise<void> {
  const before = s.of('session.error').length;
  const pongs = s.of('pong').length;
  s.send(msg);
  const errors = await s.waitForCount('session.error', before + 1);
  expect(errors[before]).toMatchObject({ type: 'session.error', session_id: id, error: { code } });
  expect(typeof defined(errors[before], 'session.error').error.message).toBe('string');
  s.send({ type: 'ping' });
  await s.waitForCount('pong', pongs + 1);
  expect(s.isClosed).toBe(false);
}

const audio = (over: Record<string, unknown> = {}, audioOver: Record<string, unknown> = {}) => ({
  type: 'audio.input',
  sequence: 1,
  timestamp_ms: 0,
  audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: Buffer.alloc(160, 0xff).toString('base64'), ...audioOver },
  ...over,
});

describe('socket messages', () => {
  it('answers invalid_message for bad JSON, non-objects, unknown types and a bad speaker', async () => {
    const { id, s } = await connected();
    await expectSocketError(s, id, '{not json', 'invalid_message');
    await expectSocketError(s, id, '[1,2]', 'invalid_message');
    await expectSocketError(s, id, { hello: 'world' }, 'invalid_message');
    await expectSocketError(s, id, { type: 'session.mute' }, 'invalid_message');
    await expectSocketError(s, id, audio({ speaker: 'bob smith' }), 'invalid_message');
    await expectSocketError(s, id, audio({ sequence: 'one' }), 'invalid_message');
    await s.close();
  });

  it('accepts two channel ids as speakers (customer first, then agent) and refuses a third', async () => {
    const { id, s } = await connected();
    const pongs = s.of('pong').length;
    s.send(audio({ speaker: 'ch-7' }));
    s.send(audio({ speaker: 'ch-2' }));
    s.send(audio({ speaker: 'ch-7' }));
    s.send({ type: 'ping' });
    await s.waitForCount('pong', pongs + 1);
    expect(s.of('session.error').filter((m) => m.error.code === 'invalid_message')).toHaveLength(0);
    await expectSocketError(s, id, audio({ speaker: 'ch-9' }), 'invalid_message');
    // The explicit parties still work alongside.
    s.send(audio({ speaker: 'agent' }));
    s.send({ type: 'ping' });
    await s.waitForCount('pong', pongs + 3);
    expect(s.of('session.error').filter((m) => m.error.code === 'invalid_message')).toHaveLength(1);
    await s.close();
  });

  it('answers invalid_audio_format for anything but base64 mu-law at 8000 Hz mono', async () => {
    const { id, s } = await connected();
    await expectSocketError(s, id, audio({}, { encoding: 'pcm16' }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { encoding: 'alaw' }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { sample_rate_hz: 16000 }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { sample_rate_hz: '8000' }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { channels: 2 }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { payload: 'not base64!' }), 'invalid_audio_format');
    await expectSocketError(s, id, audio({}, { payload: 42 }), 'invalid_audio_format');
    await expectSocketError(s, id, { type: 'audio.input' }, 'invalid_audio_format');
    // None of it counted as audio: the session is still waiting for its first audio.
    expect((await getSessionRow(t.gw.db, id))!.status).toBe('created');
    await s.close();
  });

  it('answers message_too_large above the ceiling and stays open; far above it ws closes 1009', async () => {
    const { id, s } = await connected();
    const big = audio({}, { payload: Buffer.alloc(CEILING, 0xff).toString('base64') });
    await expectSocketError(s, id, big, 'message_too_large');
    // Over 1 MiB (and far over 4x the ceiling) is still answered, not closed.
    const huge = audio({}, { payload: Buffer.alloc(1536 * 1024, 0xff).toString('base64') });
    await expectSocketError(s, id, huge, 'message_too_large');
    s.send('x'.repeat(socketMaxPayload(CEILING) + 1));
    expect((await s.closed).code).toBe(1009);
  });

  it('reports engine_unavailable at connect when the engines cannot serve a party', async () => {
    const { s } = await connected();
    const errs = s.of('session.error').filter((m) => m.error.code === 'engine_unavailable');
    // Engines are off in this file: neither party is transcribed.
    expect(errs.map((e) => e.error.message).join('\n')).toMatch(
      /agent speech \(en\) will not be transcribed[\s\S]*customer speech \(es\) will not be transcribed/,
    );
    await s.close();
  });

  it('first audio activates the session: status active, started_at, session.started in the outbox', async () => {
    const { id, s } = await connected();
    await s.sendAudio(await synthesizeSpeech('good morning', { padMs: 200 }), { pace: 0 });
    await vi.waitFor(async () => expect((await getSessionRow(t.gw.db, id))!.status).toBe('active'), { timeout: 10_000 });
    const row = await getSessionRow(t.gw.db, id);
    expect(row!.started_at).toBeInstanceOf(Date);
    const { rows } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = 'session.started' AND data->>'id' = $1`, [id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].data).toMatchObject({
      id,
      object: 'session',
      status: 'active',
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      started_at: row!.started_at!.toISOString(), // the event's time is the row's, to the millisecond
    });
    await s.close();
  });

  it('messages count as activity: last_activity_at is written (batched) for the inactivity rule', async () => {
    const { id, s } = await connected();
    await t.gw.db.query(`UPDATE sessions SET last_activity_at = now() - interval '1 hour' WHERE id = $1`, [id]);
    s.send({ type: 'ping' });
    await s.waitForType('pong');
    await t.registry.flushTouches();
    const { rows } = await t.gw.db.query(`SELECT now() - last_activity_at < interval '1 minute' AS fresh FROM sessions WHERE id = $1`, [id]);
    expect(rows[0].fresh).toBe(true);
    await s.close();
  });

  it('audio.input counts as activity through its frames, not per message', async () => {
    const { id, s } = await connected();
    await t.gw.db.query(`UPDATE sessions SET last_activity_at = now() - interval '1 hour' WHERE id = $1`, [id]);
    await s.sendAudio(new Int16Array(160 * 5), { pace: 0 });
    await vi.waitFor(
      async () => {
        await t.registry.flushTouches();
        const { rows } = await t.gw.db.query(`SELECT now() - last_activity_at < interval '1 minute' AS fresh FROM sessions WHERE id = $1`, [id]);
        expect(rows[0].fresh).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    await s.close();
  });

  it('a dropped socket leaves the session open; a reconnect with a fresh token continues it', async () => {
    const { id, s } = await connected();
    await s.sendAudio(await synthesizeSpeech('thank you very much'), { pace: 0, speaker: 'agent' });
    await s.close(1001);
    await vi.waitFor(async () => expect(await t.gw.redis.exists(`stream:${id}`)).toBe(0));
    expect(t.registry.get(id)).toBeDefined();
    expect((await getSessionRow(t.gw.db, id))!.status).not.toBe('ended');
    const again = await t.connect(id, await t.issueToken(id));
    await again.waitForType('session.ready');
    again.send({ type: 'ping' });
    await again.waitForType('pong');
    await again.close();
  });

  it('with phone routing, session.ready waits for the leg; output for that party then goes to the leg', async () => {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', routing: { type: 'sip', sip: { to_uri: 'sip:agent@example.com' } } });
    const s = await t.connect(id, token);
    s.send({ type: 'ping' });
    await s.waitForType('pong');
    expect(s.of('session.ready')).toEqual([]);
    const played: Int16Array[] = [];
    const session = t.registry.get(id)!;
    session.attachLeg({ party: 'agent', kind: 'sip', playFrame: (f) => played.push(f), close: () => undefined });
    expect(await s.waitForType('session.ready')).toMatchObject({ session_id: id });
    // Assistive: the customer's audio is bridged to the agent, who is on the phone leg now.
    await s.sendAudio(await synthesizeSpeech('good morning'), { pace: 1 });
    await vi.waitFor(() => expect(played.length).toBeGreaterThan(25), { timeout: 10_000 });
    expect(s.of('audio.output')).toEqual([]);
    await s.close();
  });

  it('an end by REST (session bus) sends session.ended with its reason, then closes 1000', async () => {
    const { id, s } = await connected();
    await endSession({ db: t.gw.db, redis: t.gw.redis, redisKeyPrefix: t.gw.config.redisKeyPrefix }, id, 'api_request');
    expect(await s.waitForType('session.ended')).toMatchObject({ session_id: id, reason: 'api_request' });
    expect((await s.closed).code).toBe(1000);
    expect(t.registry.get(id)).toBeUndefined();
  });
});
