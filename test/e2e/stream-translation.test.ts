// Both translation modes end to end with the embedded engines (pocketsphinx 8 kHz, Apertium eng-spa,
// espeak-ng): speech in over the socket, transcripts, translations and paced audio.output out, and
// the transcript stored as it happens with its transcript.segment events.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, type ReceivedMessage, type StreamTestGateway } from '../helpers/stream.js';
import { synthesizeSpeech, concatPcm, silence } from '../helpers/speech-audio.js';
import { defined } from '../helpers/defined.js';

let t: StreamTestGateway;

beforeAll(async () => {
  t = await startStreamGateway({ engines: 'embedded' });
});
afterAll(async () => {
  await t?.stop();
});

const BALANCE = 'i would like to check my account balance';

function checkOutputFrames(frames: ReceivedMessage[], speaker: string): void {
  expect(frames.length).toBeGreaterThan(10);
  for (const f of frames) {
    expect(f).toMatchObject({ type: 'audio.output', speaker, audio: { encoding: 'mulaw', sample_rate_hz: 8000 } });
    expect(Buffer.from(f.audio.payload, 'base64').length % 160).toBe(0);
  }
  // sequence increases by one; timestamps advance in 20 ms steps of the media clock.
  for (let i = 1; i < frames.length; i++) {
    const prev = defined(frames[i - 1], 'previous frame');
    const cur = defined(frames[i], 'frame');
    expect(cur.sequence).toBe(prev.sequence + 1);
    expect(cur.timestamp_ms - prev.timestamp_ms).toBeGreaterThanOrEqual(20);
    expect(cur.timestamp_ms % 20).toBe(0);
  }
}

/** Paced in real time: N frames cannot arrive much faster than N x 20 ms. */
function checkPacing(frames: ReceivedMessage[]): void {
  const span = defined(frames[frames.length - 1], 'last frame').receivedAt - defined(frames[0], 'first frame').receivedAt;
  expect(span).toBeGreaterThanOrEqual((frames.length - 1) * 20 * 0.8);
}

