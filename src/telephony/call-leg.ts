// A phone leg bridged into a session: one SIP dialog, one RTP endpoint and, when rtpengine anchors
// media, its call in rtpengine. Implements the pipeline's PartyLeg: `playFrame` sends to the phone,
// decoded frames from the phone go to the sink given to `onAudio`.
import { SafeEmitter } from '../events/index.js';
import type { Party, PartyLeg, PcmFrame } from '../sessions/index.js';
import type { Dialog, ModifyRequest } from './sip/dialog.js';
import type { RtpEndpoint } from './rtp/endpoint.js';
import type { CallQuality } from './rtp/call-quality.js';
import type { MediaAnchor } from './media-anchor.js';
import { answerOffer, type NegotiatedMedia } from './sdp/sdp.js';

export type LegEndReason = 'remote_hangup' | 'local_hangup' | 'rtp_timeout' | 'session_ended' | 'shutdown' | 'ack_timeout' | (string & {});

export interface SipLegEvents {
  /** The first RTP packet arrived (the session becomes active with the first audio). */
  media: [];
  dtmf: [string];
  hold: [boolean];
  ended: [{ reason: LegEndReason; durationSeconds: number }];
}

export interface SipLegInit {
  id: string;
  sessionId: string;
  orgId: string;
  party: Party;
  direction: 'inbound' | 'outbound';
  provider: string;
  from: string;
  to: string;
  dialog: Dialog;
  endpoint: RtpEndpoint;
  media: NegotiatedMedia;
  advertisedAddress: string;
  anchor: { server: MediaAnchor; callId: string; fromTag: string } | null;
}

export function endpointConfig(m: NegotiatedMedia): Parameters<RtpEndpoint['configure']>[0] {
  const zero = m.remoteAddress === '0.0.0.0';
  return {
    address: m.remoteAddress,
    port: m.remotePort,
    payloadType: m.codec.payloadType,
    dtmfPayloadType: m.dtmfPayloadType,
    send: !zero && (m.remoteDirection === 'sendrecv' || m.remoteDirection === 'recvonly'),
    expectReceive: !zero && (m.remoteDirection === 'sendrecv' || m.remoteDirection === 'sendonly'),
    rtcpMux: m.rtcpMux,
  };
}

export class SipLeg extends SafeEmitter<SipLegEvents> implements PartyLeg {
  readonly kind = 'sip' as const;
  readonly id: string;
  readonly party: Party;
  readonly sessionId: string;
  readonly orgId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly provider: string;
  readonly from: string;
  readonly to: string;
  readonly dialog: Dialog;
  private readonly endpoint: RtpEndpoint;
  private readonly anchor: SipLegInit['anchor'];
  private readonly advertisedAddress: string;
  private sdpVersion = 2;
  private negotiated: NegotiatedMedia;
  private onHold = false;
  private ended = false;
  private gotMedia = false;
  /** Media counters captured at hangup (logged with the call's end). */
  finalStats: { rtp: RtpEndpoint['stats']; jitter: RtpEndpoint['jitter']['stats']; quality: CallQuality } | null = null;

  constructor(init: SipLegInit) {
    super();
    this.id = init.id;
    this.party = init.party;
    this.sessionId = init.sessionId;
    this.orgId = init.orgId;
    this.direction = init.direction;
    this.provider = init.provider;
    this.from = init.from;
    this.to = init.to;
    this.dialog = init.dialog;
    this.endpoint = init.endpoint;
    this.anchor = init.anchor;
    this.advertisedAddress = init.advertisedAddress;
    this.negotiated = init.media;
    this.endpoint.configure(endpointConfig(init.media));
    this.onHold = init.media.onHold;
    this.endpoint.on('latched', () => {
      if (!this.gotMedia) {
        this.gotMedia = true;
        this.safeEmit('media');
      }
    });
    this.endpoint.on('dtmf', (d) => this.safeEmit('dtmf', d.digit));
    this.endpoint.on('timeout', () => this.close('rtp_timeout'));
    this.dialog.on('destroy', (d) => this.finish(d.reason));
    this.dialog.on('modify', (m) => void this.onModify(m));
  }

