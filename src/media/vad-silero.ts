// Neural voice activity detection with the Silero VAD model (ONNX, MIT), run in-process by
// sherpa-onnx-node (prebuilt from npm). The model only runs at 16 kHz in 512-sample windows
// (32 ms), so our 8 kHz frames are upsampled and gathered into windows; speech starts when
// sherpa's detector turns on (after minSpeechMs of speech) and ends after minSilenceMs of silence.
// Same contract as VoiceActivityDetector: process(frame) -> 'start' | 'end' | null, with preroll.
// Creating a sherpa detector loads the model into its own ONNX session: ~10 MB and 100-500 ms of
// blocking native work on a busy machine (bench/speech/vad.ts). release() returns it to an idle
// pool (reset), so a node creates only as many as it has had party streams at once.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EventEmitter } from 'node:events';
import { FRAME_MS } from './constants.js';
import { Resampler } from './resampler.js';
import type { VadEvents, VadTransition } from './vad.js';

export interface SileroVadOptions {
  /** Path of silero_vad.onnx (scripts/fetch-model.sh puts it in .voxbridge/models/silero-vad/). */
  model: string;
  /** Speech probability threshold (default 0.5). */
  threshold?: number;
  /** Speech needed before a start (default 250 ms). */
  minSpeechMs?: number;
  /** Silence that ends speech (default 300 ms). */
  minSilenceMs?: number;
  /**
   * Frames kept before the start (default 35 = 700 ms): the detector decides after minSpeechMs of
   * speech, and its probability needs a few windows to rise, so the start comes 300-550 ms after
   * the first syllable (flite speech, test/unit/sessions/vad-stage-silero.test.ts).
   */
  prerollFrames?: number;
  maxUtteranceMs?: number;
}

interface SherpaVad {
  acceptWaveform(samples: Float32Array): void;
  isDetected(): boolean;
  isEmpty(): boolean;
  pop(): void;
  reset(): void;
}

const WINDOW = 512; // 16 kHz samples per model window
/** Idle detectors kept per configuration; more are freed (their memory returns to the process). */
const MAX_IDLE = 64;
const idle = new Map<string, SherpaVad[]>();
let sherpa: { Vad: new (config: unknown, bufferSeconds: number) => SherpaVad } | null = null;

function loadSherpa(): NonNullable<typeof sherpa> {
  // Loaded on first use only: deployments on the energy VAD never load the native addon.
  sherpa ??= createRequire(import.meta.url)('sherpa-onnx-node') as NonNullable<typeof sherpa>;
  return sherpa;
}

export class SileroVoiceActivityDetector extends EventEmitter<VadEvents> {
  /** Idle pooled detectors across all configurations (for tests and metrics). */
  static idleCount(): number {
    let n = 0;
    for (const list of idle.values()) n += list.length;
    return n;
  }

  private vad: SherpaVad | null;
  private readonly poolKey: string;
  private readonly up = new Resampler(8000, 16000);
  private readonly window = new Float32Array(WINDOW);
  private filled = 0;
  private readonly ring: Int16Array[] = [];
  private readonly prerollFrames: number;
  private readonly maxUtteranceFrames: number;
  private speechFrames = 0;
  private inSpeech = false;
  private detected = false;

  constructor(opts: SileroVadOptions) {
    super();
    // sherpa-onnx only prints a missing model and then never reports speech: fail where it is configured.
    if (!existsSync(opts.model)) throw new Error(`Silero VAD model not found at ${opts.model} (run scripts/fetch-vad-model.sh)`);
    const config = {
      sileroVad: {
        model: opts.model,
        threshold: opts.threshold ?? 0.5,
        windowSize: WINDOW,
        minSpeechDuration: (opts.minSpeechMs ?? 250) / 1000,
        minSilenceDuration: (opts.minSilenceMs ?? 300) / 1000,
        maxSpeechDuration: (opts.maxUtteranceMs ?? 20_000) / 1000,
      },
      sampleRate: 16000,
      numThreads: 1,
      debug: false,
    };
    this.poolKey = JSON.stringify(config);
    this.vad = idle.get(this.poolKey)?.pop() ?? new (loadSherpa().Vad)(config, 30);
    this.prerollFrames = opts.prerollFrames ?? 35;
    this.maxUtteranceFrames = Math.round((opts.maxUtteranceMs ?? 20_000) / FRAME_MS);
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  process(frame: Int16Array): VadTransition {
    const vad = this.vad;
    if (!vad) throw new Error('SileroVoiceActivityDetector used after release()');
    for (const s of this.up.push(frame)) {
      this.window[this.filled++] = s / 32768;
      if (this.filled === WINDOW) {
        vad.acceptWaveform(this.window);
        this.filled = 0;
        this.detected = vad.isDetected();
        while (!vad.isEmpty()) vad.pop(); // segments are not used: drop them (memory)
      }
    }
    if (!this.inSpeech) {
      this.ring.push(frame);
      if (this.ring.length > this.prerollFrames) this.ring.shift();
      if (!this.detected) return null;
      this.inSpeech = true;
      this.speechFrames = 0;
      this.emit('start', { preroll: this.ring.splice(0, this.ring.length) });
      return 'start';
    }
    this.speechFrames++;
    if (!this.detected || this.speechFrames >= this.maxUtteranceFrames) {
      this.inSpeech = false;
      if (this.detected) vad.reset(); // forced end: start afresh
      this.detected = false;
      this.emit('end');
      return 'end';
    }
    return null;
  }

  reset(): boolean {
    const was = this.inSpeech;
    this.inSpeech = false;
    this.detected = false;
    this.ring.length = 0;
    this.vad?.reset();
    return was;
  }

  /** Gives the model back to the idle pool (reset); this detector must not be used again. */
  release(): void {
    const vad = this.vad;
    if (!vad) return;
    this.vad = null;
    this.inSpeech = false;
    this.ring.length = 0;
    vad.reset();
    while (!vad.isEmpty()) vad.pop();
    const list = idle.get(this.poolKey) ?? [];
    if (list.length < MAX_IDLE) {
      list.push(vad);
      idle.set(this.poolKey, list);
    }
  }
}
