// A local server speaking OpenAI's audio API (platform.openai.com/docs/api-reference/audio) with
// the embedded engines behind it, so what the adapters get back is genuine:
//   POST /v1/audio/transcriptions  multipart/form-data (file, model, language?, response_format?)
//        -> pocketsphinx (8 kHz US-English model); verbose_json answers `language: "english"`,
//           the only language that model hears (a monolingual Whisper would say the same).
//   POST /v1/audio/speech          JSON {model, voice, input, response_format?, speed?}
//        -> espeak-ng; `pcm` is 24 kHz s16le sent chunk by chunk (chunked transfer encoding)
//           while espeak-ng is still writing, `wav` the same with a header.
// Errors use OpenAI's body {"error":{"message","type","param","code"}}. `faults` injects, one
// request each: 429 with retry-after, 500, or a connection dropped mid-answer.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config/index.js';
import { parseWav, resample, Resampler, toFrames } from '../../src/media/index.js';
import { ensureDecoderBinary, PocketsphinxEngine, type SttFinal } from '../../src/speech/index.js';
import { defined } from './defined.js';

export type OpenAiFault = 'rate_limit' | 'server_error' | 'drop';

export interface TranscriptionRequest {
  model: string;
  language: string | null;
  responseFormat: string;
  fileBytes: number;
  authorization: string | undefined;
  /** Time the embedded decoder took (engine time, reported apart in bench/speech). */
  engineMs?: number;
}

export interface SpeechRequest {
  model: string;
  voice: string;
  input: string;
  responseFormat: string;
  speed: number;
}

export interface OpenAiAudioServer {
  /** Base URL including /v1, as STT_URL / TTS_URL take it. */
  url: string;
  transcriptions: TranscriptionRequest[];
  speeches: SpeechRequest[];
  /** Consumed one per request, first in first out. */
  faults: OpenAiFault[];
  /** Milliseconds between the pcm chunks of a speech answer (to see streaming). */
  speechChunkDelayMs: number;
  close(): Promise<void>;
}

