// A local server speaking Deepgram's live streaming protocol (GET /v1/listen upgraded to a
// WebSocket; see src/speech/stt/deepgram/deepgram-stt.ts for the message shapes) with the embedded
// pocketsphinx decoder behind it, so transcripts are genuine. The embedded decoder gives no word
// times: `words` spread the words evenly over the audio (shape as Deepgram's, timings approximate).
// Handshake refusals answer 401 with a `dg-error` header, as Deepgram does. `dropAfterChunks`
// closes the socket abnormally once that many audio messages came in (reconnect tests).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { loadConfig } from '../../src/config/index.js';
import { mulawDecode, toFrames } from '../../src/media/index.js';
import { ensureDecoderBinary, PocketsphinxEngine, type SttFinal } from '../../src/speech/index.js';

export interface ListenRequest {
  query: Record<string, string>;
  authorization: string | undefined;
  audioBytes: number;
  keepAlives: number;
  closeStream: boolean;
  /** CloseStream -> the decoder's final (engine time, reported apart in bench/speech). */
  engineMs?: number;
}

export interface DeepgramServer {
  url: string;
  requests: ListenRequest[];
  /** Drop the next socket after this many audio messages (then reset to 0). */
  dropAfterChunks: number;
  close(): Promise<void>;
}

export async function startDeepgramServer(opts: { apiKey?: string; decoderTimeoutMs?: number } = {}): Promise<DeepgramServer> {
  const cfg = loadConfig({}).engines;
  const stt = new PocketsphinxEngine({ binary: await ensureDecoderBinary(), ...cfg.pocketsphinx, poolSize: 1, timeoutMs: opts.decoderTimeoutMs ?? 30_000 });
  await stt.start();
  const http1 = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const state: Pick<DeepgramServer, 'requests' | 'dropAfterChunks'> = { requests: [], dropAfterChunks: 0 };

  http1.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1/listen') return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (opts.apiKey && req.headers.authorization !== `Token ${opts.apiKey}`) {
      return void socket.end('HTTP/1.1 401 Unauthorized\r\ndg-error: Invalid credentials.\r\ncontent-length: 0\r\n\r\n');
    }
    if (url.searchParams.get('encoding') !== 'mulaw' || url.searchParams.get('sample_rate') !== '8000') {
      return void socket.end(
        'HTTP/1.1 400 Bad Request\r\ndg-error: This test server decodes encoding=mulaw&sample_rate=8000 only.\r\ncontent-length: 0\r\n\r\n',
      );
    }
    wss.handleUpgrade(req, socket, head, (ws) =>
      serve(ws, {
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        audioBytes: 0,
        keepAlives: 0,
        closeStream: false,
      }),
    );
  });

  function serve(ws: WebSocket, r: ListenRequest): void {
    state.requests.push(r);
    const detect = r.query.detect_language === 'true';
    const dropAt = state.dropAfterChunks;
    state.dropAfterChunks = 0;
    const stream = stt.openStream({ language: 'en' });
    let chunks = 0;
    let samples = 0;
    const channel = (text: string, confidence: number, duration: number) => ({
      alternatives: [
        {
          transcript: text,
          confidence,
          words: text
            ? text.split(' ').map((word, i, all) => ({
                word,
                start: (duration * i) / all.length,
                end: (duration * (i + 1)) / all.length,
                confidence,
                punctuated_word: word,
              }))
            : [],
        },
      ],
      ...(detect ? { detected_language: 'en', language_confidence: 0.9 } : {}),
    });
    const results = (text: string, confidence: number, isFinal: boolean) => {
      const duration = samples / 8000;
      return JSON.stringify({
        type: 'Results',
        channel_index: [0, 1],
        duration,
        start: 0,
        is_final: isFinal,
        speech_final: isFinal,
        from_finalize: false,
        channel: channel(text, confidence, duration),
        metadata: { request_id: randomUUID(), model_info: { name: 'pocketsphinx', version: 'test', arch: 'hub4wsj_sc_8k' } },
      });
    };
    stream.on('partial', (p) => ws.send(results(p.text, 0.5, false)));
    const finished = new Promise<SttFinal>((resolve) => {
      stream.once('final', resolve);
      stream.once('error', (e) => resolve({ text: '', confidence: 0, ...{ message: e.message } }));
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        const bytes = data as Buffer;
        r.audioBytes += bytes.length;
        if (dropAt && ++chunks >= dropAt) return void ws.terminate();
        const pcm = mulawDecode(new Uint8Array(bytes));
        samples += pcm.length;
        for (const f of toFrames(pcm)) stream.write(f);
        return;
      }
      const msg = JSON.parse(data.toString()) as { type?: string };
      if (msg.type === 'KeepAlive') r.keepAlives++;
      if (msg.type === 'CloseStream') {
        r.closeStream = true;
        const t0 = performance.now();
        stream.endUtterance();
        void finished.then((f) => {
          r.engineMs = performance.now() - t0;
          ws.send(results(f.text, f.confidence ?? 0.8, true));
          ws.send(
            JSON.stringify({
              type: 'Metadata',
              transaction_key: 'deprecated',
              request_id: randomUUID(),
              sha256: '',
              created: new Date().toISOString(),
              duration: samples / 8000,
              channels: 1,
              models: ['pocketsphinx'],
              model_info: {},
            }),
          );
          stream.close();
          ws.close(1000);
        });
      }
    });
    ws.on('close', () => stream.close());
  }

  http1.listen(0, '127.0.0.1');
  await once(http1, 'listening');
  const { port } = http1.address() as AddressInfo;
  return Object.assign(state, {
    url: `ws://127.0.0.1:${port}`,
    async close() {
      for (const c of wss.clients) c.terminate();
      http1.closeAllConnections();
      await new Promise((r) => http1.close(r));
      await stt.close();
    },
  });
}
