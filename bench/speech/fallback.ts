// Embedded fallback timing: from a remote engine's failure to the embedded engine's first result.
// The remote engines are the OpenAI-compatible adapters (DEFAULT_POLICY: 2 retries, 200 ms backoff)
// pointed at a loopback port nobody listens on, in two states:
//   connection refused  a fresh endpoint: each attempt is refused, the retries and backoff run
//   circuit open        the same endpoint after 5 failed requests: it fails at once
// STT: end of utterance -> the remote stream's error ("detected") -> the fallback notice (the
// utterance is replayed into pocketsphinx) -> its final ("first result"). TTS: the call -> the
// remote error -> espeak-ng's audio. The embedded engine alone on the same input is the baseline,
// and the runs are interleaved so all see the same load. The embedded engines are started
// before the runs (their cold start is reported apart). Prints figures; asserts nothing.
// Run: nice -n 10 npx tsx bench/speech/fallback.ts
import net from 'node:net';
import os from 'node:os';
import { loadConfig } from '../../src/config/index.js';
import { toFrames } from '../../src/media/index.js';
import {
  DEFAULT_POLICY,
  EmbeddedEngines,
  FallbackStt,
  FallbackTts,
  OpenAiStt,
  OpenAiTts,
  type EndpointPolicy,
  type SttEngine,
  type SttStream,
  type TtsEngine,
  type VoiceSettings,
} from '../../src/speech/index.js';
import { synthesizeSpeech } from '../../test/helpers/speech-audio.js';
import { defined } from '../defined.js';

const RUNS = 5;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (xs: number[]): string => `${median(xs).toFixed(0)} ms`;