describe('bidirectional_translation (agent en, customer es)', () => {
  it('transcribes the agent, translates into Spanish, speaks it to the customer and stores the turn', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    // Only English is transcribed here: the customer's Spanish speech is announced as not served.
    const unavailable = s.of('session.error').filter((m) => m.error.code === 'engine_unavailable');
    expect(unavailable.map((m) => m.error.message).join(' ')).toMatch(/customer speech \(es\) will not be transcribed/);
    expect(unavailable.map((m) => m.error.message).join(' ')).not.toMatch(/agent speech/);

    await s.sendAudio(concatPcm(silence(300), await synthesizeSpeech(BALANCE), silence(900)), { speaker: 'agent', chunkMs: 100, pace: 4 });
    const final = await s.waitForType('transcript.final', 30_000);
    expect(final).toMatchObject({ type: 'transcript.final', sequence: 1, speaker: 'agent', language: 'en' });
    expect(final.text).toMatch(/account/);
    expect(final.text).toMatch(/balance/);
    expect(typeof final.timestamp).toBe('string');
    expect(final.translation.language).toBe('es');
    expect(final.translation.text).toMatch(/saldo|cuenta/i);
    expect(s.of('transcript.partial').length).toBeGreaterThan(0);
    expect(s.of('transcript.partial')[0]).toMatchObject({ speaker: 'agent', language: 'en' });

    // The translation is spoken to the customer, paced in real time.
    const out = await s.waitForCount('audio.output', 50, 30_000);
    checkOutputFrames(out, 'translated_agent');
    checkPacing(out.slice(0, 50));

    // Stored as it happened: GET …/transcript reads these rows; transcript.segment went to the outbox.
    await vi.waitFor(async () => {
      const { rows } = await t.gw.db.query('SELECT * FROM transcript_turns WHERE session_id = $1', [id]);
      expect(rows).toHaveLength(1);
    });
    const { rows: turns } = await t.gw.db.query('SELECT * FROM transcript_turns WHERE session_id = $1', [id]);
    expect(turns[0]).toMatchObject({ sequence: 1, speaker: 'agent', language: 'en', text: final.text, translation: final.translation });
    expect(turns[0].end_time).toBeGreaterThan(turns[0].start_time);
    const { rows: events } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = 'transcript.segment' AND data->>'session_id' = $1`, [id]);
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({
      session_id: id,
      segment: {
        id: `trn_${id}_1`,
        speaker: 'agent',
        language: 'en',
        text: final.text,
        translation: final.translation.text,
        start_time: turns[0].start_time,
        end_time: turns[0].end_time,
        is_final: true,
      },
    });
    const { rows: started } = await t.gw.db.query(`SELECT 1 FROM webhook_events WHERE type = 'session.started' AND data->>'id' = $1`, [id]);
    expect(started).toHaveLength(1);

    s.send({ type: 'session.end' });
    await s.waitForType('session.ended');
    expect((await s.closed).code).toBe(1000);
  });

  it('translates English customer speech for a Spanish-speaking agent (agent es, customer en)', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: 'es', target_language: 'en' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.sendAudio(concatPcm(silence(300), await synthesizeSpeech('good morning'), silence(900)), { pace: 4 }); // speaker defaults to customer
    const final = await s.waitForType('transcript.final', 30_000);
    expect(final).toMatchObject({ speaker: 'customer', language: 'en', translation: { language: 'es' } });
    expect(final.text).toMatch(/morning/);
    expect(final.translation.text).toMatch(/buen|mañana|días/i);
    const out = await s.waitForCount('audio.output', 20, 30_000);
    checkOutputFrames(out, 'translated_customer');
    await s.close();
  });
});

describe('assistive_translation', () => {
  it('agent en → customer es: the agent is translated and spoken to the customer; the customer is bridged to the agent', async () => {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.sendAudio(concatPcm(silence(300), await synthesizeSpeech('thank you very much'), silence(900)), { speaker: 'agent', pace: 4 });
    const final = await s.waitForType('transcript.final', 30_000);
    expect(final).toMatchObject({ speaker: 'agent', language: 'en', translation: { language: 'es' } });
    expect(final.text).toMatch(/thank/);
    await s.waitFor((m) => m.type === 'audio.output' && m.speaker === 'translated_agent', 30_000, 'translated agent audio');

    // The customer's own voice reaches the agent unchanged (SPEC: "the agent hears the original").
    const customerAudio = await synthesizeSpeech('hola buenos dias', { voice: 'espeak' });
    await s.sendAudio(customerAudio, { pace: 1 }); // live audio: the bridge keeps at most 300 ms of backlog
    const bridged = await s
      .waitFor(() => s.of('audio.output').filter((m) => m.speaker === 'customer_original').length >= 25, 30_000, 'bridged audio')
      .then(() => s.of('audio.output').filter((m) => m.speaker === 'customer_original'));
    for (const f of bridged) expect(Buffer.from(f.audio.payload, 'base64').length).toBe(160);
    await s.close();
  });

  it('agent es, customer en: the agent reads the customer translated into Spanish; nothing is spoken to the agent', async () => {
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'es', target_language: 'en' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    expect(
      s
        .of('session.error')
        .map((m) => m.error.message)
        .join(' '),
    ).toMatch(/agent speech \(es\) will not be transcribed/);
    await s.sendAudio(concatPcm(silence(300), await synthesizeSpeech('i need help with my order'), silence(900)), { speaker: 'customer', pace: 4 });
    const final = await s.waitForType('transcript.final', 30_000);
    expect(final).toMatchObject({ speaker: 'customer', language: 'en', translation: { language: 'es' } });
    expect(final.text).toMatch(/help/);
    expect(final.translation.text).toMatch(/ayuda|orden|pedido/i);
    // Every audio.output is the bridged original; no synthesized speech goes to the agent.
    await s.waitFor((m) => m.type === 'audio.output', 30_000, 'bridged audio');
    expect(s.of('audio.output').every((m) => m.speaker === 'customer_original')).toBe(true);
    await s.close();
  });
});
