// Assistive translation: the agent hears the customer's own voice (SPEC "Modes": "the agent hears
// the original"). Each customer frame is also queued, unchanged, as output to the agent.
import type { Party } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

// Made once: the label is read for every bridged frame (a template would build a new string each time).
const ORIGINAL_LABELS: Record<Party, string> = { agent: 'agent_original', customer: 'customer_original' };
export const ORIGINAL_SPEAKER_LABEL = (p: Party): string => ORIGINAL_LABELS[p];

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
