// Voice activity per party: audio frames pass through, and `vad_start` / `vad_end` frames mark each
// utterance. With the energy VAD the audio frame that completes a transition is pushed before the
// transition frame, so it is part of the preroll on a start (heard once) and the last frame of
// speech on an end. With Silero the transition is known a few ms after its audio went by (the
// shared model answers from a worker thread): the frames keep flowing, and the mark is pushed when
// the answer arrives, its preroll reaching up to the last frame pushed, so the same holds.
import { SileroVoiceActivityDetector, VoiceActivityDetector, type VadOptions } from '../../media/index.js';
import { FRAME_MS, PARTIES, type Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

/**
 * Which detector: Silero (`VAD_ENGINE=silero`, the configured default; needs the model file) or the
 * energy VAD (also when no engine is named). `hangoverMs` is the silence that ends speech for
 * either (the agent modes shorten it).
 */
export interface VadChoice extends VadOptions {
  engine?: 'energy' | 'silero';
  sileroModel?: string;
}

/**
 * Silero reports the end this long after its minimum silence has passed (the model's speech
 * probability decays over a few 32 ms windows after the last word; bench/speech/vad.ts), so a
 * hangover asked of it is shortened by this much to end speech as soon after the last word as the
 * energy VAD would.
 */
export const SILERO_END_LAG_MS = 130;
/** Shorter than this, Silero cuts utterances at the pauses between words. */
const SILERO_MIN_SILENCE_MS = 100;

/** Silero's minimum silence for a hangover asked of the VAD (the agent modes' shorter one). */
export function sileroMinSilenceMs(hangoverMs: number): number {
  return Math.max(SILERO_MIN_SILENCE_MS, hangoverMs - SILERO_END_LAG_MS);
}

interface PartyVad {
  energy: VoiceActivityDetector | null;
  silero: SileroVoiceActivityDetector | null;
  /** mediaMs of the last audio frame pushed on (Silero's marks are placed from it). */
  lastMs: number;
}

export class VadProcessor extends FrameProcessor {
  private readonly vads = new Map<Party, PartyVad>();
  /** Set synchronously by the energy detector's 'start' event inside process(). */
  private lastPreroll: Int16Array[] | null = null;

  /**
   * Detectors are made when the session is built, not on its first audio frame. A Silero detector
   * costs no model load: it joins the process's shared model (loaded once, in a worker thread).
   * Only `parties` get one (the pipeline names those whose marks a later stage reads); the audio of
   * the others passes through unmarked, and costs nothing.
   */
  constructor(
    private readonly opts: VadChoice = {},
    parties: readonly Party[] = PARTIES,
  ) {
    super();
    for (const party of parties) {
      const v: PartyVad = { energy: null, silero: null, lastMs: 0 };
      if (opts.engine === 'silero' && opts.sileroModel) v.silero = this.sileroFor(party, opts.sileroModel, v);
      else v.energy = this.energyFor();
      this.vads.set(party, v);
    }
  }

  /** Parties whose speech is detected. */
  get parties(): Party[] {
    return [...this.vads.keys()];
  }

  speaking(party: Party): boolean {
    const v = this.vads.get(party);
    return (v?.silero ?? v?.energy)?.speaking ?? false;
  }

  process(frame: Frame): void {
    const v = frame.kind === 'audio' ? this.vads.get(frame.party) : undefined;
    if (frame.kind !== 'audio' || !v) {
      this.push(frame); // after close() the detectors are gone (and push drops the frame)
      return;
    }
    if (v.silero) {
      v.silero.process(frame.pcm);
      v.lastMs = frame.mediaMs;
      this.push(frame);
      return;
    }
    this.lastPreroll = null;
    const transition = v.energy?.process(frame.pcm) ?? null;
    this.push(frame);
    if (transition === 'start') this.pushStart(frame.party, frame.mediaMs, this.lastPreroll ?? [frame.pcm]);
    else if (transition === 'end') this.push({ kind: 'vad_end', party: frame.party, mediaMs: frame.mediaMs + FRAME_MS });
  }

  /** Ends open utterances (hang-up, session end) so the recognizer finalizes what it heard. */
  flush(mediaMsOf: (p: Party) => number): void {
    for (const [party, v] of this.vads) {
      if ((v.silero ?? v.energy)?.reset()) this.push({ kind: 'vad_end', party, mediaMs: mediaMsOf(party) });
    }
  }

  /** Resolves once every Silero answer for the audio given so far is in (tests, benchmarks). */
  async settled(): Promise<void> {
    const pending: Array<Promise<void>> = [];
    for (const v of this.vads.values()) if (v.silero) pending.push(v.silero.settled());
    await Promise.all(pending);
  }

  /** Silero detectors leave the shared model; answers still in flight are dropped. */
  override close(): void {
    if (this.closed) return;
    super.close();
    for (const v of this.vads.values()) v.silero?.close();
    this.vads.clear();
  }

  private energyFor(): VoiceActivityDetector {
    const vad = new VoiceActivityDetector(this.opts);
    vad.on('start', (e) => {
      this.lastPreroll = e.preroll;
    });
    return vad;
  }

  private sileroFor(party: Party, model: string, v: PartyVad): SileroVoiceActivityDetector {
    const vad = new SileroVoiceActivityDetector({
      model,
      maxUtteranceMs: this.opts.maxUtteranceMs,
      ...(this.opts.hangoverMs === undefined ? {} : { minSilenceMs: sileroMinSilenceMs(this.opts.hangoverMs) }),
    });
    vad.on('start', (e) => this.pushStart(party, v.lastMs, e.preroll));
    vad.on('end', () => this.push({ kind: 'vad_end', party, mediaMs: v.lastMs + FRAME_MS }));
    vad.on('failed', (err) => {
      // The session goes on with the energy VAD for this party, and says so once; an utterance
      // Silero had open is ended first (the energy VAD starts outside one).
      if (vad.speaking) this.push({ kind: 'vad_end', party, mediaMs: v.lastMs + FRAME_MS });
      vad.close();
      v.silero = null;
      v.energy = this.energyFor();
      this.push({
        kind: 'error',
        code: 'engine_error',
        party,
        message: `the Silero VAD failed (${err.message}); ${party} speech is detected by the energy VAD`,
      });
    });
    return vad;
  }

  /** `lastMs` is the mediaMs of the preroll's last frame. */
  private pushStart(party: Party, lastMs: number, preroll: Int16Array[]): void {
    this.push({ kind: 'vad_start', party, mediaMs: lastMs - (Math.max(1, preroll.length) - 1) * FRAME_MS, preroll });
  }
}
