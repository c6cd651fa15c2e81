// Real-time output pacing: audio for a party (TTS of any length, bridged frames) is queued in 20 ms
// frames and released one frame per party per tick of the shared media clock, as `playout` frames.
// The pacer listens to the clock while something is queued and for a second after (IDLE_TICKS), so idle
// sessions cost nothing and a bridged call, whose queue empties every tick, does not join and leave
// the clock 50 times a second.
//
// Live (bridged) audio has its own converging queue (media/LiveQueue): it arrives already paced by
// another clock (a leg's jitter buffer) or in 100-200 ms chunks from a socket client, and a plain
// FIFO between two clocks keeps whatever depth start-up left it with. Its margin against late frames
// adapts (LiveQueue): none while frames arrive in time (a leg playing out in the same tick, a steady
// socket client: a socket frame then waits only for the next tick), one frame after an underrun, more
// if underruns repeat, back down after a steady spell. TTS audio is
// queued in full (it is produced faster than real time on purpose). When both are due for one
// listener in the same tick they are mixed.
import { performance } from 'node:perf_hooks';
import { LiveQueue, emptyLiveQueueStats, frameEnergy, mixFrames, observeStage, type LiveQueueStats } from '../../media/index.js';
import { FRAME_MS, FRAME_SAMPLES, PARTIES, type Party, type PcmFrame } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FollowingPhase, type TickSource } from '../media-clock.js';
import { FrameProcessor } from './processor.js';

/** Most audio queued per listener (30 s); older frames are dropped beyond it so memory stays bounded. */
export const MAX_QUEUED_FRAMES = 1500;

/**
 * Hard cap on live (bridged) audio queued for a listener: 300 ms, the oldest go beyond it. Below the
 * cap the live queue converges to its margin of standing backlog (see LiveQueue).
 */
export const MAX_LIVE_BACKLOG_FRAMES = 15;
/** The live queue's margin against late frames where it starts, in frames. */
export const LIVE_START_MARGIN_FRAMES = 1;
/** The most that underruns repeating within 2 s raise it to, by default. */
export const LIVE_MAX_MARGIN_FRAMES = 4;
/** The smallest margin by default: none, while frames arrive in time. */
export const LIVE_MIN_MARGIN_FRAMES = 0;

/** Every pacer's live queues together since start (for /metrics). */
export const pacerLiveTotals: LiveQueueStats = emptyLiveQueueStats();

/** Ticks with nothing queued before the pacer leaves the clock (1 s). */
export const IDLE_TICKS = 50;

export interface OutputPacerOptions {
  /** The live queue's smallest margin, in frames (0 or 1; 1 keeps a frame of margin always). Default 0. */
  liveMinMarginFrames?: number;
  /** The largest margin repeated underruns raise it to, in frames. Default LIVE_MAX_MARGIN_FRAMES. */
  liveMaxMarginFrames?: number;
  /** The clock live frames are timed on, in ms (tests); default performance.now. */
  now?: () => number;
}

interface Queued {
  speaker: string;
  pcm: PcmFrame;
}

