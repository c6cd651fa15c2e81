// Embedded streaming STT: a pool of long-lived vb-sphinx-decoder processes shared by every
// session on this node. Each process holds the model in memory once; an utterance is bound to
// a free decoder at its first frame and keeps it until its final, so the pool size caps how
// many people can be mid-sentence at once. Audio for utterances waiting for a decoder queues
// here (bounded). A decoder that dies is restarted (with back-off) and its utterance gets an
// 'stt_engine_crashed' error; a result later than timeoutMs after endUtterance is an 'stt_timeout'.
import { SafeEmitter } from '../../../events/index.js';
import type { SttEngine, SttError, SttErrorCode, SttFinal, SttStream, SttStreamEvents } from '../../types.js';
import { DecoderProcess, type DecoderFinal } from './decoder-process.js';

export interface PocketsphinxOptions {
  binary: string;
  hmm: string;
  lm: string;
  dict: string;
  poolSize: number;
  /** Longest wait from endUtterance() to the final. */
  timeoutMs: number;
  /** Languages the model transcribes (default ['en']: hub4wsj_sc_8k is US English). */
  languages?: string[];
  /** Minimum audio between partial results (default 250 ms). */
  partialMs?: number;
  /** Audio an utterance may queue while no decoder is free (default 30 s). */
  maxQueuedMs?: number;
  /** Extra pocketsphinx arguments. */
  extraArgs?: string[];
  /** Longest wait for a decoder to load its model (default 30 s). */
  startTimeoutMs?: number;
  /** Reports a listener that threw (listeners must not break the decoder loop). */
  onListenerError?: (err: unknown) => void;
}

export interface DecoderStats {
  decoders: number;
  ready: number;
  busy: number;
  waiting: number;
  restarts: number;
  /** Model load time of the most recent decoder start. */
  lastLoadMs: number;
  /** Recent decoder timings: CPU per audio second, end-of-utterance search time. */
  lastFinal: DecoderFinal | null;
}

interface Utterance {
  stream: PocketsphinxStream;
  pending: Int16Array[];
  slot: Slot | null;
  ended: boolean;
  /** A final or error was delivered (or the stream closed): nothing more goes out for it. */
  done: boolean;
  timer: NodeJS.Timeout | null;
}

interface Slot {
  proc: DecoderProcess;
  utt: Utterance | null;
  crashes: number;
}

const FRAME_MS = 20;

export class PocketsphinxEngine implements SttEngine {
  readonly name = 'pocketsphinx';
  private readonly slots: Slot[] = [];
  private readonly waiting: Utterance[] = [];
  private closed = false;
  private restarts = 0;
  private lastLoadMs = 0;
  private lastFinal: DecoderFinal | null = null;

  constructor(private readonly opts: PocketsphinxOptions) {}

