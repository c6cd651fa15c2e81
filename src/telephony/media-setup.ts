// Media for one SIP leg being set up, either direction: the RTP endpoint, the rtpengine call when
// media is anchored, and the `calls` row. Whatever fails before the leg exists goes through one
// cleanup path, `release()`; once `leg()` has built the SipLeg, the leg owns them all.
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { TickSource } from '../media/index.js';
import { RtpEndpoint } from './rtp/endpoint.js';
import type { LatchingMode } from './rtp/source-latch.js';
import { answerOffer, buildSdp, DEFAULT_CODECS, DEFAULT_DTMF_PT, negotiate, parseSdp, type NegotiatedMedia } from './sdp/sdp.js';
import type { MediaAnchor } from './media-anchor.js';
import { SipLeg, type SipLegInit } from './call-leg.js';
import { wantsNativeRtpIo } from './rtp/native-io.js';

export interface MediaSetupDeps {
  sip: Config['sip'];
  db: Db;
  /** rtpengine, when it anchors media (config.rtpengine.ng). */
  anchor: MediaAnchor | null;
  clock: TickSource;
}

const PCMU = { payloadType: 0, name: 'PCMU' as const };

export class LegSetup {
  /** rtpengine keys a call by the tag of whoever offered first; set by the first anchored offer. */
  private anchorKey: { callId: string; tag: string } | null = null;
  private callRowId: string | null = null;
  private handedOver = false;
  private released = false;

  private constructor(
    private readonly d: MediaSetupDeps,
    readonly endpoint: RtpEndpoint,
  ) {}

  /** Opens the leg's RTP endpoint (the first resource; release() closes it); `latching` from the leg's connection. */
  static async open(d: MediaSetupDeps, latching?: LatchingMode): Promise<LegSetup> {
    const s = d.sip;
    const endpoint = await RtpEndpoint.open({
      bindAddress: s.host,
      portMin: s.rtpPortMin,
      portMax: s.rtpPortMax,
      timeoutMs: s.rtpTimeoutSeconds * 1000,
      clock: d.clock,
      socketWorkers: s.mediaWorkers ?? 0,
      nativeIo: wantsNativeRtpIo(s),
      connectSettled: s.mediaIoConnect ?? true,
      jitter: { trimSlack: s.jitterTrimSlack ?? true },
      latching,
    });
    return new LegSetup(d, endpoint);
  }

  private local(): { address: string; port: number; sessionId: string; sessionVersion: number } {
    return { address: this.d.sip.advertisedAddress, port: this.endpoint.port, sessionId: String(Date.now()), sessionVersion: 1 };
  }

  /** The peer offered (inbound INVITE with SDP): our answer to send and the media to run. */
  async answerPeerOffer(callId: string, fromTag: string, localTag: string, offer: string): Promise<{ sdp: string; media: NegotiatedMedia }> {
    const anchor = this.d.anchor;
    let gatewayOffer = offer;
    if (anchor) {
      gatewayOffer = await anchor.offerFromPeer(callId, fromTag, offer);
      this.anchorKey = { callId, tag: fromTag };
    }
    const answered = answerOffer(gatewayOffer, this.local());
    const sdp = anchor ? await anchor.answerFromGateway(callId, fromTag, localTag, answered.sdp) : answered.sdp;
    return { sdp, media: answered.media };
  }

  /** We offer (outbound INVITE, or the 200 OK to an offer-less INVITE), keyed by our tag; `srtp`: rtpengine offers SDES to the peer. */
  async gatewayOffer(callId: string, tag: string, srtp = false): Promise<string> {
    const anchor = this.d.anchor;
    // Through rtpengine we offer PCMU only: it transcodes nothing for us.
    const ours = buildSdp({ ...this.local(), codecs: anchor ? [PCMU] : DEFAULT_CODECS, dtmfPayloadType: DEFAULT_DTMF_PT, direction: 'sendrecv' });
    if (!anchor) return ours;
    const out = await anchor.offerFromGateway(callId, tag, ours, srtp);
    this.anchorKey = { callId, tag };
    return out;
  }

  /** The peer's answer to our offer: the media to run (throws SdpError when unusable). */
  async peerAnswer(callId: string, localTag: string, remoteTag: string, answer: string): Promise<NegotiatedMedia> {
    const sdp = this.d.anchor ? await this.d.anchor.answerFromPeer(callId, localTag, remoteTag, answer) : answer;
    return negotiate(parseSdp(sdp));
  }

  /** Inserts the `calls` row (release() marks it ended). */
  async insertCall(i: Parameters<typeof repo.insertCall>[1]): Promise<repo.CallRecord> {
    const row = await repo.insertCall(this.d.db, i);
    this.callRowId = row.id;
    return row;
  }

  /** Builds the leg, which from now on owns the endpoint and the rtpengine call. */
  leg(init: Omit<SipLegInit, 'endpoint' | 'anchor' | 'advertisedAddress'>): SipLeg {
    this.handedOver = true;
    const key = this.anchorKey;
    return new SipLeg({
      ...init,
      endpoint: this.endpoint,
      advertisedAddress: this.d.sip.advertisedAddress,
      anchor: this.d.anchor && key ? { server: this.d.anchor, callId: key.callId, fromTag: key.tag } : null,
    });
  }

  /** The one cleanup path of a failed setup: endpoint closed, rtpengine call deleted, row ended. */
  async release(status: string, reason: string): Promise<void> {
    if (this.handedOver || this.released) return;
    this.released = true;
    this.endpoint.close();
    const key = this.anchorKey;
    if (key && this.d.anchor) void this.d.anchor.delete(key.callId, key.tag);
    if (this.callRowId) await repo.markCallEnded(this.d.db, this.callRowId, status, reason).catch(() => undefined);
  }
}
