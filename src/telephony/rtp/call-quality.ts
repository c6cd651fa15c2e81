// Per-leg call quality from RTP and RTCP: RFC 3550 receive statistics (§A.1 sequence tracking,
// §A.3 loss, §A.8 interarrival jitter), round trip from the peer's reports (§6.4.1 LSR/DLSR), and a
// MOS estimate from the simplified E-model (ITU-T G.107).
import { ntpMiddle, type ReportBlock, type SenderInfo } from './rtcp.js';

const CLOCK_RATE = 8000;
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;

/** What the API, the disconnected event, the hang-up log and /metrics show per leg. */
export interface CallQuality {
  packets_sent: number;
  packets_received: number;
  /** Packets we expected from the peer but never got (RFC 3550 §A.3), ≥ 0. */
  packets_lost: number;
  loss_percent: number;
  /** Interarrival jitter of what we receive, ms (§A.8). */
  jitter_ms: number;
  /** Round trip from the peer's RTCP reports (§6.4.1); null until the peer reported on our SR. */
  rtt_ms: number | null;
  /** What the peer reports about our stream (its last report block on our SSRC); null without RTCP from it. */
  remote: { loss_percent: number; jitter_ms: number } | null;
  /** Mean opinion score estimate 1..4.5 (G.107 simplified E-model, G.711: Ie 0). */
  mos: number;
  rtcp: { sent: number; received: number; mux: boolean };
}

/**
 * Simplified E-model (ITU-T G.107 §7 with G.113 Appendix I values for G.711): R = 93.2 − Id − Ie,eff,
 * Id from the one-way delay, Ie,eff = Ie + (95 − Ie)·Ppl/(Ppl + Bpl); Bpl 4.3 (G.711 without a
 * standard PLC: our concealment only repeats and fades). MOS from R per G.107 Annex B.
 */
export function estimateMos(lossPercent: number, oneWayDelayMs: number): number {
  const d = Math.max(0, oneWayDelayMs);
  const id = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0);
  const ppl = Math.max(0, Math.min(100, lossPercent));
  const ie = 0;
  const bpl = 4.3;
  const ieEff = ie + ((95 - ie) * ppl) / (ppl + bpl);
  const r = Math.max(0, Math.min(100, 93.2 - id - ieEff));
  const mos = r <= 0 ? 1 : 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
  return Math.round(Math.max(1, Math.min(4.5, mos)) * 100) / 100;
}

export class LegQuality {
  private baseSeq = -1;
  private maxSeq = 0;
  private cycles = 0;
  private badSeq = -1;
  private received = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  private jitterTs = 0;
  private prevTransit = NaN;
  private remoteSsrc = -1;
  private lastSrMiddle = 0;
  private lastSrAt = 0;
  private lastSentSrMiddle = 0;
  private rttMs: number | null = null;
  private remoteView: CallQuality['remote'] = null;
  rtcpSent = 0;
  rtcpReceived = 0;
  mux = false;

  /** One RTP packet (audio or DTMF) from the latched source. */
  onRtp(ssrc: number, seq: number, timestamp: number, arrivalMs: number): void {
    if (ssrc !== this.remoteSsrc) {
      this.remoteSsrc = ssrc;
      this.baseSeq = -1;
      this.prevTransit = NaN;
    }
    if (this.baseSeq < 0) {
      this.initSequence(seq);
    } else {
      // RFC 3550 §A.1, without the probation: a forward step in range advances max_seq (counting the
      // wrap), a large jump is accepted once confirmed by the next packet.
      const delta = (seq - this.maxSeq) & 0xffff;
      if (delta < MAX_DROPOUT) {
        if (seq < this.maxSeq) this.cycles += 0x10000;
        this.maxSeq = seq;
      } else if (delta <= 0x10000 - MAX_MISORDER) {
        if (seq === this.badSeq) {
          this.initSequence(seq);
        } else {
          this.badSeq = (seq + 1) & 0xffff;
          return;
        }
      }
    }
    this.received++;
    // §A.8: J += (|D| − J)/16 in timestamp units.
    const transit = (arrivalMs * CLOCK_RATE) / 1000 - timestamp;
    if (!Number.isNaN(this.prevTransit)) {
      let d = Math.abs(transit - this.prevTransit);
      if (d > 0x80000000) d = 0x100000000 - d; // timestamp wrap
      if (d < CLOCK_RATE * 10) this.jitterTs += (d - this.jitterTs) / 16;
    }
    this.prevTransit = transit;
  }

  /** RFC 3550 §A.1 init_seq: (re)starts the sequence accounting at `seq`. */
  private initSequence(seq: number): void {
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.cycles = 0;
    this.received = 0;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
  }

  private get extendedMax(): number {
    return this.cycles + this.maxSeq;
  }

  private get expected(): number {
    return this.baseSeq < 0 ? 0 : this.extendedMax - this.baseSeq + 1;
  }

  get lost(): number {
    return Math.max(0, this.expected - this.received);
  }

  /** An SR from the peer: remembered for LSR/DLSR in our next report (§6.4.1). */
  onSenderReport(sender: SenderInfo, arrivalMs: number): void {
    this.lastSrMiddle = ntpMiddle(sender.ntpSec, sender.ntpFrac);
    this.lastSrAt = arrivalMs;
  }

