// Adapter for a self-hosted Vosk server (alphacep/vosk-server, WebSocket protocol):
//   client -> {"config":{"sample_rate":8000}}, then binary PCM16 LE chunks, then {"eof":1}
//   server -> one JSON reply per chunk: {"partial":"..."} while listening, or
//             {"result":[{conf,start,end,word}...],"text":"..."} when it closes a segment itself;
//             after eof, the last {"text":...} and the server closes the socket.
// One WebSocket per utterance keeps utterances independent (a server-side endpoint in the
// middle of ours is joined into the one final the pipeline expects).
import { SafeEmitter } from '../../../events/index.js';
import WebSocket from 'ws';
import type { SttEngine, SttError, SttErrorCode, SttStream, SttStreamEvents } from '../../types.js';

export interface VoskOptions {
  /** ws:// or wss:// address of the server. */
  url: string;
  /** The language of the model the server runs (ISO 639-1). */
  language: string;
  /** Longest wait from endUtterance() to the final. */
  timeoutMs: number;
  sampleRate?: number;
  onListenerError?: (err: unknown) => void;
}

interface VoskMessage {
  partial?: string;
  text?: string;
  result?: Array<{ conf?: number; word?: string }>;
}

export class VoskStt implements SttEngine {
  readonly name = 'vosk';
  private readonly streams = new Set<VoskStream>();

  constructor(private readonly opts: VoskOptions) {}

  languages(): string[] {
    return [this.opts.language];
  }

  openStream(opts: { language: string }): SttStream {
    if (opts.language !== this.opts.language) {
      throw new Error(`the Vosk server transcribes "${this.opts.language}", not "${opts.language}"`);
    }
    const s = new VoskStream(this.opts, () => this.streams.delete(s));
    this.streams.add(s);
    return s;
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
  }
}

class VoskUtterance {
  readonly ws: WebSocket;
  private queue: Buffer[] = [];
  private texts: string[] = [];
  private confs: number[] = [];
  private lastPartial = '';
  private timer: NodeJS.Timeout | null = null;
  ended = false;
  done = false;

  constructor(
    private readonly owner: VoskStream,
    private readonly opts: VoskOptions,
  ) {
    this.ws = new WebSocket(opts.url);
    this.ws.on('open', () => {
      this.ws.send(JSON.stringify({ config: { sample_rate: opts.sampleRate ?? 8000 } }));
      for (const b of this.queue) this.ws.send(b);
      this.queue = [];
      if (this.ended) this.ws.send(JSON.stringify({ eof: 1 }));
    });
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    this.ws.on('error', (err) => this.fail('stt_unavailable', `Vosk server: ${err.message}`));
    this.ws.on('close', () => {
      if (this.ended) this.finish();
      else this.fail('stt_unavailable', 'Vosk server closed the connection mid-utterance');
    });
  }

  write(frame: Int16Array): void {
    if (this.done || this.ended) return;
    const bytes = Buffer.from(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(bytes);
    else this.queue.push(bytes);
  }

  end(): void {
    if (this.done || this.ended) return;
    this.ended = true;
    this.timer = setTimeout(() => this.fail('stt_timeout', `no result from the Vosk server within ${this.opts.timeoutMs} ms`), this.opts.timeoutMs);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ eof: 1 }));
  }

  abandon(): void {
    this.done = true;
    this.clear();
    this.ws.terminate();
  }

  private onMessage(raw: string): void {
    let msg: VoskMessage;
    try {
      msg = JSON.parse(raw) as VoskMessage;
    } catch {
      return;
    }
    if (this.done) return;
    if (typeof msg.text === 'string') {
      if (msg.text) this.texts.push(msg.text);
      for (const w of msg.result ?? []) if (typeof w.conf === 'number') this.confs.push(w.conf);
      this.lastPartial = '';
      // After eof the server sends the last result then closes; finish on close so a final
      // segment split across messages is complete.
    } else if (typeof msg.partial === 'string') {
      const text = [...this.texts, msg.partial].filter(Boolean).join(' ');
      if (msg.partial && text !== this.lastPartial) {
        this.lastPartial = text;
        this.owner.deliver('partial', { text });
      }
    }
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.clear();
    const text = this.texts.join(' ').trim();
    const confidence = this.confs.length ? this.confs.reduce((a, b) => a + b, 0) / this.confs.length : undefined;
    this.owner.settle(this, text ? (confidence === undefined ? { text } : { text, confidence }) : { text: '' });
  }

  private fail(code: SttErrorCode, message: string): void {
    if (this.done) return;
    this.done = true;
    this.clear();
    this.ws.terminate();
    this.owner.settleError(this, { code, message });
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

class VoskStream extends SafeEmitter<SttStreamEvents> implements SttStream {
  private current: VoskUtterance | null = null;
  private closed = false;
  readonly language: string;

  constructor(
    private readonly opts: VoskOptions,
    private readonly onClosed: () => void,
  ) {
    super();
    this.language = opts.language;
    if (opts.onListenerError) this.onListenerError(opts.onListenerError);
  }

  write(frame: Int16Array): void {
    if (this.closed) return;
    this.current ??= new VoskUtterance(this, this.opts);
    this.current.write(frame);
  }

  endUtterance(): void {
    if (this.closed) return;
    const utt = this.current;
    if (!utt) {
      process.nextTick(() => this.deliver('final', { text: '' }));
      return;
    }
    if (utt.done) {
      this.current = null; // it already failed; its error was the one result
      return;
    }
    utt.end();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.current?.abandon();
    this.current = null;
    this.onClosed();
  }

  settle(utt: VoskUtterance, final: { text: string; confidence?: number }): void {
    if (this.current === utt && utt.ended) this.current = null;
    this.deliver('final', final);
  }

  settleError(utt: VoskUtterance, error: SttError): void {
    if (this.current === utt && utt.ended) this.current = null;
    this.deliver('error', error);
  }

  /** Safe emit: a throwing listener goes to the listener-error hook, never into decoder or socket callbacks. */
  deliver<K extends keyof SttStreamEvents>(event: K, ...args: SttStreamEvents[K]): void {
    if (!this.closed) this.safeEmit(event, ...args);
  }
}
