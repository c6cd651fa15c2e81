// The RTCP side of one RTP endpoint (RFC 3550 §6): a compound SR (we send) or RR plus CNAME every
// interval, a BYE at the end; incoming SR/RR feed the leg's quality (round trip, the peer's view).
// Transport: on the RTP port when rtcp-mux was negotiated (RFC 5761), else on RTP port + 1 (§11),
// answering to where the peer's RTCP comes from once it has sent some (symmetric, NAT-friendly).
import { performance } from 'node:perf_hooks';
import type { MediaSocket } from './socket-protocol.js';
import { buildBye, buildReport, ntpMiddle, ntpNow, parseRtcp } from './rtcp.js';
import type { LegQuality } from './call-quality.js';

export interface RtcpSenderState {
  ssrc: number;
  packetsSent: number;
  octetsSent: number;
  rtpTimestamp: number;
}

export class RtcpSession {
  private peerRtcp: { address: string; port: number } | null = null;

  constructor(
    private readonly quality: LegQuality,
    private readonly cname: string,
    /** The socket RTCP goes out on without mux (null: port + 1 could not be bound). */
    private readonly rtcpSocket: MediaSocket | null,
    private readonly rtpSocket: MediaSocket,
  ) {}

  /**
   * An RTCP packet from `address:port` (already checked against the latched source's address) that
   * arrived at `arrivedAt` (performance.now() time: the kernel's arrival time where the socket has it).
   * The round trip and the DLSR we report count from its arrival, not from when a tick read it: a
   * batched socket is read once per tick (RTCP's only every few ticks), which would add that wait.
   */
  receive(buf: Uint8Array, address: string, port: number, viaMux: boolean, ownSsrc: number, arrivedAt: number): boolean {
    const parsed = parseRtcp(buf);
    if (!parsed) return false;
    this.quality.rtcpReceived++;
    if (!viaMux) this.peerRtcp = { address, port };
    const nowMs = Date.now() - Math.max(0, performance.now() - arrivedAt);
    const now = ntpNow(nowMs);
    for (const r of parsed.reports) {
      if (r.sender) this.quality.onSenderReport(r.sender, nowMs);
      for (const b of r.blocks) if (b.ssrc === ownSsrc >>> 0) this.quality.onReportAboutUs(b, ntpMiddle(now.sec, now.frac));
    }
    return true;
  }

  /** Sends our report; `rtp` is where RTP goes (the latched or signalled source). */
  sendReport(state: RtcpSenderState, rtp: { address: string; port: number }, mux: boolean): void {
    const nowMs = Date.now();
    const ntp = ntpNow(nowMs);
    const sender =
      state.packetsSent > 0
        ? { ntpSec: ntp.sec, ntpFrac: ntp.frac, rtpTimestamp: state.rtpTimestamp, packetCount: state.packetsSent, octetCount: state.octetsSent }
        : null;
    if (sender) this.quality.onSentSenderReport(ntpMiddle(ntp.sec, ntp.frac));
    const buf = buildReport(state.ssrc, sender, this.quality.reportBlock(nowMs), this.cname);
    this.transmit(buf, rtp, mux);
  }

  /** Whether any RTCP packet of ours went out. */
  get sentAny(): boolean {
    return this.quality.rtcpSent > 0;
  }

  /** Sends a BYE; `sent` runs once it left (or could not be sent), so the caller closes sockets after. */
  sendBye(ssrc: number, rtp: { address: string; port: number }, mux: boolean, sent: () => void): void {
    if (!this.transmit(buildBye(ssrc), rtp, mux, sent)) sent();
  }

  private transmit(buf: Buffer, rtp: { address: string; port: number }, mux: boolean, sent?: () => void): boolean {
    this.quality.mux = mux;
    try {
      if (mux) {
        this.rtpSocket.send(buf, rtp.port, rtp.address, sent);
      } else if (this.rtcpSocket) {
        const to = this.peerRtcp ?? { address: rtp.address, port: rtp.port + 1 };
        this.rtcpSocket.send(buf, to.port, to.address, sent);
      } else {
        return false;
      }
      this.quality.rtcpSent++;
      return true;
    } catch {
      // a socket closing under us: RTCP is best effort
      return false;
    }
  }
}
