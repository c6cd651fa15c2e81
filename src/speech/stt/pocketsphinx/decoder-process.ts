// One vb-sphinx-decoder child process (see vb-sphinx-decoder.c for the wire protocol).
// Audio goes down its stdin as binary records, results come back as JSON lines; nothing here
// blocks the event loop (writes are buffered by Node, reads are stream events).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';

export interface DecoderFinal {
  text: string;
  confidence: number;
  /** Audio in the utterance, decoder CPU time for it, and the time spent in end-of-utterance search. */
  audio_ms: number;
  decode_ms: number;
  end_ms: number;
  /** Cepstral mean after the utterance: pass it to the same stream's next startUtterance(). */
  cmn: number[];
}

/** The first-pass hypothesis once all of an utterance's audio is decoded, before the final's search. */
export interface DecoderProgress {
  text: string;
  /** Utterance audio decoded (all that was sent before endUtterance). */
  audioMs: number;
  /** Audio (at least) over which the hypothesis has not changed. */
  stableMs: number;
}

export interface DecoderProcessEvents {
  ready: [{ loadMs: number }];
  /** `audioMs`: the utterance's audio decoded when the hypothesis was taken. */
  partial: [{ text: string; audioMs: number }];
  progress: [DecoderProgress];
  final: [DecoderFinal];
  /** The process ended; `expected` is false for crashes. */
  exit: [{ code: number | null; signal: NodeJS.Signals | null; expected: boolean; stderr: string }];
}

export interface DecoderLaunch {
  binary: string;
  args: string[];
}

const REC_START = 0x53; // 'S'
const REC_AUDIO = 0x41; // 'A'
const REC_END = 0x45; // 'E'
const REC_QUIT = 0x51; // 'Q'

export class DecoderProcess extends EventEmitter<DecoderProcessEvents> {
  readonly id: number;
  private child: ChildProcessWithoutNullStreams | null = null;
  private stopping = false;
  private stderrTail = '';
  ready = false;

  constructor(
    id: number,
    private readonly launch: DecoderLaunch,
  ) {
    super();
    this.id = id;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== null;
  }

  start(): void {
    this.ready = false;
    this.stopping = false;
    this.stderrTail = '';
    const child = spawn(this.launch.binary, this.launch.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stdin.on('error', () => {}); // EPIPE after a crash: the exit handler reports it
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-2000);
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => this.onLine(line));
    child.on('error', (err) => {
      this.stderrTail += `\nspawn failed: ${err.message}`;
    });
    child.on('close', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      this.ready = false;
      this.emit('exit', { code, signal, expected: this.stopping, stderr: this.stderrTail.trim() });
    });
  }

  /** `cmn`: the stream's adapted cepstral mean from its previous final (none: the model's initial mean). */
  startUtterance(cmn?: readonly number[]): void {
    this.record(REC_START, cmn && cmn.length ? Float32Array.from(cmn) : null);
  }

  audio(frame: Int16Array): void {
    this.record(REC_AUDIO, frame);
  }

  endUtterance(): void {
    this.record(REC_END, null);
  }

  /** Asks the process to quit; resolves when it has exited (killed after `graceMs`). */
  stop(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    this.stopping = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.record(REC_QUIT, null);
      child.stdin.end();
    });
  }

  /** Kills the process at once (hung decoder, tests); an unexpected exit unless stop() was called. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child?.kill(signal);
  }

  private record(type: number, pcm: Int16Array | Float32Array | null): void {
    const child = this.child;
    if (!child || !child.stdin.writable) return;
    const bytes = pcm ? pcm.byteLength : 0;
    const buf = Buffer.allocUnsafe(5 + bytes);
    buf[0] = type;
    buf.writeUInt32LE(bytes, 1);
    if (pcm) {
      // Little-endian on the wire; typed arrays are host-endian, which is little on our targets.
      Buffer.from(pcm.buffer, pcm.byteOffset, bytes).copy(buf, 5);
    }
    child.stdin.write(buf);
  }

  private onLine(line: string): void {
    let msg: { type?: string; text?: string; load_ms?: number; message?: string; stable_ms?: number } & Partial<DecoderFinal>;
    try {
      msg = JSON.parse(line);
    } catch {
      this.stderrTail = (this.stderrTail + `\nbad line: ${line}`).slice(-2000);
      return;
    }
    switch (msg.type) {
      case 'ready':
        this.ready = true;
        this.emit('ready', { loadMs: msg.load_ms ?? 0 });
        break;
      case 'partial':
        this.emit('partial', { text: msg.text ?? '', audioMs: msg.audio_ms ?? 0 });
        break;
      case 'progress':
        this.emit('progress', { text: msg.text ?? '', audioMs: msg.audio_ms ?? 0, stableMs: msg.stable_ms ?? 0 });
        break;
      case 'final':
        this.emit('final', {
          text: msg.text ?? '',
          confidence: msg.confidence ?? 0,
          audio_ms: msg.audio_ms ?? 0,
          decode_ms: msg.decode_ms ?? 0,
          end_ms: msg.end_ms ?? 0,
          cmn: Array.isArray(msg.cmn) ? msg.cmn : [],
        });
        break;
      case 'error':
        this.stderrTail = (this.stderrTail + `\n${msg.message ?? 'decoder error'}`).slice(-2000);
        break;
    }
  }
}
