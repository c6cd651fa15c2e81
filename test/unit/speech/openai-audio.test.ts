// The OpenAI-compatible STT and TTS adapters against a local server speaking OpenAI's audio API,
// with pocketsphinx and espeak-ng behind it (test/helpers/speech-openai-server.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFrames } from '../../../src/media/index.js';
import {
  DEFAULT_POLICY,
  EspeakTts,
  OpenAiStt,
  OpenAiTts,
  SpeechEngineError,
  type EndpointPolicy,
  type SttError,
  type SttFinal,
  type SttStream,
} from '../../../src/speech/index.js';
import { startOpenAiAudioServer, type OpenAiAudioServer } from '../../helpers/speech-openai-server.js';
import { synthesizeSpeech } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

const KEY = 'sk-test-0123456789';
let server: OpenAiAudioServer;
let balance: Int16Array;

const policy = (over: Partial<EndpointPolicy> = {}): EndpointPolicy => ({ ...DEFAULT_POLICY, timeoutMs: 60_000, backoffMs: 50, ...over });

function makeStt(over: Partial<ConstructorParameters<typeof OpenAiStt>[0]> = {}): OpenAiStt {
  return new OpenAiStt({ url: server.url, model: 'whisper-1', apiKey: async () => KEY, policy: policy(), partialIntervalMs: 0, ...over });
}

function makeTts(over: Partial<ConstructorParameters<typeof OpenAiTts>[0]> = {}): OpenAiTts {
  return new OpenAiTts({ url: server.url, model: 'tts-1', voice: 'alloy', apiKey: async () => KEY, policy: policy(), ...over });
}

function nextResult(stream: SttStream): Promise<{ final?: SttFinal; error?: SttError }> {
  return new Promise((resolve) => {
    stream.once('final', (final) => resolve({ final }));
    stream.once('error', (error) => resolve({ error }));
  });
}

async function transcribe(stream: SttStream, pcm: Int16Array): Promise<{ final?: SttFinal; error?: SttError }> {
  const result = nextResult(stream);
  for (const f of toFrames(pcm)) stream.write(f);
  stream.endUtterance();
  return result;
}

