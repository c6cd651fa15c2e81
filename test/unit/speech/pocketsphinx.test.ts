// Real embedded STT: the compiled vb-sphinx-decoder pool with the 8 kHz model.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { toFrames } from '../../../src/media/index.js';
import { PocketsphinxEngine, ensureDecoderBinary, type SttFinal, type SttPartial, type SttStream, type SttError } from '../../../src/speech/index.js';
import { synthesizeSpeech } from '../../helpers/speech-audio.js';
import { defined } from '../../helpers/defined.js';

const cfg = loadConfig({}).engines;
let binary: string;
let engine: PocketsphinxEngine;
let loadWallMs = 0;

function makeEngine(over: Partial<ConstructorParameters<typeof PocketsphinxEngine>[0]> = {}): PocketsphinxEngine {
  return new PocketsphinxEngine({ binary, ...cfg.pocketsphinx, poolSize: 2, timeoutMs: 20_000, ...over });
}

interface Result {
  partials: string[];
  final?: SttFinal;
  error?: SttError;
  endToFinalMs?: number;
}

/** Feeds a whole utterance (as fast as the pipe takes it) and collects what comes back. */
function feed(stream: SttStream, pcm: Int16Array): Promise<Result> {
  const r: Result = { partials: [] };
  stream.on('partial', ({ text }) => r.partials.push(text));
  const done = new Promise<Result>((resolve) => {
    let endedAt = 0;
    stream.once('final', (f) => {
      r.final = f;
      r.endToFinalMs = performance.now() - endedAt;
      resolve(r);
    });
    stream.once('error', (e) => {
      r.error = e;
      resolve(r);
    });
    for (const f of toFrames(pcm)) stream.write(f);
    endedAt = performance.now();
    stream.endUtterance();
  });
  return done;
}

const phrase = (text: string) => synthesizeSpeech(text, { voice: 'flite', padMs: 300 });

beforeAll(async () => {
  binary = await ensureDecoderBinary();
  engine = makeEngine();
  const t = performance.now();
  await engine.start();
  loadWallMs = performance.now() - t;
}, 120_000);

afterAll(async () => {
  await engine?.close();
});