  /** Starts the pool; resolves when every decoder has loaded its model. */
  async start(): Promise<void> {
    const args = [
      '-hmm',
      this.opts.hmm,
      '-lm',
      this.opts.lm,
      '-dict',
      this.opts.dict,
      '-samprate',
      '8000',
      '-logfn',
      '/dev/null',
      '-partial_ms',
      String(this.opts.partialMs ?? 250),
      ...(this.opts.extraArgs ?? []),
    ];
    const startTimeout = this.opts.startTimeoutMs ?? 30_000;
    const starts: Promise<void>[] = [];
    for (let i = 0; i < this.opts.poolSize; i++) {
      const slot: Slot = { proc: new DecoderProcess(i, { binary: this.opts.binary, args }), utt: null, crashes: 0 };
      this.slots.push(slot);
      starts.push(
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('pocketsphinx decoder did not load its model in time')), startTimeout);
          slot.proc.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
          slot.proc.once('exit', ({ code, signal, stderr }) => {
            clearTimeout(timer);
            reject(new Error(`pocketsphinx decoder exited at start (${signal ?? `code ${code}`}): ${stderr || 'no output'}`));
          });
        }),
      );
      this.wire(slot);
      slot.proc.start();
    }
    try {
      await Promise.all(starts);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  languages(): string[] {
    return [...(this.opts.languages ?? ['en'])];
  }

  openStream(opts: { language: string }): SttStream {
    if (this.closed) throw new Error('pocketsphinx engine is closed');
    if (!this.languages().includes(opts.language)) {
      throw new Error(`pocketsphinx cannot transcribe "${opts.language}" (languages: ${this.languages().join(', ')})`);
    }
    return new PocketsphinxStream(this, opts.language, this.opts.onListenerError);
  }

  stats(): DecoderStats {
    return {
      decoders: this.slots.length,
      ready: this.slots.filter((s) => s.proc.ready).length,
      busy: this.slots.filter((s) => s.utt !== null).length,
      waiting: this.waiting.length,
      restarts: this.restarts,
      lastLoadMs: this.lastLoadMs,
      lastFinal: this.lastFinal,
    };
  }

  /** Process ids of the decoders (tests use them to kill one). */
  decoderPids(): Array<number | undefined> {
    return this.slots.map((s) => s.proc.pid);
  }

  /** Pid of the decoder serving a stream's current utterance, if bound. */
  pidServing(stream: SttStream): number | undefined {
    return this.slots.find((s) => s.utt?.stream === stream)?.proc.pid;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const utt of this.waiting.splice(0)) this.fail(utt, 'stt_unavailable', 'speech engine stopped');
    for (const slot of this.slots) if (slot.utt) this.fail(slot.utt, 'stt_unavailable', 'speech engine stopped');
    await Promise.all(this.slots.map((s) => s.proc.stop()));
  }

  // ---- called by PocketsphinxStream ----

  /** Begins an utterance: binds a free decoder now or queues it. */
  begin(stream: PocketsphinxStream): Utterance {
    const utt: Utterance = { stream, pending: [], slot: null, ended: false, done: false, timer: null };
    if (this.closed) {
      this.fail(utt, 'stt_unavailable', 'speech engine stopped');
      return utt;
    }
    const slot = this.slots.find((s) => s.utt === null && s.proc.ready);
    if (slot) this.bind(slot, utt);
    else this.waiting.push(utt);
    return utt;
  }

  write(utt: Utterance, frame: Int16Array): void {
    if (utt.done) return;
    if (utt.slot) {
      utt.slot.proc.audio(frame);
      return;
    }
    utt.pending.push(frame.slice()); // the caller may reuse its frame buffer
    if (utt.pending.length * FRAME_MS > (this.opts.maxQueuedMs ?? 30_000)) {
      this.unqueue(utt);
      this.fail(utt, 'stt_overloaded', `no speech decoder free for ${this.opts.maxQueuedMs ?? 30_000} ms`);
    }
  }

  end(utt: Utterance): void {
    if (utt.done || utt.ended) return;
    utt.ended = true;
    utt.timer = setTimeout(() => this.onTimeout(utt), this.opts.timeoutMs);
    utt.timer.unref?.();
    if (utt.slot) utt.slot.proc.endUtterance();
  }

  /** The stream closed: free its decoder as soon as the decoder has finished the utterance. */
  abandon(utt: Utterance): void {
    if (!utt.slot) this.unqueue(utt);
    const wasEnded = utt.ended;
    utt.done = true;
    if (utt.slot && !wasEnded) {
      utt.ended = true;
      utt.slot.proc.endUtterance(); // the final comes back and is dropped; then the slot is free
    }
    if (utt.timer) clearTimeout(utt.timer);
    // Keep a timeout on the decoder so a hung one is still recycled.
    if (utt.slot) {
      utt.timer = setTimeout(() => this.onTimeout(utt), this.opts.timeoutMs);
      utt.timer.unref?.();
    }
  }

  // ---- internals ----

  private bind(slot: Slot, utt: Utterance): void {
    slot.utt = utt;
    utt.slot = slot;
    slot.proc.startUtterance(utt.stream.cepstralMean);
    for (const f of utt.pending) slot.proc.audio(f);
    utt.pending = [];
    if (utt.ended) slot.proc.endUtterance();
  }

  private unqueue(utt: Utterance): void {
    const i = this.waiting.indexOf(utt);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  private next(slot: Slot): void {
    if (this.closed || slot.utt || !slot.proc.ready) return;
    const utt = this.waiting.shift();
    if (utt) this.bind(slot, utt);
  }

  private wire(slot: Slot): void {
    const proc = slot.proc;
    proc.on('ready', ({ loadMs }) => {
      this.lastLoadMs = loadMs;
      this.next(slot);
    });
    proc.on('partial', ({ text, audioMs }) => {
      const utt = slot.utt;
      if (utt && !utt.done) utt.stream.deliver('partial', { text, decodedMs: audioMs });
    });
    proc.on('progress', ({ text, audioMs, stableMs }) => {
      const utt = slot.utt;
      if (utt && !utt.done && utt.ended) utt.stream.deliver('partial', { text, decodedMs: audioMs, stableMs, complete: true });
    });
    proc.on('final', (final) => {
      this.lastFinal = final;
      slot.crashes = 0;
      const utt = slot.utt;
      slot.utt = null;
      if (utt) {
        utt.slot = null;
        if (utt.timer) clearTimeout(utt.timer);
        if (final.audio_ms > 0 && final.cmn.length) utt.stream.cepstralMean = final.cmn;
        if (!utt.done) {
          utt.done = true;
          // No confidence: pocketsphinx's utterance posterior (the decoder's "confidence") is the
          // product over every word and frame, ~0 for any correctly recognised phrase. SPEC reports
          // confidence "when available"; a meaningless 0 is worse than none.
          const out: SttFinal = { text: final.text };
          utt.stream.settle(utt, 'final', out);
        }
      }
      this.next(slot);
    });
    proc.on('exit', ({ code, signal, expected, stderr }) => {
      const utt = slot.utt;
      slot.utt = null;
      if (utt) {
        utt.slot = null;
        this.fail(utt, 'stt_engine_crashed', `speech decoder stopped (${signal ?? `code ${code}`})${stderr ? `: ${stderr.slice(-200)}` : ''}`);
      }
      if (expected || this.closed) return;
      // Restart with back-off so a decoder that cannot start does not spin the CPU.
      this.restarts++;
      const delay = Math.min(5000, 50 * 2 ** slot.crashes++);
      setTimeout(() => {
        if (!this.closed) proc.start();
      }, delay).unref?.();
    });
  }

  private onTimeout(utt: Utterance): void {
    utt.timer = null;
    const slot = utt.slot;
    if (slot) {
      // The decoder is stuck on this utterance: detach it and recycle the process.
      slot.utt = null;
      utt.slot = null;
      slot.proc.kill();
    } else {
      this.unqueue(utt);
    }
    this.fail(utt, 'stt_timeout', `no recognition result within ${this.opts.timeoutMs} ms`);
  }

  private fail(utt: Utterance, code: SttErrorCode, message: string): void {
    if (utt.timer) {
      clearTimeout(utt.timer);
      utt.timer = null;
    }
    if (utt.done) return;
    utt.done = true;
    utt.pending = [];
    utt.stream.settle(utt, 'error', { code, message });
  }
}

