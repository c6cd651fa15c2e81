// The Vosk adapter against a fake server speaking vosk-server's WebSocket protocol.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { VoskStt, type SttError, type SttFinal, type SttStream } from '../../../src/speech/index.js';

interface Session {
  config?: { sample_rate: number };
  bytes: number;
  chunks: number;
}

let wss: WebSocketServer;
let url: string;
const sessions: Session[] = [];
/** What the fake does on eof: answer and close, stay silent, or close mid-utterance on audio. */
let mode: 'normal' | 'hang' | 'drop' | 'segment' = 'normal';

beforeAll(async () => {
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  wss.on('connection', (ws: WebSocket) => {
    const s: Session = { bytes: 0, chunks: 0 };
    sessions.push(s);
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        s.bytes += (data as Buffer).length;
        s.chunks++;
        if (mode === 'drop' && s.chunks === 3) return ws.close();
        if (mode === 'segment' && s.chunks === 5) return ws.send(JSON.stringify({ result: [{ conf: 1, word: 'good' }], text: 'good' }));
        const partial = mode === 'segment' && s.chunks > 5 ? 'morning' : s.chunks < 3 ? '' : 'hello';
        return ws.send(JSON.stringify({ partial }));
      }
      const msg = JSON.parse(data.toString()) as { config?: Session['config']; eof?: number };
      if (msg.config) s.config = msg.config;
      if (msg.eof && mode !== 'hang') {
        const final =
          mode === 'segment'
            ? { result: [{ conf: 0.5, word: 'morning' }], text: 'morning' }
            : {
                result: [
                  { conf: 0.9, word: 'hello' },
                  { conf: 0.7, word: 'world' },
                ],
                text: 'hello world',
              };
        ws.send(JSON.stringify(final));
        ws.close();
      }
    });
  });
});

afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  await new Promise((r) => wss.close(r));
});

function collect(stream: SttStream): Promise<{ partials: string[]; final?: SttFinal; error?: SttError }> {
  const partials: string[] = [];
  stream.on('partial', ({ text }) => partials.push(text));
  return new Promise((resolve) => {
    stream.once('final', (final) => resolve({ partials, final }));
    stream.once('error', (error) => resolve({ partials, error }));
  });
}

describe('VoskStt (adapter)', () => {
  it('streams 8 kHz PCM, relays partials and gives one final with a confidence', async () => {
    mode = 'normal';
    const engine = new VoskStt({ url, language: 'en', timeoutMs: 5000 });
    expect(engine.languages()).toEqual(['en']);
    const stream = engine.openStream({ language: 'en' });
    const result = collect(stream);
    for (let i = 0; i < 10; i++) stream.write(new Int16Array(160).fill(i));
    stream.endUtterance();
    const r = await result;
    expect(r.final).toEqual({ text: 'hello world', confidence: 0.8 });
    expect(r.partials).toEqual(['hello']); // empty and repeated partials are not relayed
    const s = sessions.at(-1)!;
    expect(s.config).toEqual({ sample_rate: 8000 });
    expect(s.bytes).toBe(10 * 320);
    stream.close();
    await engine.close();
  });

  it('joins a segment the server closed on its own into the one final', async () => {
    mode = 'segment';
    const engine = new VoskStt({ url, language: 'en', timeoutMs: 5000 });
    const stream = engine.openStream({ language: 'en' });
    const result = collect(stream);
    for (let i = 0; i < 8; i++) stream.write(new Int16Array(160));
    // Partials after the server's own segment carry that segment's text in front.
    await new Promise<void>((resolve) => stream.on('partial', ({ text }) => text === 'good morning' && resolve()));
    stream.endUtterance();
    const r = await result;
    expect(r.final).toEqual({ text: 'good morning', confidence: 0.75 });
    stream.close();
  });

  it('reports a timeout and a dropped connection as errors, then serves the next utterance', async () => {
    const engine = new VoskStt({ url, language: 'en', timeoutMs: 300 });
    const stream = engine.openStream({ language: 'en' });
    mode = 'hang';
    let r = collect(stream);
    stream.write(new Int16Array(160));
    stream.endUtterance();
    expect((await r).error?.code).toBe('stt_timeout');

    mode = 'drop';
    r = collect(stream);
    for (let i = 0; i < 5; i++) stream.write(new Int16Array(160));
    expect((await r).error?.code).toBe('stt_unavailable');
    stream.endUtterance(); // closes the failed utterance without another result

    mode = 'normal';
    r = collect(stream);
    stream.write(new Int16Array(160));
    stream.endUtterance();
    expect((await r).final?.text).toBe('hello world');
    stream.close();
  });

  it('gives an empty final for an utterance without audio and refuses other languages', async () => {
    const engine = new VoskStt({ url, language: 'en', timeoutMs: 300 });
    const stream = engine.openStream({ language: 'en' });
    const r = collect(stream);
    stream.endUtterance();
    expect((await r).final).toEqual({ text: '' });
    expect(() => engine.openStream({ language: 'es' })).toThrow(/transcribes "en"/);
  });

  it('reports an unreachable server', async () => {
    const engine = new VoskStt({ url: 'ws://127.0.0.1:1', language: 'en', timeoutMs: 2000 });
    const stream = engine.openStream({ language: 'en' });
    const r = collect(stream);
    stream.write(new Int16Array(160));
    expect((await r).error?.code).toBe('stt_unavailable');
  });
});
