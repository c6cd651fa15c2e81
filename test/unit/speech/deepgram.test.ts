// The Deepgram live-streaming adapter against a local server speaking that protocol with
// pocketsphinx behind it (test/helpers/speech-deepgram-server.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFrames } from '../../../src/media/index.js';
import { DeepgramStt, type SttError, type SttFinal, type SttStream } from '../../../src/speech/index.js';
import { startDeepgramServer, type DeepgramServer } from '../../helpers/speech-deepgram-server.js';
import { synthesizeSpeech } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

const KEY = 'dg-test-key';
let server: DeepgramServer;
let balance: Int16Array;

const engine = (over: Partial<ConstructorParameters<typeof DeepgramStt>[0]> = {}): DeepgramStt =>
  new DeepgramStt({ url: server.url, model: 'nova-2-phonecall', apiKey: async () => KEY, languages: ['en'], timeoutMs: 30_000, ...over });

function run(stream: SttStream, pcm: Int16Array): Promise<{ partials: string[]; final?: SttFinal; error?: SttError }> {
  const partials: string[] = [];
  stream.on('partial', (p) => partials.push(p.text));
  const done = new Promise<{ partials: string[]; final?: SttFinal; error?: SttError }>((resolve) => {
    stream.once('final', (final) => resolve({ partials, final }));
    stream.once('error', (error) => resolve({ partials, error }));
  });
  for (const f of toFrames(pcm)) stream.write(f);
  stream.endUtterance();
  return done;
}

beforeAll(async () => {
  server = await startDeepgramServer({ apiKey: KEY });
  balance = await synthesizeSpeech('i would like to check my account balance', { padMs: 300 });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('Deepgram live streaming', () => {
  it('streams mu-law with the documented query and token, and closes the stream for the final', async () => {
    const stream = engine().openStream({ language: 'en' });
    const { final, partials, error } = await run(stream, balance);
    expect(error).toBeUndefined();
    expect(final!.text).toMatch(/account/);
    expect(final!.text).toMatch(/balance/);
    expect(final!.confidence).toBeGreaterThan(0);
    expect(partials.length).toBeGreaterThan(0);
    const req = server.requests.at(-1)!;
    expect(req.query).toEqual({ encoding: 'mulaw', sample_rate: '8000', channels: '1', interim_results: 'true', language: 'en', model: 'nova-2-phonecall' });
    expect(req.authorization).toBe(`Token ${KEY}`);
    expect(req.audioBytes).toBe(Math.ceil(balance.length / 160) * 160); // one byte per mu-law sample
    expect(req.closeStream).toBe(true);
    stream.close();
  }, 60_000);

  it('asks for detection when the language is null and reports the detected language', async () => {
    const stream = engine().openStream({ language: 'en', detect: true });
    const { final } = await run(stream, balance);
    expect(final!.language).toBe('en');
    expect(server.requests.at(-1)!.query).toMatchObject({ detect_language: 'true' });
    expect(server.requests.at(-1)!.query.language).toBeUndefined();
    stream.close();
  }, 60_000);

  it('reconnects a dropped socket and resends the unacknowledged audio of the utterance', async () => {
    server.dropAfterChunks = 40;
    const before = server.requests.length;
    const stream = engine().openStream({ language: 'en' });
    const frames = toFrames(balance);
    const result = new Promise<SttFinal | SttError>((resolve) => {
      stream.once('final', resolve);
      stream.once('error', resolve);
    });
    // Paced so the drop happens mid-utterance, while audio is still coming.
    for (const [i, f] of frames.entries()) {
      stream.write(f);
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 20));
    }
    stream.endUtterance();
    const final = (await result) as SttFinal;
    expect(final.text).toMatch(/balance/);
    const reqs = server.requests.slice(before);
    expect(reqs).toHaveLength(2);
    // Nothing was acknowledged before the drop, so the second socket got the whole utterance.
    expect(defined(reqs[1], 'second request').audioBytes).toBe(frames.length * 160);
    stream.close();
  }, 60_000);

  it('reports a refused key as an stt error without retrying', async () => {
    const before = server.requests.length;
    const stream = engine({ apiKey: async () => 'wrong' }).openStream({ language: 'en' });
    const { error } = await run(stream, balance);
    expect(error).toMatchObject({ code: 'stt_unavailable' });
    expect(error!.message).toMatch(/HTTP 401 Invalid credentials/);
    expect(server.requests.length).toBe(before);
    stream.close();
  }, 60_000);
});