class PocketsphinxStream extends SafeEmitter<SttStreamEvents> implements SttStream {
  private current: Utterance | null = null;
  private closed = false;
  /** The caller's channel as the decoder learned it (see vb-sphinx-decoder.c on CMN). */
  cepstralMean: number[] | undefined;

  constructor(
    private readonly engine: PocketsphinxEngine,
    readonly language: string,
    listenerErrorHook?: (err: unknown) => void,
  ) {
    super();
    if (listenerErrorHook) this.onListenerError(listenerErrorHook);
  }

  write(frame: Int16Array): void {
    if (this.closed) return;
    this.current ??= this.engine.begin(this);
    this.engine.write(this.current, frame);
  }

  endUtterance(): void {
    if (this.closed) return;
    const utt = this.current;
    if (!utt) {
      // No audio at all since the last utterance: still exactly one (empty) final.
      process.nextTick(() => this.deliver('final', { text: '' }));
      return;
    }
    if (utt.done) {
      // Already failed (crash, overload): its error was the one result; start afresh.
      this.current = null;
      return;
    }
    this.engine.end(utt);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.current) this.engine.abandon(this.current);
    this.current = null;
  }

  /** The utterance's one result. */
  settle(utt: Utterance, kind: 'final', payload: SttFinal): void;
  settle(utt: Utterance, kind: 'error', payload: SttError): void;
  settle(utt: Utterance, kind: 'final' | 'error', payload: SttFinal | SttError): void {
    // After endUtterance the next write starts a new utterance; before it, a failed one stays
    // current so the rest of its audio is dropped instead of becoming a second utterance.
    if (this.current === utt && utt.ended) this.current = null;
    if (kind === 'final') this.deliver('final', payload as SttFinal);
    else this.deliver('error', payload as SttError);
  }

  /** Safe emit: a throwing listener goes to the listener-error hook, never into decoder or socket callbacks. */
  deliver<K extends keyof SttStreamEvents>(event: K, ...args: SttStreamEvents[K]): void {
    if (!this.closed) this.safeEmit(event, ...args);
  }
}
