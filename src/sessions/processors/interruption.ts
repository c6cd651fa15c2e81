// Barge-in (pipecat's interruption frame): when a party starts speaking, audio still queued for
// that party is dropped. The interruption frame is sent ahead of the vad_start that caused it.
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export class InterruptionProcessor extends FrameProcessor {
  process(frame: Frame): void {
    if (frame.kind === 'vad_start') this.push({ kind: 'interruption', party: frame.party });
    this.push(frame);
  }
}
