// Real-time output pacing: audio for a party (TTS of any length, bridged frames) is queued in 20 ms
// frames and released one frame per party per tick of the shared media clock, as `playout` frames.
// The pacer listens to the clock only while something is queued, so idle sessions cost nothing.
import { FRAME_MS, FRAME_SAMPLES, PARTIES, type Party, type PcmFrame } from '../contracts.js';
import type { Frame } from '../frames.js';
import type { TickSource } from '../media-clock.js';
import { FrameProcessor } from './processor.js';

/** Most audio queued per listener (30 s); older frames are dropped beyond it so memory stays bounded. */
export const MAX_QUEUED_FRAMES = 1500;

/**
 * Most live (bridged) audio queued for a listener: 300 ms. A client sending 100-200 ms chunks fills
 * the queue in bursts; beyond this the oldest frames go, so a stall or a client sending faster than
 * real time cannot add latency to the bridge for good (what a jitter buffer does on a phone line).
 */
export const MAX_LIVE_BACKLOG_FRAMES = 15;

interface Queued {
  speaker: string;
  pcm: PcmFrame;
}

class FrameQueue {
  private items: Queued[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(q: Queued): void {
    this.items.push(q);
    if (this.length > MAX_QUEUED_FRAMES) this.head++;
  }

  shift(): Queued | undefined {
    if (this.head >= this.items.length) return undefined;
    const q = this.items[this.head++];
    if (this.head > 256 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return q;
  }

  /** Drops the oldest frames until at most `n` are queued. */
  trimTo(n: number): void {
    if (this.length > n) this.head = this.items.length - n;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

export class OutputPacer extends FrameProcessor {
  private readonly queues = new Map<Party, FrameQueue>();
  private unsubscribe: (() => void) | null = null;
  private firstTick = -1;

  constructor(private readonly clock: TickSource) {
    super();
    for (const p of PARTIES) this.queues.set(p, new FrameQueue());
  }

  /** Frames waiting for `party`. */
  queued(party: Party): number {
    return this.queues.get(party)!.length;
  }

  process(frame: Frame): void {
    switch (frame.kind) {
      case 'tts_audio': {
        const q = this.queues.get(frame.to)!;
        const pcm = frame.pcm;
        for (let off = 0; off < pcm.length; off += FRAME_SAMPLES) {
          let f = pcm.subarray(off, off + FRAME_SAMPLES);
          if (f.length < FRAME_SAMPLES) {
            const padded = new Int16Array(FRAME_SAMPLES);
            padded.set(f);
            f = padded;
          }
          q.push({ speaker: frame.speaker, pcm: f });
        }
        this.start();
        return;
      }
      case 'output_audio': {
        const q = this.queues.get(frame.to)!;
        q.push({ speaker: frame.speaker, pcm: frame.pcm });
        q.trimTo(MAX_LIVE_BACKLOG_FRAMES);
        this.start();
        return;
      }
      case 'interruption':
        this.queues.get(frame.party)!.clear();
        this.push(frame);
        return;
      default:
        this.push(frame);
    }
  }

  private start(): void {
    if (this.unsubscribe || this.closed) return;
    this.unsubscribe = this.clock.subscribe(this.onTick);
  }

  private readonly onTick = (tick: number): void => {
    if (this.firstTick < 0) this.firstTick = tick;
    let pending = 0;
    for (const [to, q] of this.queues) {
      const item = q.shift();
      if (item) this.push({ kind: 'playout', to, speaker: item.speaker, pcm: item.pcm, timestampMs: (tick - this.firstTick) * FRAME_MS });
      pending += q.length;
    }
    if (pending === 0) this.stop();
  };

  private stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    this.stop();
    for (const q of this.queues.values()) q.clear();
  }
}