describe('PocketsphinxEngine (embedded decoder pool)', () => {
  it('recognizes a synthesized phrase, with partials before the final', async () => {
    const pcm = await phrase('i would like to check my account balance');
    const stream = engine.openStream({ language: 'en' });
    const order: string[] = [];
    stream.on('partial', () => order.push('partial'));
    stream.on('final', () => order.push('final'));
    const r = await feed(stream, pcm);
    stream.close();
    expect(r.error).toBeUndefined();
    expect(r.final?.text).toMatch(/account/);
    expect(r.final?.text).toMatch(/balance/);
    // The decoder's utterance posterior is not a confidence (0 on this correct result): omitted.
    expect(r.final).not.toHaveProperty('confidence');
    expect(r.partials.length).toBeGreaterThan(0);
    expect(order.at(-1)).toBe('final');
    expect(order.filter((e) => e === 'final')).toHaveLength(1);
    const s = engine.stats();
    const audioMs = s.lastFinal!.audio_ms;
    console.log(
      `[measure] pocketsphinx: pool of 2 loaded in ${loadWallMs.toFixed(0)} ms (decoder says ${s.lastLoadMs} ms); ` +
        `audio ${audioMs} ms, decoder CPU ${s.lastFinal!.decode_ms.toFixed(0)} ms, RTF ${(s.lastFinal!.decode_ms / audioMs).toFixed(2)}; ` +
        `endUtterance->final ${r.endToFinalMs!.toFixed(0)} ms (includes decoding the audio still in the pipe), end search ${s.lastFinal!.end_ms.toFixed(0)} ms`,
    );
  }, 60_000);

  it('reports the audio it has decoded: partials carry it, and one complete hypothesis over all the audio precedes the final', async () => {
    const pcm = await phrase('i need help with my order');
    const audioMs = toFrames(pcm).length * 20;
    const stream = engine.openStream({ language: 'en' });
    const partials: SttPartial[] = [];
    const order: string[] = [];
    stream.on('partial', (p) => {
      partials.push(p);
      order.push(p.complete ? 'complete' : 'partial');
    });
    stream.on('final', () => order.push('final'));
    const r = await feed(stream, pcm);
    stream.close();
    const plain = partials.filter((p) => !p.complete);
    expect(plain.length).toBeGreaterThan(0);
    let last = 0;
    for (const p of plain) {
      expect(p.decodedMs).toBeGreaterThan(last);
      expect(p.decodedMs).toBeLessThanOrEqual(audioMs);
      last = p.decodedMs!;
    }
    const complete = partials.filter((p) => p.complete);
    expect(complete).toHaveLength(1);
    const done = defined(complete[0], 'complete partial');
    expect(done.decodedMs).toBe(audioMs);
    expect(done.stableMs).toBeGreaterThan(0);
    expect(done.stableMs).toBeLessThanOrEqual(audioMs);
    expect(done.text).toMatch(/order/);
    expect(order.slice(-2)).toEqual(['complete', 'final']);
    console.log(
      `[measure] pocketsphinx progress: hypothesis "${done.text}" stable over ${done.stableMs} of ${audioMs} ms; final "${r.final?.text}" ` +
        `${engine.stats().lastFinal!.end_ms.toFixed(0)} ms of end search later`,
    );
  }, 60_000);

  it('measures end-of-utterance latency when audio arrives in real time', async () => {
    const pcm = await phrase('thank you very much');
    const stream = engine.openStream({ language: 'en' });
    const frames = toFrames(pcm);
    const final = new Promise<{ f: SttFinal; at: number }>((resolve) => stream.once('final', (f) => resolve({ f, at: performance.now() })));
    // 20 ms pacing as a phone call delivers it (setInterval ticks are coarse; 4 frames per 80 ms).
    await new Promise<void>((resolve) => {
      let i = 0;
      const timer = setInterval(() => {
        for (let k = 0; k < 4 && i < frames.length; k++) stream.write(defined(frames[i++], 'frame'));
        if (i >= frames.length) {
          clearInterval(timer);
          resolve();
        }
      }, 80);
    });
    const endedAt = performance.now();
    stream.endUtterance();
    const { f, at } = await final;
    stream.close();
    expect(f.text).toMatch(/thank you/);
    console.log(`[measure] pocketsphinx real-time feed: endUtterance->final ${(at - endedAt).toFixed(0)} ms`);
  }, 60_000);

  it('gives exactly one empty final for an utterance with no audio', async () => {
    const stream = engine.openStream({ language: 'en' });
    const finals: SttFinal[] = [];
    stream.on('final', (f) => finals.push(f));
    stream.endUtterance();
    await once(stream, 'final');
    expect(finals).toEqual([{ text: '' }]);
    stream.close();
  });

  it('gives an empty final for silence', async () => {
    const stream = engine.openStream({ language: 'en' });
    const r = await feed(stream, new Int16Array(8000));
    stream.close();
    expect(r.final?.text).toBe('');
  }, 30_000);

  it('queues utterances while every decoder is busy, then serves them in order', async () => {
    const pcm = await phrase('good morning');
    const streams = [0, 1, 2].map(() => engine.openStream({ language: 'en' }));
    const finals = streams.map(
      (s) =>
        new Promise<SttFinal>((resolve, reject) => {
          s.once('final', resolve);
          s.once('error', (e) => reject(new Error(e.message)));
        }),
    );
    const frames = toFrames(pcm);
    for (const s of streams) s.write(defined(frames[0], 'first frame'));
    expect(engine.stats()).toMatchObject({ busy: 2, waiting: 1 });
    for (const s of streams) {
      for (const f of frames.slice(1)) s.write(f);
      s.endUtterance();
    }
    const texts = (await Promise.all(finals)).map((f) => f.text);
    expect(texts).toEqual(['good morning', 'good morning', 'good morning']);
    expect(engine.stats()).toMatchObject({ busy: 0, waiting: 0 });
    for (const s of streams) s.close();
  }, 60_000);

  it('reports a killed decoder on the affected stream and restarts it', async () => {
    const pcm = await phrase('i would like to check my account balance');
    const restartsBefore = engine.stats().restarts;
    const stream = engine.openStream({ language: 'en' });
    const frames = toFrames(pcm);
    for (const f of frames.slice(0, 20)) stream.write(f);
    const pid = engine.pidServing(stream);
    expect(pid).toBeTypeOf('number');
    const errored = once(stream, 'error') as Promise<[SttError]>;
    process.kill(pid!, 'SIGKILL');
    const [err] = await errored;
    expect(err.code).toBe('stt_engine_crashed');
    // The rest of that utterance is dropped, and its endUtterance yields nothing more.
    const extra: string[] = [];
    stream.on('final', () => extra.push('final'));
    for (const f of frames.slice(20)) stream.write(f);
    stream.endUtterance();
    // The pool is whole again and the same stream recognizes its next utterance.
    await waitFor(() => engine.stats().ready === 2 && !engine.decoderPids().includes(pid));
    expect(engine.stats().restarts).toBe(restartsBefore + 1);
    stream.removeAllListeners('final');
    const r = await feed(stream, pcm);
    expect(r.final?.text).toMatch(/account balance/);
    expect(extra).toEqual([]);
    stream.close();
  }, 60_000);

  it('times out a stuck decoder with stt_timeout and recycles it', async () => {
    const e2 = makeEngine({ poolSize: 1, timeoutMs: 500 });
    await e2.start();
    try {
      const stream = e2.openStream({ language: 'en' });
      const pcm = await phrase('good morning');
      for (const f of toFrames(pcm)) stream.write(f);
      const pid = e2.pidServing(stream)!;
      process.kill(pid, 'SIGSTOP'); // the decoder hangs
      const errored = once(stream, 'error') as Promise<[SttError]>;
      stream.endUtterance();
      const [err] = await errored;
      expect(err.code).toBe('stt_timeout');
      await waitFor(() => e2.stats().ready === 1 && e2.decoderPids()[0] !== pid);
      expect(e2.stats()).toMatchObject({ busy: 0, waiting: 0, restarts: 1 });
      // (Recognition on a restarted decoder is covered above; a 500 ms deadline is too tight to
      // assert one on a loaded machine.)
      stream.close();
    } finally {
      await e2.close();
    }
  }, 60_000);

  it('keeps channel adaptation per stream: a result does not depend on who used the decoder before', async () => {
    const e3 = makeEngine({ poolSize: 1 });
    await e3.start();
    try {
      const probe = await phrase('my name is john smith');
      const first = e3.openStream({ language: 'en' });
      const t1 = (await feed(first, probe)).final?.text;
      first.close();
      const other = e3.openStream({ language: 'en' });
      for (const text of ['i would like to check my account balance', 'thank you very much']) {
        other.removeAllListeners();
        await feed(other, await phrase(text));
      }
      other.close();
      const later = e3.openStream({ language: 'en' });
      const t2 = (await feed(later, probe)).final?.text;
      later.close();
      expect(t1).toBeTruthy();
      expect(t2).toBe(t1);
    } finally {
      await e3.close();
    }
  }, 60_000);

  it("drops a closed stream's utterance and frees its decoder", async () => {
    const pcm = await phrase('good morning');
    const stream = engine.openStream({ language: 'en' });
    const events: string[] = [];
    stream.on('final', () => events.push('final'));
    stream.on('partial', () => events.push('partial'));
    for (const f of toFrames(pcm)) stream.write(f);
    stream.close();
    stream.close();
    stream.write(new Int16Array(160));
    await waitFor(() => engine.stats().busy === 0);
    expect(events.filter((e) => e === 'final')).toEqual([]);
  }, 30_000);

  it('refuses languages the model does not cover', () => {
    expect(engine.languages()).toEqual(['en']);
    expect(() => engine.openStream({ language: 'es' })).toThrow(/cannot transcribe/);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