class FrameQueue {
  /** Passed slots are emptied at once, so played frames die young (see LiveQueue's items). */
  private items: (Queued | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(q: Queued): void {
    this.items.push(q);
    if (this.length > MAX_QUEUED_FRAMES) this.items[this.head++] = undefined;
  }

  shift(): Queued | undefined {
    if (this.head >= this.items.length) return undefined;
    const q = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 256 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return q;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/**
 * What waits for one listener: synthesized speech (queued in full) and live audio (converging). Each
 * lane is on the clock by itself, in the sub-tick its live frames were queued in (a clock with
 * sub-ticks): a bridged frame a leg played out leaves in that sub-tick, whichever the other lane's is.
 */
interface Lane {
  to: Party;
  synth: FrameQueue;
  live: LiveQueue<Queued>;
  phase: FollowingPhase;
  unsubscribe: (() => void) | null;
  idleTicks: number;
  /** The last playout's timestamp: kept increasing when a move of the lane's sub-tick repeats a tick. */
  lastTimestampMs: number;
  onTick: (tick: number) => void;
}

export class OutputPacer extends FrameProcessor {
  /** Per party, and the same lanes as a list for the tick (no Map iterator per pacer and tick). */
  private readonly lanes = {} as Record<Party, Lane>;
  private readonly laneList: Lane[];
  private firstTick = -1;
  private readonly now: () => number;

  constructor(
    private readonly clock: TickSource,
    o: OutputPacerOptions = {},
  ) {
    super();
    this.now = o.now ?? (() => performance.now());
    this.laneList = PARTIES.map((to) => {
      const live = new LiveQueue<Queued>((q) => frameEnergy(q.pcm), {
        // LiveQueue keeps the bounds either side of the start.
        targetFrames: LIVE_START_MARGIN_FRAMES,
        minTargetFrames: o.liveMinMarginFrames ?? LIVE_MIN_MARGIN_FRAMES,
        maxTargetFrames: o.liveMaxMarginFrames ?? LIVE_MAX_MARGIN_FRAMES,
        maxFrames: MAX_LIVE_BACKLOG_FRAMES,
        totals: pacerLiveTotals,
      });
      const lane: Lane = {
        to,
        synth: new FrameQueue(),
        live,
        phase: new FollowingPhase(),
        unsubscribe: null,
        idleTicks: 0,
        lastTimestampMs: -Infinity,
        onTick: (tick) => this.tickLane(lane, tick),
      };
      return (this.lanes[to] = lane);
    });
  }

  /** Frames waiting for `party` (synthesized and live). */
  queued(party: Party): number {
    const lane = this.lanes[party];
    return lane.synth.length + lane.live.length;
  }

  /** Live frames waiting for `party` (the converging queue). */
  liveQueued(party: Party): number {
    return this.lanes[party].live.length;
  }

  /** The live queue's margin for `party` now, in frames. */
  liveMargin(party: Party): number {
    return this.lanes[party].live.targetFrames;
  }

  /**
   * Live frames removed so far: by convergence (`trimmed`; of which `trimmedVoiced` above the silence
   * level, cut only when a window brought too little silence) and by the hard cap (`overflowed`); and
   * ticks a late frame left empty (`underruns`).
   */
  liveDrops(): LiveQueueStats {
    const sum = emptyLiveQueueStats();
    for (const { live } of this.laneList) for (const k of Object.keys(sum) as (keyof LiveQueueStats)[]) sum[k] += live.stats[k];
    return sum;
  }

  process(frame: Frame): void {
    switch (frame.kind) {
      case 'tts_audio': {
        const q = this.lanes[frame.to].synth;
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
        this.start(this.lanes[frame.to]);
        return;
      }
      case 'output_audio': {
        const lane = this.lanes[frame.to];
        lane.live.push({ speaker: frame.speaker, pcm: frame.pcm }, this.now());
        // Played out by a leg: released in its sub-tick from now on (a socket's frame, outside a tick, keeps the lane's).
        const source = this.clock.runningPhase;
        if (source) lane.phase.follow(source);
        this.start(lane);
        return;
      }
      case 'interruption':
        this.lanes[frame.party].synth.clear();
        this.lanes[frame.party].live.clear();
        this.push(frame);
        return;
      default:
        this.push(frame);
    }
  }

  private start(lane: Lane): void {
    lane.idleTicks = 0;
    if (lane.unsubscribe || this.closed) return;
    // The pacing phase runs after every leg's playout of the (sub-)tick, whenever this lane subscribed.
    lane.unsubscribe = (this.clock.subscribePace ?? this.clock.subscribe).call(this.clock, lane.onTick, lane.phase);
  }

  private tickLane(lane: Lane, tick: number): void {
    if (this.firstTick < 0) this.firstTick = tick;
    const { to, synth: q, live: lq } = lane;
    const synth = q.shift();
    const now = lq.length > 0 ? this.now() : NaN;
    const live = lq.shift(now);
    if (live) observeStage('pacer', now - lq.lastEnqueuedAt);
    lq.endTick();
    const item = synth && live ? { speaker: synth.speaker, pcm: mixFrames(synth.pcm, live.pcm) } : (synth ?? live);
    if (item) {
      const timestampMs = Math.max((tick - this.firstTick) * FRAME_MS, lane.lastTimestampMs + FRAME_MS);
      lane.lastTimestampMs = timestampMs;
      this.push({ kind: 'playout', to, speaker: item.speaker, pcm: item.pcm, timestampMs });
    }
    if (q.length + lq.length > 0) lane.idleTicks = 0;
    else if (++lane.idleTicks >= IDLE_TICKS) this.stopLane(lane);
  }

  private stopLane(lane: Lane): void {
    lane.unsubscribe?.();
    lane.unsubscribe = null;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    for (const lane of this.laneList) {
      this.stopLane(lane);
      lane.synth.clear();
      lane.live.clear();
    }
  }
}