beforeAll(async () => {
  server = await startOpenAiAudioServer({ apiKey: KEY });
  balance = await synthesizeSpeech('i would like to check my account balance', { padMs: 300 });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('OpenAI-compatible transcription', () => {
  it('sends the utterance as a WAV file and reads verbose_json, detecting the language', async () => {
    const engine = makeStt();
    const stream = engine.openStream({ language: 'en', detect: true });
    const { final, error } = await transcribe(stream, balance);
    expect(error).toBeUndefined();
    expect(final!.text).toMatch(/account/);
    expect(final!.text).toMatch(/balance/);
    expect(final!.language).toBe('en');
    expect(final!.confidence).toBeGreaterThan(0);
    const req = server.transcriptions.at(-1)!;
    expect(req).toMatchObject({ model: 'whisper-1', language: null, responseFormat: 'verbose_json', authorization: `Bearer ${KEY}` });
    expect(req.fileBytes).toBe(44 + Math.ceil(balance.length / 160) * 320); // WAV header + whole 20 ms frames
    stream.close();
  }, 60_000);

  it('names the language when it is known, and answers every utterance in order', async () => {
    const stream = makeStt().openStream({ language: 'en' });
    const finals: string[] = [];
    stream.on('final', (f) => finals.push(f.text));
    const before = server.transcriptions.length;
    for (const f of toFrames(balance)) stream.write(f);
    stream.endUtterance();
    stream.endUtterance(); // an empty utterance: an empty final, without a request
    const done = nextResult(stream);
    for (const f of toFrames(balance)) stream.write(f);
    stream.endUtterance();
    await done;
    await expect.poll(() => finals.length, { timeout: 60_000 }).toBe(3);
    expect(finals[0]).toMatch(/balance/);
    expect(finals[1]).toBe('');
    expect(finals[2]).toMatch(/balance/);
    // Two utterances with audio, two requests (more only if a busy machine made one time out and retry).
    const langs = server.transcriptions.slice(before).map((r) => r.language);
    expect(langs.length).toBeGreaterThanOrEqual(2);
    expect(new Set(langs)).toEqual(new Set(['en']));
    stream.close();
  }, 90_000);

  it('re-transcribes the growing utterance for partials at the configured rate', async () => {
    const stream = makeStt({ partialIntervalMs: 1000 }).openStream({ language: 'en' });
    const partials: string[] = [];
    stream.on('partial', (p) => partials.push(p.text));
    const frames = toFrames(balance);
    const before = server.transcriptions.length;
    const firstSecond = frames.slice(0, 60);
    for (const f of firstSecond) stream.write(f);
    // One partial request once 1 s (50 frames) is in; none other until it answers.
    await expect.poll(() => partials.length, { timeout: 60_000 }).toBe(1);
    const result = nextResult(stream);
    for (const f of frames.slice(60)) stream.write(f);
    stream.endUtterance();
    const { final } = await result;
    const reqs = server.transcriptions.slice(before);
    expect(defined(reqs[0], 'first request').fileBytes).toBe(44 + 50 * 320);
    expect(reqs.at(-1)!.fileBytes).toBe(44 + frames.length * 320);
    // At most one partial per second of audio, plus the final.
    expect(reqs.length).toBeLessThanOrEqual(1 + Math.ceil(frames.length / 50));
    expect(final!.text).toMatch(/balance/);
    stream.close();
  }, 90_000);

  it('waits out a 429 with retry-after and retries a dropped connection', async () => {
    const stream = makeStt().openStream({ language: 'en' });
    server.faults.push('rate_limit', 'drop');
    const before = server.transcriptions.length;
    const t0 = performance.now();
    const { final, error } = await transcribe(stream, balance);
    expect(error).toBeUndefined();
    expect(final!.text).toMatch(/balance/);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950); // retry-after: 1
    expect(server.transcriptions.length - before).toBe(1); // the 429 and the drop never reached the decoder
    stream.close();
  }, 60_000);

  it('reports the server error message as an stt error, then fails fast once the breaker opens', async () => {
    const engine = makeStt({ policy: policy({ retries: 1, breakerThreshold: 2, breakerCooldownMs: 60_000 }) });
    const stream = engine.openStream({ language: 'en' });
    server.faults.push('server_error', 'server_error', 'server_error', 'server_error');
    const first = await transcribe(stream, balance);
    expect(first.error).toMatchObject({ code: 'stt_unavailable' });
    expect(first.error!.message).toMatch(/HTTP 500: The server had an error/);
    await transcribe(stream, balance);
    expect(engine.endpoint.breakerOpen).toBe(true);
    const t0 = performance.now();
    const third = await transcribe(stream, balance);
    expect(third.error!.message).toMatch(/circuit open/);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(server.faults).toEqual([]);
    stream.close();
  }, 60_000);

  it('does not retry a rejected API key and says why', async () => {
    const stream = makeStt({ apiKey: async () => 'sk-wrong' }).openStream({ language: 'en' });
    const { error } = await transcribe(stream, balance);
    expect(error!.code).toBe('stt_unavailable');
    expect(error!.message).toMatch(/HTTP 401: Incorrect API key provided/);
    expect(error!.message).not.toContain('sk-wrong');
    stream.close();
  }, 60_000);
});

describe('OpenAI-compatible speech', () => {
  it('streams 24 kHz pcm resampled to 8 kHz, first audio before synthesis ends', async () => {
    server.speechChunkDelayMs = 30;
    const text = 'Your account balance is four hundred dollars and twelve cents.';
    const chunks: Array<{ at: number; samples: number }> = [];
    const t0 = performance.now();
    for await (const c of makeTts().synthesizeStream(text, 'en', {})) chunks.push({ at: performance.now() - t0, samples: c.length });
    server.speechChunkDelayMs = 0;
    expect(chunks.length).toBeGreaterThan(2);
    expect(defined(chunks[0], 'first chunk').at).toBeLessThan(defined(chunks.at(-1), 'last chunk').at - 50);
    const total = chunks.reduce((n, c) => n + c.samples, 0);
    // The same text from espeak-ng directly (22050 -> 8000 Hz): same length within 2 %.
    const direct = await (await EspeakTts.create({ timeoutMs: 20_000 })).synthesize(text, 'en', { voice_id: 'en-us' });
    expect(Math.abs(total - direct.length) / direct.length).toBeLessThan(0.02);
    expect(server.speeches.at(-1)).toMatchObject({ model: 'tts-1', voice: 'alloy', input: text, responseFormat: 'pcm', speed: 1 });
  }, 60_000);

  it('passes voice_id and speed from the session voice', async () => {
    const text = 'Thank you for calling.';
    const normal = await makeTts().synthesize(text, 'en', {});
    const fast = await makeTts().synthesize(text, 'en', { voice_id: 'nova', speed: 1.5 });
    expect(server.speeches.at(-1)).toMatchObject({ voice: 'nova', speed: 1.5 });
    expect(fast.length).toBeLessThan(normal.length * 0.85);
  }, 60_000);

  it('turns a connection dropped mid-stream and an error body into tts errors', async () => {
    server.faults.push('drop');
    const dropped = makeTts().synthesize('This answer is cut off in the middle of the sentence.', 'en', {});
    await expect(dropped).rejects.toMatchObject({ code: 'tts_failed' });
    const rejected = makeTts({ apiKey: async () => null }).synthesize('hello', 'en', {});
    await expect(rejected).rejects.toBeInstanceOf(SpeechEngineError);
    await expect(rejected).rejects.toThrow(/HTTP 401: Incorrect API key provided/);
  }, 60_000);
});
