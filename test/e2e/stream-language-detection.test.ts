// Language detection end to end: a session created with null languages, the OpenAI-compatible
// engines pointed at the local OpenAI-protocol server (pocketsphinx and espeak-ng behind it),
// Apertium translating. The default language is Spanish, so before detection both parties
// "speak" Spanish and nothing is translated; the first English utterance is detected, the route
// en -> es is planned from it, and that very utterance comes back translated and spoken.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApertiumTranslator, buildEngines, DEFAULT_POLICY, OpenAiStt, OpenAiTts } from '../../src/speech/index.js';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { startOpenAiAudioServer, type OpenAiAudioServer } from '../helpers/speech-openai-server.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';

let server: OpenAiAudioServer;
let t: StreamTestGateway;

beforeAll(async () => {
  server = await startOpenAiAudioServer();
  const policy = { ...DEFAULT_POLICY, timeoutMs: 30_000 };
  const engines = buildEngines(
    new OpenAiStt({ url: server.url, model: 'whisper-1', apiKey: async () => null, policy, partialIntervalMs: 0 }),
    await ApertiumTranslator.create({ timeoutMs: 20_000 }),
    new OpenAiTts({ url: server.url, model: 'tts-1', voice: 'alloy', apiKey: async () => null, policy }),
  );
  t = await startStreamGateway({ engines, overrides: { engines: { stt: { defaultLanguage: 'es' } } } });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await server?.close();
});

describe('a session with null languages', () => {
  it('takes the agent language from the engine, plans the translation from it and shows it', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: null, target_language: null });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    const speech = await synthesizeSpeech('i would like to check my account balance');
    await s.sendAudio(concatPcm(silence(300), speech, silence(900)), { speaker: 'agent', chunkMs: 100, pace: 4 });

    const final = await s.waitForType('transcript.final', 60_000);
    expect(final).toMatchObject({ speaker: 'agent', language: 'en' });
    expect(final.text).toMatch(/balance/);
    // Planned from the detected language: English to the (default) Spanish of the customer.
    expect(final.translation.language).toBe('es');
    expect(final.translation.text).toMatch(/saldo|cuenta/i);
    expect(server.transcriptions.at(-1)).toMatchObject({ language: null, responseFormat: 'verbose_json' });

    // Spoken to the customer through the streaming TTS adapter.
    const out = await s.waitForCount('audio.output', 20, 30_000);
    expect(out[0]).toMatchObject({ speaker: 'translated_agent' });
    expect(server.speeches.at(-1)!.input).toBe(final.translation.text);

    // The session object and the stored turn show the detected code; the customer's stays null.
    await vi.waitFor(
      async () => {
        const res = await t.api(t.org.key, 'GET', `/v1/sessions/${id}`);
        expect(res.body).toMatchObject({ source_language: 'en', target_language: null });
      },
      { timeout: 10_000 },
    );
    const { rows } = await t.gw.db.query('SELECT language FROM transcript_turns WHERE session_id = $1', [id]);
    expect(rows).toEqual([{ language: 'en' }]);
    await s.close();
  }, 120_000);
});
