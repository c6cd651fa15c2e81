// Assistive translation: the agent hears the customer's own voice (SPEC "Modes": "the agent hears
// the original"). Each customer frame is also queued, unchanged, as output to the agent.
import type { Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export const ORIGINAL_SPEAKER_LABEL = (p: Party): string => `${p}_original`;

export class BridgeProcessor extends FrameProcessor {
  constructor(
    private readonly from: Party,
    private readonly to: Party,
  ) {
    super();
  }

  process(frame: Frame): void {
    if (frame.kind === 'audio' && frame.party === this.from) {
      this.push({ kind: 'output_audio', to: this.to, speaker: ORIGINAL_SPEAKER_LABEL(this.from), pcm: frame.pcm });
    }
    this.push(frame);
  }
}