  get callSid(): string {
    return this.dialog.callId;
  }

  get connectedAt(): Date {
    return this.dialog.connectedAt;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get held(): boolean {
    return this.onHold;
  }

  /** The codec our endpoint speaks on this leg (PCMU whenever rtpengine anchors media). */
  get codec(): 'PCMU' | 'PCMA' {
    return this.negotiated.codec.name;
  }

  /** Our RTP port (the gateway side of the media path). */
  get rtpPort(): number {
    return this.endpoint.port;
  }

  get rtpStats(): RtpEndpoint['stats'] {
    return this.endpoint.stats;
  }

  /** RTP/RTCP call quality of this leg (packets, loss, jitter, round trip, MOS; see rtp/call-quality.ts). */
  get callQuality(): CallQuality {
    return this.finalStats?.quality ?? this.endpoint.callQuality;
  }

  /** Receive-side quality: jitter buffer counters (concealed, dropped, late, underruns, target). */
  get jitterStats(): RtpEndpoint['jitter']['stats'] {
    return this.endpoint.jitter.stats;
  }

  /** Decoded 20 ms frames from the phone go straight to `sink` (ownership passes): no event hop per frame. */
  onAudio(sink: ((frame: PcmFrame) => void) | null): void {
    this.endpoint.onFrames(sink);
  }

  playFrame(frame: PcmFrame): void {
    if (!this.ended) this.endpoint.playFrame(frame);
  }

  /** Drops audio queued for the phone (barge-in). */
  clearOutput(): void {
    this.endpoint.clearOutput();
  }

  sendDigit(digit: string): void {
    this.endpoint.sendDigit(digit);
  }

  /** Hangs up with BYE; idempotent. */
  close(reason: string): void {
    if (this.ended) return;
    void this.dialog.bye(reason);
    this.finish(reason);
  }

  /** re-INVITE from the far end: hold, unhold, new address, or a plain refresh; media keeps flowing. */
  private async onModify(m: ModifyRequest): Promise<void> {
    if (!m.sdp) {
      m.respond(200, 'OK');
      return;
    }
    try {
      let offer = m.sdp;
      if (this.anchor) {
        const a = this.anchor;
        // The far end offers now, whichever side offered first: its tag is the from-tag for rtpengine.
        offer = await a.server.offerFromPeer(a.callId, this.dialog.remoteTag, offer);
      }
      const { sdp, media } = answerOffer(offer, {
        address: this.advertisedAddress,
        port: this.endpoint.port,
        sessionId: this.id.replace(/\D/g, '').slice(0, 12) || '1',
        sessionVersion: this.sdpVersion++,
      });
      let answer = sdp;
      if (this.anchor) {
        const a = this.anchor;
        answer = await a.server.answerFromGateway(a.callId, this.dialog.remoteTag, this.dialog.localTag, answer);
      }
      this.endpoint.configure(endpointConfig(media));
      this.negotiated = media;
      m.respond(200, 'OK', answer);
      if (media.onHold !== this.onHold) {
        this.onHold = media.onHold;
        this.safeEmit('hold', this.onHold);
      }
    } catch {
      m.respond(488, 'Not Acceptable Here');
    }
  }

  private finish(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.endpoint.close();
    if (this.anchor) void this.anchor.server.delete(this.anchor.callId, this.anchor.fromTag);
    const durationSeconds = Math.round((Date.now() - this.dialog.connectedAt.getTime()) / 100) / 10;
    this.finalStats = { rtp: { ...this.endpoint.stats }, jitter: { ...this.endpoint.jitter.stats }, quality: this.endpoint.callQuality };
    this.safeEmit('ended', { reason, durationSeconds });
    this.removeAllListeners();
  }
}
