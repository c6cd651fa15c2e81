// Adapter for Deepgram's live streaming API (developers.deepgram.com/reference/speech-to-text-api/listen-streaming),
// also served by self-hosted Deepgram:
//   wss://{host}/v1/listen?encoding=mulaw&sample_rate=8000&channels=1&interim_results=true&language=en
//   (detect_language=true instead of language when the party's language is null)
//   header `Authorization: Token <key>`; binary mu-law audio up; text control messages
//   {"type":"KeepAlive"} (the server closes after 10 s without data) and {"type":"CloseStream"}
//   (flush, then the server sends the last Results, a Metadata message, and closes).
//   Down: {"type":"Results","is_final","speech_final","start","duration",
//          "channel":{"alternatives":[{"transcript","confidence","words":[{word,start,end,confidence}]}],"detected_language"?}}
// One socket per utterance (as the Vosk adapter): the pipeline's VAD decides the utterance, and
// CloseStream yields its last results. The utterance's audio is kept until it is acknowledged by
// an is_final result (its start+duration), so a dropped socket is reopened and only the
// unacknowledged audio sent again: nothing of the utterance in flight is lost.
import WebSocket from 'ws';
import { mulawEncode } from '../../../media/index.js';
import { SafeEmitter } from '../../../events/index.js';
import type { SttEngine, SttErrorCode, SttFinal, SttStream, SttStreamEvents } from '../../types.js';

export interface DeepgramOptions {
  /** Base, e.g. wss://api.deepgram.com (the adapter adds /v1/listen). */
  url: string;
  /** `model` query parameter (nova-2-phonecall, nova-3 …); omitted when empty. */
  model?: string;
  apiKey: () => Promise<string | null>;
  languages: string[];
  timeoutMs: number;
  /** Reconnects per utterance after a dropped socket. */
  reconnects?: number;
  keepAliveMs?: number;
  onListenerError?: (err: unknown) => void;
}

interface DeepgramResults {
  type: 'Results';
  is_final?: boolean;
  speech_final?: boolean;
  start?: number;
  duration?: number;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number }>; detected_language?: string };
}

const BYTES_PER_SECOND = 8000; // mu-law: one byte per sample

export class DeepgramStt implements SttEngine {
  readonly name = 'deepgram';
  readonly detectsLanguage = true;
  private readonly streams = new Set<DeepgramStream>();

  constructor(readonly opts: DeepgramOptions) {}

  languages(): string[] {
    return this.opts.languages;
  }

  openStream(opts: { language: string; detect?: boolean }): SttStream {
    const s = new DeepgramStream(this.opts, opts.language, opts.detect ?? false, () => this.streams.delete(s));
    if (this.opts.onListenerError) s.onListenerError(this.opts.onListenerError);
    this.streams.add(s);
    return s;
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
  }
}

class DeepgramUtterance {
  private ws: WebSocket | null = null;
  /** All mu-law audio of the utterance; bytes before `ackedBytes` were finalized by the server. */
  private audio: Buffer[] = [];
  private audioBytes = 0;
  private ackedBytes = 0;
  /** Byte offset in `audio` where the current socket's stream began. */
  private base = 0;
  /** Bytes of `audio` already sent on the current socket. */
  private sentBytes = 0;
  private texts: string[] = [];
  private confidences: number[] = [];
  private language: string | undefined;
  private reconnectsLeft: number;
  private timer: NodeJS.Timeout | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  ended = false;
  done = false;

  constructor(
    private readonly owner: DeepgramStream,
    private readonly opts: DeepgramOptions,
  ) {
    this.reconnectsLeft = opts.reconnects ?? 3;
    void this.connect();
  }

  private async connect(): Promise<void> {
    let key: string | null;
    try {
      key = await this.opts.apiKey();
    } catch (err) {
      return this.fail('stt_unavailable', `Deepgram API key: ${(err as Error).message}`);
    }
    if (this.done) return;
    const q = new URLSearchParams({ encoding: 'mulaw', sample_rate: '8000', channels: '1', interim_results: 'true' });
    if (this.owner.detect) q.set('detect_language', 'true');
    else q.set('language', this.owner.language);
    if (this.opts.model) q.set('model', this.opts.model);
    const ws = new WebSocket(`${this.opts.url.replace(/\/$/, '')}/v1/listen?${q}`, { headers: key ? { authorization: `Token ${key}` } : {} });
    this.ws = ws;
    // The new socket starts at the first unacknowledged byte; its result times count from there.
    this.base = this.ackedBytes;
    this.sentBytes = this.ackedBytes;
    ws.on('open', () => {
      this.flush();
      if (this.ended) ws.send(JSON.stringify({ type: 'CloseStream' }));
      this.keepAlive = setInterval(() => ws.send(JSON.stringify({ type: 'KeepAlive' })), this.opts.keepAliveMs ?? 5000);
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    ws.on('unexpected-response', (_req, res) => {
      // Deepgram refuses a bad key or parameters in the handshake (401, 400) with a dg-error header.
      const dgError = res.headers['dg-error'];
      const reason = (Array.isArray(dgError) ? dgError.join(', ') : dgError) ?? res.statusMessage;
      this.fail('stt_unavailable', `Deepgram refused the stream: HTTP ${res.statusCode} ${reason ?? ''}`.trim());
    });
    ws.on('error', () => undefined); // 'close' follows and decides
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      this.stopKeepAlive();
      if (this.done) return;
      if (this.ended && code === 1000) return this.finish();
      if (this.reconnectsLeft-- > 0) return void this.connect();
      this.fail('stt_unavailable', `Deepgram closed the stream mid-utterance (code ${code})`);
    });
  }

