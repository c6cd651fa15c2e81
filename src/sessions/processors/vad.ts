// Voice activity per party: audio frames pass through, and `vad_start` / `vad_end` frames mark each
// utterance. The audio frame that completes a transition is pushed before the transition frame, so
// it is part of the preroll on a start (heard once) and the last frame of speech on an end.
import { SileroVoiceActivityDetector, VoiceActivityDetector, type VadOptions } from '../../media/index.js';
import { FRAME_MS, PARTIES, type Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

/** Which detector: the energy VAD (default) or Silero (`VAD_ENGINE=silero`, needs the model file). */
export interface VadChoice extends VadOptions {
  engine?: 'energy' | 'silero';
  sileroModel?: string;
}

export class VadProcessor extends FrameProcessor {
  private readonly vads = new Map<Party, VoiceActivityDetector | SileroVoiceActivityDetector>();
  /** Set synchronously by the detector's 'start' event inside process(). */
  private lastPreroll: Int16Array[] | null = null;

  constructor(opts: VadChoice = {}) {
    super();
    for (const p of PARTIES) {
      const vad =
        opts.engine === 'silero' && opts.sileroModel
          ? new SileroVoiceActivityDetector({ model: opts.sileroModel, maxUtteranceMs: opts.maxUtteranceMs })
          : new VoiceActivityDetector(opts);
      vad.on('start', (e) => {
        this.lastPreroll = e.preroll;
      });
      this.vads.set(p, vad);
    }
  }

  speaking(party: Party): boolean {
    return this.vads.get(party)!.speaking;
  }

  process(frame: Frame): void {
    if (frame.kind !== 'audio') {
      this.push(frame);
      return;
    }
    const vad = this.vads.get(frame.party)!;
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
}
