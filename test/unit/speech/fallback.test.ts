// The path without a fallback: a remote engine's failure is reported as it is and the session goes on.
// (1) FallbackStt when the embedded engine cannot take over (language not served, or it does not
// start): the error passes through, no fallback notice, and later utterances (including the ones
// spoken while the embedded engine was being tried) still go to the remote engine.
// (2) ENGINE_FALLBACK=none: a live session on a remote recognizer (a local OpenAI-compatible server
// with pocketsphinx behind it) whose answer is a 500 gets `engine_error`, the embedded recognizer is
// never touched although it would serve English, and the next utterance is transcribed and translated.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { toFrames } from '../../../src/media/index.js';
import { LiveSession, type TranscriptFinal } from '../../../src/sessions/index.js';
import { createEngines, EmbeddedEngines, FallbackStt, type Engines, type SttEngine, type SttError, type SttFinal } from '../../../src/speech/index.js';
import { FakeStt } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { concatPcm, silence, synthesizeSpeech } from '../../helpers/speech-audio.js';
import { startOpenAiAudioServer, type OpenAiAudioServer } from '../../helpers/speech-openai-server.js';
import { defined } from '../../helpers/defined.js';

/** A stand-in for the node's embedded engines: only stt() is used by FallbackStt. */
function embeddedWith(stt: () => Promise<SttEngine>): EmbeddedEngines {
  return { stt: vi.fn(stt) } as unknown as EmbeddedEngines;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const frame = (): Int16Array => new Int16Array(160).fill(500);

describe('FallbackStt without a usable fallback', () => {
  it('passes the error on when the embedded engine does not serve the language, and stays on the remote engine', async () => {
    const primary = new FakeStt([new Error('remote decoder timed out'), 'segundo', 'tercero'], ['es']);
    const starting = deferred<SttEngine>();
    const embedded = embeddedWith(() => starting.promise);
    const stream = new FallbackStt(primary, embedded).openStream({ language: 'es' });
    const errors: SttError[] = [];
    const finals: SttFinal[] = [];
    const fallbacks: unknown[] = [];
    stream.on('error', (e) => errors.push(e));
    stream.on('final', (f) => finals.push(f));
    stream.on('fallback', (n) => fallbacks.push(n));

    for (let i = 0; i < 10; i++) stream.write(frame());
    stream.endUtterance();
    await vi.waitFor(() => expect(embedded.stt).toHaveBeenCalledTimes(1));
    // The next utterance is spoken while the embedded engine is being started: it is kept, not lost.
    for (let i = 0; i < 7; i++) stream.write(frame());
    stream.endUtterance();
    expect(defined(primary.streams[0], 'primary stream').written).toBe(10);

    starting.resolve(new FakeStt([], ['en'])); // English only: cannot take Spanish over
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toEqual({ code: 'stt_timeout', message: 'remote decoder timed out' });
    expect(fallbacks).toEqual([]);
    // The kept utterance went to the remote engine after all, which answered it.
    await vi.waitFor(() => expect(finals.map((f) => f.text)).toEqual(['segundo']));
    expect(defined(primary.streams[0], 'primary stream').written).toBe(17);

    for (let i = 0; i < 5; i++) stream.write(frame());
    stream.endUtterance();
    await vi.waitFor(() => expect(finals.map((f) => f.text)).toEqual(['segundo', 'tercero']));
    expect(primary.streams).toHaveLength(1);
    expect(errors).toHaveLength(1);
    stream.close();
  });

  it('says why when the embedded engine does not start, and keeps the remote engine for the next utterance', async () => {
    const primary = new FakeStt([new Error('connection refused'), 'thank you']);
    const embedded = embeddedWith(() => Promise.reject(new Error('decoder binary missing')));
    const stream = new FallbackStt(primary, embedded).openStream({ language: 'en' });
    const errors: SttError[] = [];
    const finals: SttFinal[] = [];
    stream.on('error', (e) => errors.push(e));
    stream.on('final', (f) => finals.push(f));
    stream.write(frame());
    stream.endUtterance();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(defined(errors[0], 'error').code).toBe('stt_timeout');
    expect(defined(errors[0], 'error').message).toBe('connection refused (no fallback: the embedded engine did not start (decoder binary missing))');
    stream.write(frame());
    stream.endUtterance();
    await vi.waitFor(() => expect(finals.map((f) => f.text)).toEqual(['thank you']));
    stream.close();
  });
});

describe('ENGINE_FALLBACK=none in a live session', () => {
  let server: OpenAiAudioServer;
  let embedded: EmbeddedEngines;
  let engines: Engines;

  beforeAll(async () => {
    server = await startOpenAiAudioServer();
    const cfg = loadConfig({
      STT_PROVIDER: 'openai',
      STT_URL: server.url,
      STT_LANGUAGES: 'en',
      STT_RETRIES: '0',
      STT_PARTIAL_INTERVAL_MS: '0',
      STT_TIMEOUT_MS: '120000',
      ENGINE_FALLBACK: 'none',
    });
    embedded = new EmbeddedEngines(cfg.engines);
    vi.spyOn(embedded, 'stt');
    engines = await createEngines(cfg.engines, { embedded });
  }, 120_000);

  afterAll(async () => {
    await engines?.close();
    await embedded?.close();
    await server?.close();
  });

  it('reports the remote failure as engine_error, never starts the embedded recognizer, and transcribes the next utterance', async () => {
    expect(engines.stt).not.toBeInstanceOf(FallbackStt);
    const cfg = loadConfig({ VAD_ENGINE: 'silero' });
    const session = new LiveSession({
      id: 'sess_nofallback',
      orgId: 'org_test',
      mode: 'bidirectional_translation',
      sourceLanguage: 'en',
      targetLanguage: 'es',
      voice: {},
      engines,
      defaultLanguage: 'en',
      clock: new ManualClock(),
      awaitsLeg: false,
      // Silero, fed real speech (the energy VAD is what the other session tests use).
      vad: { engine: cfg.vad.engine, sileroModel: cfg.vad.sileroModel },
      hooks: { firstAudio() {}, activity() {}, storeTurn: async () => {} },
    });
    const errors: Array<{ code: string; message: string }> = [];
    const finals: TranscriptFinal[] = [];
    session.on('error', (e) => errors.push(e));
    session.on('final', (f) => finals.push(f));
    const say = async (text: string): Promise<void> => {
      const pcm = concatPcm(silence(300), await synthesizeSpeech(text), silence(1000));
      for (const f of toFrames(pcm)) session.pushAudio('agent', f);
    };

    server.faults.push('server_error');
    await say('good morning');
    await vi.waitFor(() => expect(errors.filter((e) => e.code === 'engine_error')).toHaveLength(1), { timeout: 60_000, interval: 50 });
    const failure = errors.find((e) => e.code === 'engine_error')!;
    expect(failure.message).toMatch(/^speech-to-text failed for agent speech \(stt_unavailable\): transcription server .*HTTP 500/);
    expect(failure.message).not.toMatch(/fell back/);
    expect(server.transcriptions).toHaveLength(0); // the 500 was answered before any decoding
    expect(finals).toHaveLength(0);

    await say('i would like to check my account balance');
    await vi.waitFor(() => expect(finals).toHaveLength(1), { timeout: 120_000, interval: 50 });
    expect(defined(finals[0], 'final').text).toMatch(/balance/);
    expect(defined(finals[0], 'final').translation).toMatchObject({ language: 'es' });
    expect(server.transcriptions).toHaveLength(1);
    expect(errors.filter((e) => e.code === 'engine_error')).toHaveLength(1);
    expect(embedded.stt).not.toHaveBeenCalled();
    expect(session.closed).toBe(false);
    session.close('test');
  }, 240_000);
});
