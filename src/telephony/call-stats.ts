// Counters of the SIP front for /metrics: call outcomes by direction and result, and media
// counters (loss, concealment, jitter) summed over ended legs plus the live ones.
import { playoutMoves, type TickSource } from '../media/index.js';
import type { SipLeg } from './call-leg.js';
import { addLegQuality, finishQualitySummary } from './rtp/call-quality.js';

type MediaTotals = {
  packetsIn: number;
  packetsOut: number;
  ignoredSource: number;
  concealed: number;
  dropped: number;
  silenceTrimmed: number;
  late: number;
  underruns: number;
  played: number;
};

export class CallStats {
  /** Call outcomes since start, keyed "direction:result". */
  readonly callCounts: Record<string, number> = {};
  /** Media counters of legs that have ended (live legs are added by mediaStats). */
  private readonly endedMedia: MediaTotals = {
    packetsIn: 0,
    packetsOut: 0,
    ignoredSource: 0,
    concealed: 0,
    dropped: 0,
    silenceTrimmed: 0,
    late: 0,
    underruns: 0,
    played: 0,
  };

  constructor(private readonly clock: TickSource) {}

  countCall(direction: 'inbound' | 'outbound', result: string): void {
    const key = `${direction}:${result}`;
    this.callCounts[key] = (this.callCounts[key] ?? 0) + 1;
  }

  /** Folds an ended leg's final counters into the totals. */
  addEnded(leg: SipLeg): void {
    const fin = leg.finalStats;
    if (!fin) return;
    const m = this.endedMedia;
    m.packetsIn += fin.rtp.packetsIn;
    m.packetsOut += fin.rtp.packetsOut;
    m.ignoredSource += fin.rtp.ignoredSource;
    m.concealed += fin.jitter.concealed;
    m.dropped += fin.jitter.dropped;
    m.silenceTrimmed += fin.jitter.silenceTrimmed;
    m.late += fin.jitter.late;
    m.underruns += fin.jitter.underruns;
    m.played += fin.jitter.played;
  }

  /** Media counters: live legs (legs, maxTargetFrames, maxJitterMs) and totals since start (the rest). */
  mediaStats(live: Iterable<SipLeg>): Record<string, number> {
    const sum: MediaTotals & {
      clockLateTicks: number;
      clockDeferredRuns: number;
      clockRuns: number;
      clockLateRuns: number;
      playoutMovesLater: number;
      playoutMovesEarlier: number;
      legs: number;
      maxTargetFrames: number;
      maxJitterMs: number;
    } = {
      ...this.endedMedia,
      clockLateTicks: (this.clock as { lateTicks?: number }).lateTicks ?? 0,
      clockDeferredRuns: (this.clock as { deferredRuns?: number }).deferredRuns ?? 0,
      clockRuns: (this.clock as { runs?: number }).runs ?? 0,
      clockLateRuns: (this.clock as { lateRuns?: number }).lateRuns ?? 0,
      playoutMovesLater: playoutMoves.later,
      playoutMovesEarlier: playoutMoves.earlier,
      legs: 0,
      maxTargetFrames: 0,
      maxJitterMs: 0,
    };
    for (const leg of live) {
      const r = leg.rtpStats;
      const j = leg.jitterStats;
      sum.legs++;
      sum.packetsIn += r.packetsIn;
      sum.packetsOut += r.packetsOut;
      sum.ignoredSource += r.ignoredSource;
      sum.concealed += j.concealed;
      sum.dropped += j.dropped;
      sum.silenceTrimmed += j.silenceTrimmed;
      sum.late += j.late;
      sum.underruns += j.underruns;
      sum.played += j.played;
      sum.maxTargetFrames = Math.max(sum.maxTargetFrames, j.targetFrames);
      sum.maxJitterMs = Math.max(sum.maxJitterMs, Math.round(j.jitterMs * 10) / 10);
      addLegQuality(sum, leg.callQuality, j);
    }
    return finishQualitySummary(sum);
  }
}