  write(frame: Int16Array): void {
    if (this.done || this.ended) return;
    const bytes = Buffer.from(mulawEncode(frame));
    this.audio.push(bytes);
    this.audioBytes += bytes.length;
    this.flush();
  }

  end(): void {
    if (this.done || this.ended) return;
    this.ended = true;
    this.timer = setTimeout(() => this.fail('stt_timeout', `no result from Deepgram within ${this.opts.timeoutMs} ms`), this.opts.timeoutMs);
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
  }

  abandon(): void {
    this.done = true;
    this.clear();
    this.ws?.terminate();
  }

  /** Sends what the current socket has not had yet (after a reconnect: everything not acknowledged). */
  private flush(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || this.sentBytes >= this.audioBytes) return;
    const last = this.audio.at(-1);
    if (!last) return; // audioBytes > sentBytes: some audio was queued
    // The usual case is one new frame; after a (re)connect, everything from sentBytes on.
    ws.send(this.sentBytes === this.audioBytes - last.length ? last : Buffer.concat(this.audio).subarray(this.sentBytes));
    this.sentBytes = this.audioBytes;
  }

  private onMessage(raw: string): void {
    let msg: DeepgramResults | { type?: string };
    try {
      msg = JSON.parse(raw) as DeepgramResults;
    } catch {
      return;
    }
    if (this.done || msg.type !== 'Results') return;
    const r = msg as DeepgramResults;
    const alt = r.channel?.alternatives?.[0];
    const transcript = (alt?.transcript ?? '').trim();
    if (r.channel?.detected_language) this.language = r.channel.detected_language;
    if (r.is_final) {
      if (transcript) this.texts.push(transcript);
      if (transcript && typeof alt?.confidence === 'number') this.confidences.push(alt.confidence);
      // Times are relative to the socket's first byte, which was the first unacknowledged byte.
      const endSec = (r.start ?? 0) + (r.duration ?? 0);
      this.ackedBytes = Math.min(this.audioBytes, this.base + Math.round(endSec * BYTES_PER_SECOND));
    } else if (transcript) {
      this.owner.partial([...this.texts, transcript].join(' '));
    }
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.clear();
    const text = this.texts.join(' ').trim();
    const final: SttFinal = { text };
    if (text && this.confidences.length) final.confidence = this.confidences.reduce((a, b) => a + b, 0) / this.confidences.length;
    if (text && this.language) final.language = this.language.slice(0, 2).toLowerCase();
    this.owner.settle(this, final);
  }

  private fail(code: SttErrorCode, message: string): void {
    if (this.done) return;
    this.done = true;
    this.clear();
    this.ws?.terminate();
    this.owner.settleError(this, { code, message });
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopKeepAlive();
  }
}

class DeepgramStream extends SafeEmitter<SttStreamEvents> implements SttStream {
  private current: DeepgramUtterance | null = null;
  private closed = false;

  constructor(
    private readonly opts: DeepgramOptions,
    readonly language: string,
    readonly detect: boolean,
    private readonly onClosed: () => void,
  ) {
    super();
  }

  write(frame: Int16Array): void {
    if (this.closed) return;
    this.current ??= new DeepgramUtterance(this, this.opts);
    this.current.write(frame);
  }

  endUtterance(): void {
    if (this.closed) return;
    const utt = this.current;
    this.current = null;
    if (!utt) {
      process.nextTick(() => this.deliver('final', { text: '' }));
      return;
    }
    if (!utt.done) utt.end(); // a failed utterance already delivered its one error
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.current?.abandon();
    this.current = null;
    this.onClosed();
  }

  partial(text: string): void {
    this.deliver('partial', { text });
  }

  settle(_utt: DeepgramUtterance, final: SttFinal): void {
    this.deliver('final', final);
  }

  settleError(utt: DeepgramUtterance, error: { code: SttErrorCode; message: string }): void {
    if (this.current === utt) this.current = null;
    this.deliver('error', error);
  }

  private deliver<K extends keyof SttStreamEvents>(event: K, ...args: SttStreamEvents[K]): void {
    if (!this.closed) this.safeEmit(event, ...args);
  }
}