/** A loopback port that refuses connections (bound once to pick it, then closed). */
async function refusedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Notes when the wrapped remote STT stream fails (listener added before FallbackStt's own). */
class TimedStt implements SttEngine {
  failedAt = 0;
  readonly name: string;
  constructor(readonly inner: OpenAiStt) {
    this.name = inner.name;
  }
  languages(): string[] {
    return this.inner.languages();
  }
  openStream(opts: { language: string; detect?: boolean }): SttStream {
    const s = this.inner.openStream(opts);
    s.on('error', () => (this.failedAt = performance.now()));
    return s;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Notes when the wrapped remote synthesis fails. */
class TimedTts implements TtsEngine {
  failedAt = 0;
  readonly name: string;
  constructor(readonly inner: OpenAiTts) {
    this.name = inner.name;
  }
  languages(): string[] {
    return this.inner.languages();
  }
  async synthesize(text: string, language: string, voice: VoiceSettings): Promise<Int16Array> {
    return this.inner.synthesize(text, language, voice).catch((err: unknown) => {
      this.failedAt = performance.now();
      throw err;
    });
  }
  async *synthesizeStream(text: string, language: string, voice: VoiceSettings): AsyncGenerator<Int16Array> {
    try {
      yield* this.inner.synthesizeStream(text, language, voice);
    } catch (err) {
      this.failedAt = performance.now();
      throw err;
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface SttRun {
  detected: number;
  notice: number;
  firstResult: number;
}

async function sttOnce(stt: SttEngine, speech: Int16Array, timed: TimedStt | null): Promise<SttRun> {
  const stream = stt.openStream({ language: 'en' });
  let noticeAt = 0;
  stream.on('fallback', () => (noticeAt = performance.now()));
  const final = new Promise<void>((resolve, reject) => {
    stream.once('final', () => resolve());
    stream.once('error', (e) => reject(new Error(`${e.code}: ${e.message}`)));
  });
  for (const f of toFrames(speech)) stream.write(f);
  const t0 = performance.now();
  stream.endUtterance();
  await final;
  const t1 = performance.now();
  stream.close();
  const failed = timed?.failedAt ?? t0;
  return { detected: failed - t0, notice: noticeAt ? noticeAt - failed : 0, firstResult: t1 - failed };
}

async function ttsOnce(tts: TtsEngine, timed: TimedTts | null): Promise<{ detected: number; firstResult: number }> {
  const text = 'Quisiera consultar el saldo de mi cuenta.';
  const t0 = performance.now();
  let first = 0;
  if (!tts.synthesizeStream) {
    await tts.synthesize(text, 'es', {}); // espeak-ng answers whole
    first = performance.now();
  } else {
    for await (const chunk of tts.synthesizeStream(text, 'es', {})) {
      if (chunk.length && !first) first = performance.now();
    }
  }
  const failed = timed?.failedAt ?? t0;
  return { detected: failed - t0, firstResult: first - failed };
}

async function main(): Promise<void> {
  const cfg = loadConfig({}).engines;
  const url = `http://127.0.0.1:${await refusedPort()}/v1`;
  const policy: EndpointPolicy = { ...DEFAULT_POLICY, timeoutMs: 30_000 };
  const speech = await synthesizeSpeech('i would like to check my account balance', { padMs: 300 });
  const embedded = new EmbeddedEngines(cfg);
  const c0 = performance.now();
  const [sphinx, espeak] = await Promise.all([embedded.stt(), embedded.tts()]);
  console.log(
    `embedded fallback timing, median of ${RUNS} (shared 2-core machine, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; remote = refused loopback port)`,
  );
  console.log(`embedded engines cold start (pocketsphinx pool + espeak-ng probe): ${(performance.now() - c0).toFixed(0)} ms, before the runs\n`);

  const newStt = (p: EndpointPolicy = policy): TimedStt =>
    new TimedStt(new OpenAiStt({ url, model: 'whisper-1', apiKey: async () => null, policy: p, partialIntervalMs: 0 }));
  const newTts = (p: EndpointPolicy = policy): TimedTts =>
    new TimedTts(new OpenAiTts({ url, model: 'tts-1', voice: 'alloy', apiKey: async () => null, policy: p, languages: ['es'] }));

  // Circuit open: endpoints that failed 5 requests (each refused after its retries) first; their
  // cooldown is made longer than the runs so no half-open trial request lands among them.
  const held = { ...policy, breakerCooldownMs: 600_000 };
  const openStt = newStt(held);
  const openTts = newTts(held);
  for (let i = 0; i < DEFAULT_POLICY.breakerThreshold; i++) {
    await openStt.inner.transcribe(speech, 'en').catch(() => undefined);
    await openTts.inner.synthesize('x', 'es', {}).catch(() => undefined);
  }
  if (!openStt.inner.endpoint.breakerOpen || !openTts.inner.endpoint.breakerOpen) throw new Error('the circuit did not open');

  // Interleaved, so the baseline and both failure states see the same machine load.
  const states = { 'connection refused': () => ({ stt: newStt(), tts: newTts() }), 'circuit open': () => ({ stt: openStt, tts: openTts }) };
  const sttBase: number[] = [];
  const ttsBase: number[] = [];
  const stt: Record<string, SttRun[]> = { 'connection refused': [], 'circuit open': [] };
  const tts: Record<string, Array<{ detected: number; firstResult: number }>> = { 'connection refused': [], 'circuit open': [] };
  for (let i = 0; i < RUNS; i++) {
    sttBase.push((await sttOnce(sphinx, speech, null)).firstResult);
    ttsBase.push((await ttsOnce(espeak, null)).firstResult);
    for (const [state, make] of Object.entries(states)) {
      const e = make();
      defined(stt[state], 'STT runs').push(await sttOnce(new FallbackStt(e.stt, embedded), speech, e.stt));
      defined(tts[state], 'TTS runs').push(await ttsOnce(new FallbackTts(e.tts, embedded), e.tts));
    }
  }
  console.log(`baseline  pocketsphinx alone: end of utterance -> final ${fmt(sttBase)}; espeak-ng alone: call -> audio ${fmt(ttsBase)}\n`);
  for (const state of Object.keys(states)) {
    const s = defined(stt[state], 'STT runs');
    const t = defined(tts[state], 'TTS runs');
    console.log(
      `STT ${state.padEnd(18)} failure detected ${fmt(s.map((r) => r.detected))} after end of utterance; failure -> fallback notice ${fmt(s.map((r) => r.notice))}, -> first result (final) ${fmt(s.map((r) => r.firstResult))} (pocketsphinx alone ${fmt(sttBase)})`,
    );
    console.log(
      `TTS ${state.padEnd(18)} failure detected ${fmt(t.map((r) => r.detected))} after the call; failure -> first audio ${fmt(t.map((r) => r.firstResult))} (espeak-ng alone ${fmt(ttsBase)})`,
    );
  }
  await embedded.close();
}

void main();
