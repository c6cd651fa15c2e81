// Voice activity per party: audio frames pass through, and `vad_start` / `vad_end` frames mark each
// utterance. The audio frame that completes a transition is pushed before the transition frame, so
// it is part of the preroll on a start (heard once) and the last frame of speech on an end.
import { SileroVoiceActivityDetector, VoiceActivityDetector, type VadOptions } from '../../media/index.js';
import { FRAME_MS, PARTIES, type Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

/**
 * Which detector: the energy VAD (the default, also when no engine is named) or Silero
 * (`VAD_ENGINE=silero`; needs the model file). `hangoverMs` is the silence
 * that ends speech for either (the agent modes shorten it).
 */
export interface VadChoice extends VadOptions {
  engine?: 'energy' | 'silero';
  sileroModel?: string;
}

/**
 * Silero reports the end this long after its minimum silence has passed (the model's speech
 * probability decays over a few 32 ms windows; bench/speech/vad.ts), so a hangover asked of it is
 * shortened by this much to end speech as soon after the last word as the energy VAD would.
 */
export const SILERO_END_LAG_MS = 180;
/** Shorter than this, Silero cuts utterances at the pauses between words. */
const SILERO_MIN_SILENCE_MS = 100;

/** Silero's minimum silence for a hangover asked of the VAD (the agent modes' shorter one). */
export function sileroMinSilenceMs(hangoverMs: number): number {
  return Math.max(SILERO_MIN_SILENCE_MS, hangoverMs - SILERO_END_LAG_MS);
}

type Detector = VoiceActivityDetector | SileroVoiceActivityDetector;

export class VadProcessor extends FrameProcessor {
  private readonly vads = new Map<Party, Detector>();
  /** Set synchronously by the detector's 'start' event inside process(). */
  private lastPreroll: Int16Array[] | null = null;

  /**
   * Both detectors are made here, when the session is built, not on its first audio frame: a new
   * Silero model blocks the event loop for 100-500 ms on a busy machine, which mid-call would drop
   * this call's live audio (the idle pool makes it rare once a node has run as many streams).
   */
  constructor(opts: VadChoice = {}) {
    super();
    for (const party of PARTIES) {
      const vad =
        opts.engine === 'silero' && opts.sileroModel
          ? new SileroVoiceActivityDetector({
              model: opts.sileroModel,
              maxUtteranceMs: opts.maxUtteranceMs,
              ...(opts.hangoverMs === undefined ? {} : { minSilenceMs: sileroMinSilenceMs(opts.hangoverMs) }),
            })
          : new VoiceActivityDetector(opts);
      vad.on('start', (e) => {
        this.lastPreroll = e.preroll;
      });
      this.vads.set(party, vad);
    }
  }

  speaking(party: Party): boolean {
    return this.vads.get(party)?.speaking ?? false;
  }

  process(frame: Frame): void {
    const vad = frame.kind === 'audio' ? this.vads.get(frame.party) : undefined;
    if (frame.kind !== 'audio' || !vad) {
      this.push(frame); // after close() the detectors are gone (and push drops the frame)
      return;
    }
    this.lastPreroll = null;
    const transition = vad.process(frame.pcm);
    this.push(frame);
    if (transition === 'start') {
      const pre: Int16Array[] = this.lastPreroll ?? [frame.pcm];
      this.push({ kind: 'vad_start', party: frame.party, mediaMs: frame.mediaMs - (pre.length - 1) * FRAME_MS, preroll: pre });
    } else if (transition === 'end') {
      this.push({ kind: 'vad_end', party: frame.party, mediaMs: frame.mediaMs + FRAME_MS });
    }
  }

  /** Ends open utterances (hang-up, session end) so the recognizer finalizes what it heard. */
  flush(mediaMsOf: (p: Party) => number): void {
    for (const [party, vad] of this.vads) {
      if (vad.reset()) this.push({ kind: 'vad_end', party, mediaMs: mediaMsOf(party) });
    }
  }

  /** Silero models go back to the node's idle pool for the next session. */
  override close(): void {
    if (this.closed) return;
    super.close();
    for (const vad of this.vads.values()) if (vad instanceof SileroVoiceActivityDetector) vad.release();
    this.vads.clear();
  }
}
