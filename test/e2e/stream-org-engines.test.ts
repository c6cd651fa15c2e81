// Per-organization engines end to end: the node serves no speech at all; the test
// organization chooses Deepgram live STT, Apertium and ElevenLabs streaming TTS (store, as
// `admin org update --stt deepgram …` writes it), each remote one a local server speaking that
// provider's protocol with the embedded engines behind it. Session creation plans with the
// organization's engines; a real WebSocket client streams flite speech and gets transcripts and
// translated audio. Then both remote servers die mid-session: the stages fall back to pocketsphinx
// and espeak-ng, the session says so (`engine_error` … "fell back") and keeps translating.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSecret } from '../../src/secrets/index.js';
import { setOrgEngines } from '../../src/store/index.js';
import { startStreamGateway, type StreamTestGateway, type TestSocket } from '../helpers/stream.js';
import { startDeepgramServer, type DeepgramServer } from '../helpers/speech-deepgram-server.js';
import { startElevenLabsServer, type ElevenLabsServer } from '../helpers/speech-elevenlabs-server.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';

const DG_KEY = 'dg-org-key';
const EL_KEY = 'el-org-key';
let dg: DeepgramServer;
let el: ElevenLabsServer;
let t: StreamTestGateway;

beforeAll(async () => {
  [dg, el] = await Promise.all([startDeepgramServer({ apiKey: DG_KEY, decoderTimeoutMs: 120_000 }), startElevenLabsServer({ apiKey: EL_KEY })]);
  // Generous engine deadlines: the decoders behind the fake servers share a loaded machine.
  t = await startStreamGateway({
    engines: 'none',
    overrides: { engines: { stt: { timeoutMs: 120_000 }, tts: { timeoutMs: 60_000 }, translate: { timeoutMs: 60_000 } } },
  });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await dg?.close();
  await el?.close();
});

const create = (source: string, target: string) =>
  t.api(t.org.key, 'POST', '/v1/sessions', {
    mode: 'bidirectional_translation',
    source_language: source,
    target_language: target,
    voice: { voice_id: '21m00Tcm4TlvDq8ikWAM' },
  });

async function say(s: TestSocket, text: string): Promise<void> {
  const speech = await synthesizeSpeech(text);
  await s.sendAudio(concatPcm(silence(300), speech, silence(900)), { speaker: 'agent', chunkMs: 100, pace: 4 });
}

describe('an organization with its own engines', () => {
  it('is planned with its engines at create, and a socket session runs on Deepgram and ElevenLabs; then falls back when they die', async () => {
    // The node has no engines: refused, as today.
    const refused = await create('en', 'es');
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_error');

    await setSecret(t.gw.db, t.gw.config.secretKey, t.org.orgId, 'dg', DG_KEY);
    await setSecret(t.gw.db, t.gw.config.secretKey, t.org.orgId, 'el', EL_KEY);
    await setOrgEngines(t.gw.db, t.org.orgId, {
      stt: { provider: 'deepgram', url: dg.url, apiKeySecret: 'dg', languages: ['en'] },
      translate: { provider: 'apertium' },
      tts: { provider: 'elevenlabs', url: el.url, apiKeySecret: 'el', languages: ['en', 'es'] },
    });
    // Planned with the organization's engines: nothing transcribes French or German.
    const unserved = await create('fr', 'de');
    expect(unserved.status).toBe(400);
    expect(unserved.body.error.message).toMatch(/no speech-to-text engine for 'fr'/);

    const created = await create('en', 'es');
    expect(created.status).toBe(201);
    const s = await t.connect(created.body.id, created.body.stream.token);
    await s.waitForType('session.ready');

    await say(s, 'i would like to check my account balance');
    const first = await s.waitForType('transcript.final', 240_000);
    expect(first).toMatchObject({ speaker: 'agent', language: 'en', translation: { language: 'es' } });
    expect(first.text).toMatch(/balance/);
    expect(first.translation.text).toMatch(/saldo|cuenta/i);
    const audio = await s.waitForCount('audio.output', 20, 30_000);
    expect(audio[0]).toMatchObject({ speaker: 'translated_agent' });
    // The remote engines served it, with the organization's secrets.
    expect(dg.requests.at(-1)).toMatchObject({ authorization: `Token ${DG_KEY}`, closeStream: true });
    expect(el.requests.at(-1)!.body.text).toBe(first.translation.text);
    // Only the planned notice that the customer's Spanish is not transcribed (the org's Deepgram offers English).
    expect(s.of('session.error').map((m) => m.error.code)).toEqual(['engine_unavailable']);

    // Both remote servers die mid-session.
    const before = s.of('audio.output').length;
    await Promise.all([dg.close(), el.close()]);
    await say(s, 'i would like to check my account balance');
    const second = await s.waitFor((m) => m.type === 'transcript.final' && m.sequence === first.sequence + 1, 240_000, 'second final');
    expect(second.text).toMatch(/balance/);
    expect(second.translation.language).toBe('es');
    const errors = () => s.of('session.error').map((m) => m.error as { code: string; message: string });
    await s.waitFor(() => errors().some((e) => /fell back to espeak-ng/.test(e.message)), 60_000, 'tts fallback notice');
    expect(errors().find((e) => /fell back to pocketsphinx/.test(e.message))).toMatchObject({
      code: 'engine_error',
      message: expect.stringMatching(/^speech-to-text by deepgram failed/),
    });
    expect(
      errors()
        .filter((e) => e.code !== 'engine_error')
        .map((e) => e.code),
    ).toEqual(['engine_unavailable']);
    // The embedded synthesizer spoke the second translation.
    await s.waitFor(() => s.of('audio.output').length >= before + 20, 30_000, 'fallback audio');
    await s.close();
  }, 600_000);
});
