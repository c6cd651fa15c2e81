// Hands the customer's finals to the agent runtime (after they went on to be stored and sent), and,
// once a human has taken the call over, bridges the two parties' audio both ways (the agent steps out;
// the transcript keeps recording both).
import { otherParty } from '../contracts.js';
import { ORIGINAL_SPEAKER_LABEL } from './bridge.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

/**
 * End of turn from the partials: when the VAD ends a customer utterance whose latest partial has at
 * least EARLY_PARTIAL_MIN_WORDS words and has not changed for EARLY_PARTIAL_STABLE_MS (the recognizer
 * heard the trailing silence and kept its hypothesis), the agent answers that partial at once instead
 * of waiting for the final (the final is still what is stored and sent as the customer's turn). When
 * the recognizer lags behind the audio (a loaded machine) the partial is not settled and the final is
 * awaited. Finals come back one per utterance in order (SttProcessor): a queue says which were answered.
 */
export const EARLY_PARTIAL_MIN_WORDS = 2;
export const EARLY_PARTIAL_STABLE_MS = 250;

export class AgentListener extends FrameProcessor {
  private partial = '';
  private partialAt = 0;
  /** One entry per ended customer utterance awaiting its final: true when already answered. */
  private readonly answeredEarly: boolean[] = [];

  /** `earlyPartial` off: every turn waits for the recognizer's final. */
  constructor(
    private readonly onCustomerFinal: (text: string) => void,
    private readonly earlyPartial = true,
  ) {
    super();
  }

  process(frame: Frame): void {
    this.push(frame);
    if ('party' in frame && frame.party !== 'customer') return;
    switch (frame.kind) {
      case 'vad_start':
        this.partial = '';
        return;
      case 'transcript_partial':
        if (frame.text !== this.partial) this.partialAt = Date.now();
        this.partial = frame.text;
        return;
      case 'vad_end': {
        const early =
          this.earlyPartial &&
          this.partial.trim().split(/\s+/).filter(Boolean).length >= EARLY_PARTIAL_MIN_WORDS &&
          Date.now() - this.partialAt >= EARLY_PARTIAL_STABLE_MS;
        this.answeredEarly.push(early);
        if (early) this.onCustomerFinal(this.partial);
        this.partial = '';
        return;
      }
      case 'error':
        if (frame.party === 'customer') this.answeredEarly.shift();
        return;
      case 'transcript_final':
        if (!this.answeredEarly.shift()) this.onCustomerFinal(frame.text);
        return;
      default:
    }
  }
}

export class HandoffBridge extends FrameProcessor {
  /** Set once the human's leg is attached. */
  bridged = false;

  process(frame: Frame): void {
    if (this.bridged && frame.kind === 'audio') {
      this.push({ kind: 'output_audio', to: otherParty(frame.party), speaker: ORIGINAL_SPEAKER_LABEL(frame.party), pcm: frame.pcm });
    }
    this.push(frame);
  }
}
