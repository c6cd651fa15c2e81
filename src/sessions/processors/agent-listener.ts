// Hands the customer's turns to the agent runtime (finals after they went on to be stored and sent;
// settled hypotheses early, see isSettled), and, once a human has taken the call over, bridges the
// two parties' audio both ways (the agent steps out; the transcript keeps recording both).
import { FRAME_MS, otherParty } from '../contracts.js';
import { ORIGINAL_SPEAKER_LABEL } from './bridge.js';
import type { Frame, TranscriptProgressFrame } from '../frames.js';
import { FrameProcessor } from './processor.js';

/**
 * Early answering: the agent may answer an ended customer utterance from the recognizer's hypothesis
 * before the final, when that hypothesis is settled: the recognizer has decoded all of the
 * utterance's audio (the VAD has already seen the hangover's silence), the hypothesis has not
 * changed over the last EARLY_STABLE_AUDIO_MS of that audio, and it has at least EARLY_MIN_WORDS
 * words. Audio time, not wall-clock time: a recognizer running behind on a loaded machine gives its
 * hypothesis late, never a stale one. The final is still the customer's stored turn; the runtime
 * reconciles the reply with it (AgentRuntime.customerFinalAfterEarly).
 */
export const EARLY_MIN_WORDS = 2;
export const EARLY_STABLE_AUDIO_MS = 200;

export interface RecognizerHypothesis {
  text: string;
  /** The utterance's audio as written to the recognizer (preroll included, to the VAD's end), ms. */
  utteranceMs: number;
  /** Audio the recognizer had decoded, ms. */
  decodedMs: number;
  /** Audio over which the hypothesis has not changed, ms. */
  stableMs: number;
}

export function isSettled(h: RecognizerHypothesis, rule = { minWords: EARLY_MIN_WORDS, stableAudioMs: EARLY_STABLE_AUDIO_MS }): boolean {
  const words = h.text.trim().split(/\s+/).filter(Boolean).length;
  // One frame of slack: the VAD's bounds and the decoder's sample count round differently.
  const caughtUp = h.decodedMs + FRAME_MS >= h.utteranceMs;
  return words >= rule.minWords && caughtUp && h.stableMs >= rule.stableAudioMs;
}

/** Where the listener hands the customer's turns (the live session wires them to the agent runtime). */
export interface CustomerTurnSink {
  /** A customer final to answer. */
  final(text: string): void;
  /** A settled hypothesis to answer before its final; false when the agent will not answer early. */
  early(text: string): boolean;
  /** The final of the utterance answered early (null: the utterance ended without one). */
  settle(finalText: string | null): void;
}

export class AgentListener extends FrameProcessor {
  /** Utterances answered early and awaiting their final, by start on the timeline. */
  private readonly answered = new Set<number>();

  /** `earlyPartial` off: every turn waits for the recognizer's final. */
  constructor(
    private readonly turns: CustomerTurnSink,
    private readonly earlyPartial = true,
  ) {
    super();
  }

  process(frame: Frame): void {
    if (frame.kind === 'transcript_progress') {
      // Turn-taking only: it ends here.
      if (frame.party === 'customer') this.onHypothesis(frame);
      return;
    }
    this.push(frame);
    if (!('party' in frame) || frame.party !== 'customer') return;
    if (frame.kind === 'transcript_none') {
      if (this.answered.delete(frame.startMs)) this.turns.settle(null);
    } else if (frame.kind === 'transcript_final') {
      if (this.answered.delete(frame.startMs)) this.turns.settle(frame.text);
      else this.turns.final(frame.text);
    }
  }

  private onHypothesis(h: TranscriptProgressFrame): void {
    if (!this.earlyPartial) return;
    const settled = isSettled({ text: h.text, utteranceMs: h.writtenMs, decodedMs: h.decodedMs, stableMs: h.stableMs });
    if (settled && this.turns.early(h.text)) this.answered.add(h.startMs);
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
