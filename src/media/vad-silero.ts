// Neural voice activity detection with the Silero VAD model (ONNX, MIT) at 8 kHz, the phone's own
// rate (no resampling): 256-sample windows (32 ms) go to the process's one shared model
// (vad-silero-model.ts, a worker thread) and their speech probabilities come back a few ms later.
// The state machine is silero-vad's VADIterator with sherpa-onnx's minimum speech: speech starts
// after `minSpeechMs` of windows at or above `threshold` and ends after `minSilenceMs` since the
// probability fell below `threshold - 0.15` (it must climb back above `threshold` to cancel it).
//
// Unlike the energy VAD, transitions are asynchronous: process(frame) never returns one; 'start'
// and 'end' are emitted when the probability arrives. The 'start' preroll reaches from `padMs`
// before the first speech window up to the last frame given to process(), so whatever the
// inference lag, the frames that went by before the start was known are in it.
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { SileroModel } from './vad-silero-model.js';
import { SILERO_SAMPLE_RATE, SILERO_WINDOW } from './vad-silero-worker.js';

export interface SileroVadOptions {
  /** Path of silero_vad.onnx (scripts/fetch-vad-model.sh puts it in .voxbridge/models/silero-vad/). */
  model: string;
  /** Speech probability threshold (default 0.5); speech ends below threshold - 0.15. */
  threshold?: number;
  /** Speech needed before a start (default 96 ms = 3 windows). */
  minSpeechMs?: number;
  /** Silence that ends speech (default 300 ms). */
  minSilenceMs?: number;
  /** Audio kept before the first speech window in the start's preroll (default 300 ms). */
  padMs?: number;
  /** Speech longer than this is ended anyway (default 20 s). */
  maxUtteranceMs?: number;
}

export interface SileroVadEvents {
  /** `atMs`: audio position (ms of audio given to process()) at the end of the deciding window. */
  start: [{ preroll: Int16Array[]; atMs: number }];
  end: [{ atMs: number }];
  /** The model could not be loaded or run: this detector will report nothing more. */
  failed: [Error];
}

const WINDOW_MS = (SILERO_WINDOW * 1000) / SILERO_SAMPLE_RATE; // 32
/**
 * Frames kept while silent are those a start could still reach back to (from `padMs` before the
 * first window not yet answered, ~320 ms when answers keep up); if answers stall, at most this many.
 */
const RING_MAX_FRAMES = 1500; // 30 s

export class SileroVoiceActivityDetector extends EventEmitter<SileroVadEvents> {
  private readonly model: SileroModel;
  private readonly id: number;
  private readonly threshold: number;
  private readonly negThreshold: number;
  private readonly minSpeechWindows: number;
  private readonly minSilenceWindows: number;
  private readonly maxUtteranceWindows: number;
  private readonly padSamples: number;
  private readonly window = new Float32Array(SILERO_WINDOW);
  private filled = 0;
  /** Generation: bumped by reset(); answers for an older generation are dropped. */
  private gen = 0;
  /** Samples given to process() in all, and where the current generation's first window begins. */
  private samples = 0;
  private genStart = 0;
  private answered = 0;
  private speechRun = 0;
  private speechFrom = 0;
  private silenceFrom = -1;
  private utteranceFrom = 0;
  private inSpeech = false;
  private closed = false;
  /** Frames given while silent, with the sample index each begins at. */
  private readonly ring: Array<{ pcm: Int16Array; at: number }> = [];

  constructor(opts: SileroVadOptions) {
    super();
    if (!existsSync(opts.model)) throw new Error(`Silero VAD model not found at ${opts.model} (run scripts/fetch-vad-model.sh)`);
    this.threshold = opts.threshold ?? 0.5;
    this.negThreshold = Math.max(0.01, this.threshold - 0.15);
    this.minSpeechWindows = Math.max(1, Math.ceil((opts.minSpeechMs ?? 96) / WINDOW_MS));
    this.minSilenceWindows = Math.max(1, Math.ceil((opts.minSilenceMs ?? 300) / WINDOW_MS));
    this.maxUtteranceWindows = Math.ceil((opts.maxUtteranceMs ?? 20_000) / WINDOW_MS);
    this.padSamples = Math.round(((opts.padMs ?? 300) * SILERO_SAMPLE_RATE) / 1000);
    this.model = SileroModel.shared(opts.model);
    this.id = this.model.open({
      onProbability: (p, gen) => this.onProbability(p, gen),
      onFailed: (err) => {
        if (!this.closed) this.emit('failed', err);
      },
    });
  }