  /** We sent an SR whose NTP timestamp had these middle bits. */
  onSentSenderReport(middle: number): void {
    this.lastSentSrMiddle = middle;
  }

  /** The peer's report block about our stream: its view of loss and jitter, and the round trip. */
  onReportAboutUs(block: ReportBlock, nowNtpMiddle: number): void {
    const fraction = block.fractionLost / 256;
    this.remoteView = { loss_percent: Math.round(fraction * 10000) / 100, jitter_ms: Math.round((block.jitter / CLOCK_RATE) * 10000) / 10 };
    if (block.lastSr !== 0 && block.lastSr === this.lastSentSrMiddle) {
      // RTT = A − LSR − DLSR, all in 1/65536 s (§6.4.1), taken as signed: our timestamps come from a
      // millisecond clock, so a round trip under a millisecond can come out just below zero (it is 0).
      const rtt = ((nowNtpMiddle - block.lastSr - block.delaySinceLastSr) | 0) / 65536;
      if (rtt > -0.01 && rtt < 60) this.rttMs = Math.max(0, Math.round(rtt * 10000) / 10);
    }
  }

  /** A report block about the peer's stream for our next SR/RR; null before any packet. */
  reportBlock(nowMs: number): ReportBlock | null {
    if (this.baseSeq < 0) return null;
    const expected = this.expected;
    const expectedInterval = expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost = expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval << 8) / expectedInterval);
    return {
      ssrc: this.remoteSsrc >>> 0,
      fractionLost,
      cumulativeLost: expected - this.received,
      extendedHighestSeq: this.extendedMax >>> 0,
      jitter: this.jitterTs,
      lastSr: this.lastSrMiddle,
      // Never below zero: the SR's arrival time is finer than the millisecond clock read now.
      delaySinceLastSr: this.lastSrMiddle === 0 ? 0 : Math.max(0, Math.floor(((nowMs - this.lastSrAt) / 1000) * 65536)),
    };
  }

  /** The leg's figures now; `bufferDelayMs` is our jitter buffer's depth (part of the one-way delay). */
  snapshot(packetsSent: number, bufferDelayMs: number): CallQuality {
    const expected = this.expected;
    const lossPercent = expected > 0 ? Math.round((this.lost / expected) * 10000) / 100 : 0;
    const jitterMs = Math.round((this.jitterTs / CLOCK_RATE) * 10000) / 10;
    // One-way delay: half the round trip when known, plus our buffering and the jitter it absorbs.
    const oneWay = (this.rttMs ?? 0) / 2 + bufferDelayMs;
    const worstLoss = Math.max(lossPercent, this.remoteView?.loss_percent ?? 0);
    return {
      packets_sent: packetsSent,
      packets_received: this.received,
      packets_lost: this.lost,
      loss_percent: lossPercent,
      jitter_ms: jitterMs,
      rtt_ms: this.rttMs,
      remote: this.remoteView,
      mos: estimateMos(worstLoss, oneWay),
      rtcp: { sent: this.rtcpSent, received: this.rtcpReceived, mux: this.mux },
    };
  }
}

/**
 * Adds one live leg to a media summary (telephony mediaStats → /metrics): sums that
 * finishQualitySummary turns into averages over live legs (mosAvg, lossPercentAvg, jitterMsAvg,
 * rttMsAvg, jitterDepthFramesAvg, jitterTargetFramesAvg) plus RTCP packet totals.
 */
export function addLegQuality(sum: Record<string, number>, q: CallQuality, jitter: { targetFrames: number; depthFrames: number }): void {
  sum.qualityLegs = (sum.qualityLegs ?? 0) + 1;
  sum.mosAvg = (sum.mosAvg ?? 0) + q.mos;
  sum.lossPercentAvg = (sum.lossPercentAvg ?? 0) + q.loss_percent;
  sum.jitterMsAvg = (sum.jitterMsAvg ?? 0) + q.jitter_ms;
  if (q.rtt_ms !== null) {
    sum.rttLegs = (sum.rttLegs ?? 0) + 1;
    sum.rttMsAvg = (sum.rttMsAvg ?? 0) + q.rtt_ms;
  }
  sum.jitterTargetFramesAvg = (sum.jitterTargetFramesAvg ?? 0) + jitter.targetFrames;
  sum.jitterDepthFramesAvg = (sum.jitterDepthFramesAvg ?? 0) + jitter.depthFrames;
  sum.rtcpIn = (sum.rtcpIn ?? 0) + q.rtcp.received;
  sum.rtcpOut = (sum.rtcpOut ?? 0) + q.rtcp.sent;
}

export function finishQualitySummary(sum: Record<string, number>): Record<string, number> {
  const n = sum.qualityLegs ?? 0;
  for (const k of ['mosAvg', 'lossPercentAvg', 'jitterMsAvg', 'jitterTargetFramesAvg', 'jitterDepthFramesAvg']) {
    const v = sum[k];
    if (v !== undefined) sum[k] = n > 0 ? Math.round((v / n) * 100) / 100 : 0;
  }
  if ('rttMsAvg' in sum) sum.rttMsAvg = Math.round((sum.rttMsAvg / Math.max(1, sum.rttLegs ?? 0)) * 10) / 10;
  return sum;
}
