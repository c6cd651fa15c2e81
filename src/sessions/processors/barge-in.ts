// Barge-in for the agent modes: the customer talking over the agent stops the agent's audio. To
// keep coughs, line noise and a short "mm-hm" from cutting the agent off, the interruption is sent
// only after `minSpeechMs` of voiced customer audio in one utterance (VAD), while the agent is
// speaking (default 400 ms). A frame counts as voiced when it is within 15 dB of the utterance's
// onset level (the VAD's hangover silence does not count). The interruption frame then jumps ahead: the pacer drops the queued agent
// audio at once, so on the socket and on RTP the agent falls silent at the next 20 ms tick.
import { frameLevelDb } from '../../media/index.js';
import { FRAME_MS } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export const DEFAULT_BARGE_IN_MIN_SPEECH_MS = 400;

export interface BargeInOptions {
  /** Whether the agent is audible right now (its audio is queued or playing). */
  agentSpeaking(): boolean;
  minSpeechMs?: number;
  /** Told when an interruption is sent (metrics, benchmarks). */
  onInterrupt?(): void;
}

export class AgentBargeInProcessor extends FrameProcessor {
  private inSpeech = false;
  private speechFrames = 0;
  private fired = false;
  private voicedFloorDb = -50;
  private readonly minFrames: number;

  constructor(private readonly opts: BargeInOptions) {
    super();
    this.minFrames = Math.max(1, Math.round((opts.minSpeechMs ?? DEFAULT_BARGE_IN_MIN_SPEECH_MS) / FRAME_MS));
  }

  process(frame: Frame): void {
    if (frame.kind === 'vad_start' && frame.party === 'customer') {
      this.inSpeech = true;
      this.fired = false;
      const onset = frame.preroll[frame.preroll.length - 1];
      this.voicedFloorDb = onset ? Math.max(-50, frameLevelDb(onset) - 15) : -50;
      this.speechFrames = onset ? 1 : 0;
    } else if (frame.kind === 'vad_end' && frame.party === 'customer') {
      this.inSpeech = false;
    } else if (frame.kind === 'audio' && frame.party === 'customer' && this.inSpeech && !this.fired) {
      if (frameLevelDb(frame.pcm) >= this.voicedFloorDb) this.speechFrames++;
      if (this.speechFrames >= this.minFrames && this.opts.agentSpeaking()) {
        this.fired = true;
        this.push({ kind: 'interruption', party: 'customer' });
        this.opts.onInterrupt?.();
      }
    }
    this.push(frame);
  }
}
