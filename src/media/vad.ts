// Energy-based voice activity detector for 8 kHz telephone audio.
// The noise floor adapts (falls fast, rises slowly) so a noisy line does not read as endless
// speech; speech starts after `startFrames` voiced frames in a row and ends after `hangoverMs`
// of unvoiced frames, so the short pauses between words do not cut an utterance in two.
import { EventEmitter } from 'node:events';
import { FRAME_MS } from './constants.js';

export interface VadOptions {
  /** Frame length in ms (default 20). */
  frameMs?: number;
  /** dB above the noise floor a frame must reach to count as voiced (default 10). */
  thresholdDb?: number;
  /** Frames below this level (dBFS) are never voiced, whatever the floor (default -50). */
  minLevelDb?: number;
  /** Consecutive voiced frames needed to declare speech (default 3 = 60 ms). */
  startFrames?: number;
  /** Unvoiced time that ends speech (default 560 ms). */
  hangoverMs?: number;
  /** Frames kept before the start, so the STT engine hears the onset (default 15 = 300 ms). */
  prerollFrames?: number;
  /**
   * Frames at the start used to measure the line's noise (default 10 = 200 ms): the floor starts at
   * the quietest of them, so a line that opens with steady noise is not read as speech.
   */
  calibrationFrames?: number;
  /** How fast the floor may climb, dB per second (default 2): follows a steady noise within seconds. */
  floorRiseDbPerSecond?: number;
  /** Speech longer than this is ended anyway, so a stuck line cannot hold an utterance open (default 20 s). */
  maxUtteranceMs?: number;
}

export interface VadEvents {
  start: [{ preroll: Int16Array[] }];
  end: [];
}

export type VadTransition = 'start' | 'end' | null;

const SILENCE_DB = -96;

/** Level of a frame in dBFS (RMS relative to full scale), allocation-free. */
export function frameLevelDb(frame: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += (frame[i] ?? 0) * (frame[i] ?? 0);
  if (sum === 0 || frame.length === 0) return SILENCE_DB;
  const rms = Math.sqrt(sum / frame.length) / 32768;
  return Math.max(SILENCE_DB, 20 * Math.log10(rms));
}

export class VoiceActivityDetector extends EventEmitter<VadEvents> {
  private readonly thresholdDb: number;
  private readonly minLevelDb: number;
  private readonly startFrames: number;
  private readonly hangoverFrames: number;
  private readonly prerollFrames: number;
  private readonly floorRisePerFrame: number;
  private readonly maxUtteranceFrames: number;
  private speechFrames = 0;
  private floorDb = SILENCE_DB;
  private readonly calibrationFrames: number;
  private framesSeen = 0;
  private voicedRun = 0;
  private silentRun = 0;
  private inSpeech = false;
  private readonly ring: Int16Array[] = [];

  constructor(opts: VadOptions = {}) {
    super();
    const frameMs = opts.frameMs ?? FRAME_MS;
    this.thresholdDb = opts.thresholdDb ?? 10;
    this.minLevelDb = opts.minLevelDb ?? -50;
    this.startFrames = opts.startFrames ?? 3;
    this.hangoverFrames = Math.max(1, Math.round((opts.hangoverMs ?? 560) / frameMs));
    this.prerollFrames = opts.prerollFrames ?? 15;
    this.calibrationFrames = opts.calibrationFrames ?? 10;
    // The floor climbs slowly even during speech: a sentence moves it a few dB (and its pauses pull
    // it back down), while a steady noise that started speech is absorbed and ends it.
    this.floorRisePerFrame = ((opts.floorRiseDbPerSecond ?? 2) * frameMs) / 1000;
    this.maxUtteranceFrames = Math.round((opts.maxUtteranceMs ?? 20_000) / frameMs);
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  get noiseFloorDb(): number {
    return this.floorDb;
  }

  /**
   * Feeds one frame; returns the transition it caused (also emitted as 'start' / 'end').
   * The frame is kept by reference for the preroll while silent: callers must not reuse it.
   */
  process(frame: Int16Array): VadTransition {
    const level = frameLevelDb(frame);
    if (this.framesSeen < this.calibrationFrames) {
      this.floorDb = this.framesSeen === 0 ? level : Math.min(this.floorDb, level);
    }
    this.framesSeen++;
    const voiced = level >= this.minLevelDb && level >= this.floorDb + this.thresholdDb;
    this.trackFloor(level);

    if (!this.inSpeech) {
      this.ring.push(frame);
      if (this.ring.length > this.prerollFrames + this.startFrames) this.ring.shift();
      this.voicedRun = voiced ? this.voicedRun + 1 : 0;
      if (this.voicedRun >= this.startFrames) {
        this.inSpeech = true;
        this.silentRun = 0;
        this.speechFrames = 0;
        const preroll = this.ring.splice(0, this.ring.length);
        this.emit('start', { preroll });
        return 'start';
      }
      return null;
    }

    this.silentRun = voiced ? 0 : this.silentRun + 1;
    this.speechFrames++;
    if (this.silentRun >= this.hangoverFrames || this.speechFrames >= this.maxUtteranceFrames) {
      this.inSpeech = false;
      this.voicedRun = 0;
      this.emit('end');
      return 'end';
    }
    return null;
  }

  /** Forces the end of the current utterance (call hang-up, barge-in); returns whether one was open. */
  reset(): boolean {
    const was = this.inSpeech;
    this.inSpeech = false;
    this.voicedRun = 0;
    this.silentRun = 0;
    this.ring.length = 0;
    return was;
  }

  private trackFloor(level: number): void {
    if (level < this.floorDb) {
      // Fall quickly toward quieter frames: the floor is the quietest sustained level.
      this.floorDb += (level - this.floorDb) * 0.2;
    } else {
      this.floorDb += Math.min(this.floorRisePerFrame, level - this.floorDb);
    }
    if (this.floorDb < SILENCE_DB) this.floorDb = SILENCE_DB;
  }
}