  /** Whether an utterance is open (as far as the answers received so far tell). */
  get speaking(): boolean {
    return this.inSpeech;
  }

  /**
   * Feeds one frame (any length, 8 kHz). The frame is kept by reference for the preroll while
   * silent: callers must not reuse it.
   */
  process(frame: Int16Array): void {
    if (this.closed) throw new Error('SileroVoiceActivityDetector used after close()');
    if (!this.inSpeech) {
      this.ring.push({ pcm: frame, at: this.samples });
      if (this.ring.length > RING_MAX_FRAMES) this.ring.shift();
    }
    this.samples += frame.length;
    for (let i = 0; i < frame.length; i++) {
      this.window[this.filled++] = (frame[i] ?? 0) / 32768;
      if (this.filled === SILERO_WINDOW) {
        this.model.submit(this.id, this.gen, this.window);
        this.filled = 0;
      }
    }
  }

  /** Forces the end of the current utterance (hang-up, session end); returns whether one was open. */
  reset(): boolean {
    const was = this.inSpeech;
    this.inSpeech = false;
    this.speechRun = 0;
    this.silenceFrom = -1;
    this.ring.length = 0;
    this.gen++;
    this.filled = 0;
    this.answered = 0;
    this.genStart = this.samples;
    return was;
  }

  /** Resolves once every window given so far has been answered (tests, benchmarks). */
  settled(): Promise<void> {
    return this.model.settled();
  }

  /** Leaves the shared model; answers still in flight are dropped. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ring.length = 0;
    this.inSpeech = false;
    this.model.close(this.id);
    this.removeAllListeners();
  }

  private onProbability(p: number, gen: number): void {
    if (this.closed || gen !== this.gen) return;
    const k = this.answered++;
    if (!this.inSpeech) {
      if (p >= this.threshold) {
        if (this.speechRun++ === 0) this.speechFrom = k;
      } else this.speechRun = 0;
      if (this.speechRun >= this.minSpeechWindows) this.startSpeech(k);
      else this.trimRing();
      return;
    }
    if (p >= this.threshold) this.silenceFrom = -1;
    else if (p < this.negThreshold && this.silenceFrom < 0) this.silenceFrom = k;
    const silent = this.silenceFrom >= 0 && k - this.silenceFrom + 1 >= this.minSilenceWindows;
    if (silent || k - this.utteranceFrom + 1 >= this.maxUtteranceWindows) {
      this.inSpeech = false;
      this.speechRun = 0;
      this.silenceFrom = -1;
      this.emit('end', { atMs: this.windowEndMs(k) });
    }
  }

  private startSpeech(k: number): void {
    this.inSpeech = true;
    this.silenceFrom = -1;
    this.utteranceFrom = k;
    const onset = this.genStart + this.speechFrom * SILERO_WINDOW - this.padSamples;
    const first = this.ring.findIndex((f) => f.at + f.pcm.length > onset);
    const preroll = (first < 0 ? this.ring.slice(-1) : this.ring.slice(first)).map((f) => f.pcm);
    this.ring.length = 0;
    this.emit('start', { preroll, atMs: this.windowEndMs(k) });
  }

  /** Drops the frames that no start can reach back to any more. */
  private trimRing(): void {
    const keepFrom = this.genStart + (this.speechRun > 0 ? this.speechFrom : this.answered) * SILERO_WINDOW - this.padSamples;
    let n = 0;
    while (n < this.ring.length && (this.ring[n]?.at ?? 0) + (this.ring[n]?.pcm.length ?? 0) <= keepFrom) n++;
    if (n > 0) this.ring.splice(0, n);
  }

  private windowEndMs(k: number): number {
    return ((this.genStart + (k + 1) * SILERO_WINDOW) * 1000) / SILERO_SAMPLE_RATE;
  }
}
