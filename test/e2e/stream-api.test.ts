// The whole client journey through the public API: POST /v1/sessions → connect with stream.url and
// stream.token → speak → transcript during the session (in_progress) → POST …/end closes the socket
// with session.ended first → transcript completed. help_chat_voice transcribes and stores only
// (the AI agent runtime comes with its own issue).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { synthesizeSpeech, concatPcm, silence } from '../helpers/speech-audio.js';

let t: StreamTestGateway;

beforeAll(async () => {
  t = await startStreamGateway({ engines: 'embedded' });
});
afterAll(async () => {
  await t?.stop();
});

describe('stream through the public API', () => {
  it('creates, connects, transcribes, ends by REST and completes the transcript', async () => {
    const created = await t.api(t.org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', source_language: 'en', target_language: 'en' });
    expect(created.status).toBe(201);
    const { id, stream } = created.body;
    expect(stream.url).toMatch(new RegExp(`/v1/sessions/${id}/connect$`));
    expect(stream.token).toMatch(/^kst_/);
    // stream.url names the public host; the test reaches the same path on the bound port.
    const path = new URL(stream.url).pathname;
    expect(path).toBe(`/v1/sessions/${id}/connect`);
    const s = await t.connect(id, stream.token);
    await s.waitForType('session.ready');
    expect(s.of('session.error')).toEqual([]); // English both sides: every engine needed is there

    await s.sendAudio(concatPcm(silence(300), await synthesizeSpeech('my name is john smith'), silence(900)), { speaker: 'customer', pace: 4 });
    const final = await s.waitForType('transcript.final', 30_000);
    expect(final).toMatchObject({ sequence: 1, speaker: 'customer', language: 'en' });
    expect(final.text).toMatch(/john|smith/);
    expect(final).not.toHaveProperty('translation');

    const during = await t.api(t.org.key, 'GET', `/v1/sessions/${id}/transcript`);
    expect(during.status).toBe(200);
    expect(during.body.status).toBe('in_progress');
    await vi.waitFor(async () => {
      const r = await t.api(t.org.key, 'GET', `/v1/sessions/${id}/transcript`);
      expect(r.body.turns).toHaveLength(1);
    });
    const retrieved = await t.api(t.org.key, 'GET', `/v1/sessions/${id}`);
    expect(retrieved.body.status).toBe('active');

    const ended = await t.api(t.org.key, 'POST', `/v1/sessions/${id}/end`);
    expect(ended.status).toBe(200);
    expect(await s.waitForType('session.ended')).toMatchObject({ session_id: id, reason: 'api_request' });
    expect((await s.closed).code).toBe(1000);
    const after = await t.api(t.org.key, 'GET', `/v1/sessions/${id}/transcript`);
    expect(after.body).toMatchObject({ status: 'completed', metadata: { total_turns: 1 } });
    expect(after.body.turns[0]).toMatchObject({ sequence: 1, speaker: 'customer', language: 'en', text: final.text });
  });
});
