// The ElevenLabs streaming TTS adapter against a local server speaking that API with espeak-ng behind it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, ElevenLabsTts, EspeakTts } from '../../../src/speech/index.js';
import { startElevenLabsServer, type ElevenLabsServer } from '../../helpers/speech-elevenlabs-server.js';

const KEY = 'xi-test-key';
let server: ElevenLabsServer;

const tts = (over: Partial<ConstructorParameters<typeof ElevenLabsTts>[0]> = {}): ElevenLabsTts =>
  new ElevenLabsTts({
    url: server.url,
    model: 'eleven_flash_v2_5',
    voice: '21m00Tcm4TlvDq8ikWAM',
    apiKey: async () => KEY,
    policy: { ...DEFAULT_POLICY, timeoutMs: 20_000, backoffMs: 50 },
    languages: ['en', 'es'],
    ...over,
  });

beforeAll(async () => {
  server = await startElevenLabsServer({ apiKey: KEY });
});
afterAll(async () => {
  await server?.close();
});

describe('ElevenLabs streaming speech', () => {
  it('posts text, model and the SPEC voice fields, and streams mu-law 8 kHz back', async () => {
    const text = 'Your account balance is four hundred dollars.';
    const chunks: Int16Array[] = [];
    for await (const c of tts().synthesizeStream(text, 'en', { voice_id: 'pNInz6obpgDQGcFmaJgB', stability: 0.3, similarity_boost: 0.8, speed: 1.1 }))
      chunks.push(c);
    expect(server.requests.at(-1)).toEqual({
      voiceId: 'pNInz6obpgDQGcFmaJgB',
      outputFormat: 'ulaw_8000',
      body: { text, model_id: 'eleven_flash_v2_5', language_code: 'en', voice_settings: { stability: 0.3, similarity_boost: 0.8, speed: 1.1 } },
    });
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const direct = await (await EspeakTts.create({ timeoutMs: 20_000 })).synthesize(text, 'en', { voice_id: 'en-gb', speed: 1.1 });
    expect(Math.abs(total - direct.length) / direct.length).toBeLessThan(0.02);
  }, 60_000);

  it('uses the configured voice, clamps speed to the API range, and reports error details', async () => {
    await tts().synthesize('Hello.', 'en', { speed: 2 });
    expect(server.requests.at(-1)).toMatchObject({ voiceId: '21m00Tcm4TlvDq8ikWAM', body: { voice_settings: { speed: 1.2 } } });
    await expect(tts().synthesize('Hello.', 'en', { voice_id: 'nope' })).rejects.toThrow(/HTTP 404: A voice with the voice_id nope was not found/);
    await expect(tts({ apiKey: async () => 'bad' }).synthesize('Hello.', 'en', {})).rejects.toMatchObject({
      code: 'tts_failed',
      message: expect.stringMatching(/HTTP 401: Invalid API key/),
    });
    await expect(tts().synthesize('Hola.', 'fr', {})).rejects.toMatchObject({ code: 'tts_unsupported' });
  }, 60_000);
});
