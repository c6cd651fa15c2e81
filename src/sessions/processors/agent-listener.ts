// Hands the customer's finals to the agent runtime (after they went on to be stored and sent), and,
// once a human has taken the call over, bridges the two parties' audio both ways (the agent steps out;
// the transcript keeps recording both).
import { otherParty } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export class AgentListener extends FrameProcessor {
  constructor(private readonly onCustomerFinal: (text: string) => void) {
    super();
  }

  process(frame: Frame): void {
    this.push(frame);
    if (frame.kind === 'transcript_final' && frame.party === 'customer') this.onCustomerFinal(frame.text);
  }
}

export class HandoffBridge extends FrameProcessor {
  /** Set once the human's leg is attached. */
  bridged = false;

  process(frame: Frame): void {
    if (this.bridged && frame.kind === 'audio') {
      this.push({ kind: 'output_audio', to: otherParty(frame.party), speaker: `${frame.party}_original`, pcm: frame.pcm });
    }
    this.push(frame);
  }
}