function sendError(res: http.ServerResponse, status: number, message: string, type: string, code: string | null, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startOpenAiAudioServer(opts: { apiKey?: string } = {}): Promise<OpenAiAudioServer> {
  const cfg = loadConfig({}).engines;
  const stt = new PocketsphinxEngine({ binary: await ensureDecoderBinary(), ...cfg.pocketsphinx, poolSize: 1, timeoutMs: 30_000 });
  await stt.start();

  const transcribe = (pcm: Int16Array): Promise<SttFinal> =>
    new Promise((resolve, reject) => {
      const stream = stt.openStream({ language: 'en' });
      stream.once('final', (f) => {
        stream.close();
        resolve(f);
      });
      stream.once('error', (e) => {
        stream.close();
        reject(new Error(e.message));
      });
      for (const f of toFrames(pcm)) stream.write(f);
      stream.endUtterance();
    });

  const state: Omit<OpenAiAudioServer, 'url' | 'close'> = { transcriptions: [], speeches: [], faults: [], speechChunkDelayMs: 0 };

  async function onTranscription(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    let form: FormData;
    try {
      // undici's multipart parser (the one behind fetch's Response.formData()), not a hand-rolled one.
      form = await new Response(new Uint8Array(body), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
    } catch (err) {
      return sendError(res, 400, `Could not parse multipart form: ${(err as Error).message}`, 'invalid_request_error', null);
    }
    const file = form.get('file');
    const model = form.get('model');
    if (!(file instanceof Blob)) return sendError(res, 400, "you must provide a 'file' field", 'invalid_request_error', null);
    if (typeof model !== 'string' || !model) return sendError(res, 400, 'you must provide a model parameter', 'invalid_request_error', null);
    const language = typeof form.get('language') === 'string' ? (form.get('language') as string) : null;
    const responseFormat = (form.get('response_format') as string | null) ?? 'json';
    const audio = new Uint8Array(await file.arrayBuffer());
    state.transcriptions.push({ model, language, responseFormat, fileBytes: audio.length, authorization: req.headers.authorization });
    let wav;
    try {
      wav = parseWav(audio);
    } catch {
      return sendError(res, 400, 'Invalid file format. Supported formats: [wav]', 'invalid_request_error', null);
    }
    const pcm = wav.sampleRate === 8000 ? wav.samples : resample(wav.samples, wav.sampleRate, 8000);
    const t0 = performance.now();
    const final = await transcribe(pcm);
    defined(state.transcriptions[state.transcriptions.length - 1], 'transcription record').engineMs = performance.now() - t0;
    const duration = pcm.length / 8000;
    if (responseFormat === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(final.text);
    }
    const json =
      responseFormat === 'verbose_json'
        ? {
            task: 'transcribe',
            language: 'english',
            duration,
            text: final.text,
            segments: final.text
              ? [
                  {
                    id: 0,
                    seek: 0,
                    start: 0,
                    end: duration,
                    text: final.text,
                    tokens: [],
                    temperature: 0,
                    avg_logprob: Math.log(final.confidence ?? 0.8),
                    compression_ratio: 1,
                    no_speech_prob: 0.01,
                  },
                ]
              : [],
          }
        : { text: final.text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(json));
  }

  async function onSpeech(req: http.IncomingMessage, res: http.ServerResponse, drop: boolean): Promise<void> {
    let body: { model?: unknown; voice?: unknown; input?: unknown; response_format?: unknown; speed?: unknown };
    try {
      body = JSON.parse((await readBody(req)).toString('utf8')) as typeof body;
    } catch {
      return sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
    }
    if (typeof body.input !== 'string' || !body.input)
      return sendError(res, 400, "Missing required parameter: 'input'.", 'invalid_request_error', 'missing_required_parameter');
    if (typeof body.model !== 'string' || typeof body.voice !== 'string')
      return sendError(res, 400, "Missing required parameter: 'model' or 'voice'.", 'invalid_request_error', 'missing_required_parameter');
    const responseFormat = typeof body.response_format === 'string' ? body.response_format : 'mp3';
    if (responseFormat !== 'pcm' && responseFormat !== 'wav')
      return sendError(res, 400, `This test server serves pcm and wav only, not '${responseFormat}'.`, 'invalid_request_error', null);
    const speed = typeof body.speed === 'number' ? body.speed : 1;
    if (speed < 0.25 || speed > 4) return sendError(res, 400, `${speed} is greater than the maximum of 4 - 'speed'`, 'invalid_request_error', null);
    state.speeches.push({ model: body.model, voice: body.voice, input: body.input, responseFormat, speed });

    // espeak-ng writes a 44-byte WAV header (22050 Hz) then samples as it synthesizes.
    const child = spawn('espeak-ng', ['-v', 'en-us', '-s', String(Math.round(175 * speed)), '--stdout', '--stdin']);
    child.stdin.end(body.input);
    res.writeHead(200, { 'content-type': responseFormat === 'pcm' ? 'audio/pcm' : 'audio/wav', 'transfer-encoding': 'chunked' });
    if (responseFormat === 'wav') {
      const h = Buffer.alloc(44);
      h.write('RIFF', 0);
      h.writeUInt32LE(0xffffffff, 4);
      h.write('WAVEfmt ', 8);
      h.writeUInt32LE(16, 16);
      h.writeUInt16LE(1, 20);
      h.writeUInt16LE(1, 22);
      h.writeUInt32LE(24000, 24);
      h.writeUInt32LE(48000, 28);
      h.writeUInt16LE(2, 32);
      h.writeUInt16LE(16, 34);
      h.write('data', 36);
      h.writeUInt32LE(0xffffffff, 40);
      res.write(h);
    }
    const up = new Resampler(22050, 24000);
    let pending = Buffer.alloc(0);
    let headerSkipped = false;
    let sent = 0;
    for await (const chunk of child.stdout) {
      pending = Buffer.concat([pending, chunk as Buffer]);
      if (!headerSkipped) {
        if (pending.length < 44) continue;
        parseWav(pending.subarray(0, 44)); // throws if espeak-ng's output is not the WAV we expect
        pending = pending.subarray(44);
        headerSkipped = true;
      }
      const even = pending.length & ~1;
      const samples = new Int16Array(even / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = pending.readInt16LE(i * 2);
      pending = pending.subarray(even);
      const out = up.push(samples);
      const flushed = new Promise<void>((resolve) => res.write(Buffer.from(out.buffer, out.byteOffset, out.byteLength), () => resolve()));
      sent += out.length;
      if (drop && sent > 4000) {
        // Mid-stream means after audio reached the client: destroying at once could discard the
        // unflushed write, which the client rightly sees as a failed request and retries.
        await flushed;
        return void res.socket?.destroy();
      }
      if (state.speechChunkDelayMs) await sleep(state.speechChunkDelayMs);
    }
    const tail = up.flush();
    res.end(Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength));
  }

  const server = http.createServer((req, res) => {
    const handle = async (): Promise<void> => {
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        await readBody(req);
        return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      }
      const fault = state.faults.shift();
      if (fault === 'rate_limit') {
        await readBody(req);
        return sendError(res, 429, 'Rate limit reached for requests', 'requests', 'rate_limit_exceeded', { 'retry-after': '1' });
      }
      if (fault === 'server_error') {
        await readBody(req);
        return sendError(res, 500, 'The server had an error while processing your request.', 'server_error', null);
      }
      if (fault === 'drop' && req.url !== '/v1/audio/speech') {
        await readBody(req);
        return void req.socket.destroy();
      }
      if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') return onTranscription(req, res);
      if (req.method === 'POST' && req.url === '/v1/audio/speech') return onSpeech(req, res, fault === 'drop');
      sendError(res, 404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error', null);
    };
    handle().catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, err.message, 'server_error', null);
      else res.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await stt.close();
    },
  });
}
