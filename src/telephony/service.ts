// The telephony front: a SIP user agent whose calls become SipLegs attached to sessions, the
// admission rules for inbound INVITEs, outbound dial/hangup, and the call rows and provider
// events that record them.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { Party } from '../sessions/index.js';
import { UserAgent, newCallId, newTag } from './sip/user-agent.js';
import { RefusalCounter } from './sip/refusals.js';
import { SourceGuard } from './sip/source-guard.js';
import { SourceAuth } from './source-auth.js';
import { TrustedEdge } from './sip/trusted-edge.js';
import type { IncomingInvite } from './sip/incoming-invite.js';
import { SipError } from './sip/errors.js';
import { RtpEndpoint } from './rtp/endpoint.js';
import { addLegQuality, finishQualitySummary, type CallQuality } from './rtp/call-quality.js';
import type { TickSource } from '../media/index.js';
import { rtpMediaClock } from './rtp/endpoint.js';
import { answerOffer, buildSdp, DEFAULT_CODECS, DEFAULT_DTMF_PT, negotiate, parseSdp, requireAudio, SdpError, type NegotiatedMedia } from './sdp/sdp.js';
import type { Dialog } from './sip/dialog.js';
import type { SipRequest } from 'sip';
import { MediaAnchor, MediaServerUnavailable } from './media-anchor.js';
import { SipLeg } from './call-leg.js';
import { decryptSecret } from '../secrets/index.js';
import { TelephonyError } from './errors.js';
import { resolveDialTarget, type DialRequest } from './dial-target.js';
import type { SessionAttachment, TelephonySessionPort } from './session-port.js';
import { checkInboundSecurity, checkOfferSecurity, mediaSecurityOf } from './secure-trunk.js';
import { tlsListenerOf } from './tls-config.js';

export interface TelephonyOptions {
  config: Config;
  logger: Logger;
  db: Db;
  sessions: TelephonySessionPort;
  /**
   * Default: telephony's own process-wide RTP clock. (Sharing the pipeline's clock measured worse in
   * bench/sip: fewer ticks than wall time under load, so RTP keeps its own until that is understood.)
   */
  clock?: TickSource;
  /**
   * Scale-out (DESIGN.md): the SIP contact of the node that owns a session live, when that is
   * another node (null: no other node owns it, the call is taken here). `sip` null: the owner runs no SIP.
   */
  ownerElsewhere?: (sessionId: string) => Promise<{ node: string; sip: { address: string; port: number } | null } | null>;
}

/** The `call` view returned by dial/hangup and shown on the session. */
export interface CallView {
  id: string;
  object: 'call';
  provider: string;
  call_sid: string;
  party: Party;
  direction: 'inbound' | 'outbound';
  status: string;
  from: string;
  to: string;
  disconnect_reason?: string | null;
  duration?: number;
  /** RTP/RTCP quality of the leg so far (issue 12). */
  quality?: CallQuality;
}

const RETRY_AFTER_SECONDS = '5';

export class TelephonyService {
  ua!: UserAgent;
  private readonly legs = new Map<string, { leg: SipLeg; attachment: SessionAttachment | null }>();
  private readonly anchor: MediaAnchor | null;
  private readonly sourceAuth: SourceAuth;
  private readonly clock: TickSource;
  private readonly log: Logger;
  /** Input the SIP front refused, by fault (metrics). */
  readonly refusals: RefusalCounter;
  readonly guard: SourceGuard;
  readonly edge: TrustedEdge;
  private closed = false;

  constructor(private readonly o: TelephonyOptions) {
    this.log = o.logger.child({ component: 'telephony' });
    this.refusals = new RefusalCounter(this.log);
    this.edge = new TrustedEdge(o.config.sip.trustedEdge);
    // The edge carries many callers: they are limited by their own addresses, the edge never.
    const guardCfg = o.config.sip.guard;
    this.guard = new SourceGuard({ ...guardCfg, allowCidrs: [...guardCfg.allowCidrs, ...this.edge.edgeCidrs] }, (source, reason, seconds) => {
      this.refusals.counts.bans = (this.refusals.counts.bans ?? 0) + 1;
      this.log.warn({ source, reason, seconds }, 'sip source banned');
    });
    this.sourceAuth = new SourceAuth({ db: o.db, secretKey: o.config.secretKey, realm: o.config.sip.realm, guard: this.guard });
    this.clock = o.clock ?? rtpMediaClock;
    this.anchor = o.config.rtpengine.ng ? new MediaAnchor({ ng: o.config.rtpengine.ng, timeoutMs: o.config.rtpengine.timeoutMs }) : null;
  }

  /** Binds the SIP port (config.sip.port; 0 picks a free one, see `sipPort`). */
  static async start(o: TelephonyOptions): Promise<TelephonyService> {
    const svc = new TelephonyService(o);
    const sip = o.config.sip;
    svc.ua = await UserAgent.start(
      { host: sip.host, port: sip.port, transports: sip.transports, advertisedAddress: sip.advertisedAddress, userAgent: 'voxbridge', logger: svc.log,
        limits: sip.limits, stream: sip.stream, tls: tlsListenerOf(sip.tls), guard: svc.guard, edge: svc.edge.enabled ? svc.edge : undefined,
        onRefused: (fault, remote, detail) => svc.refusals.record(fault, remote, detail) },
      { onInvite: (inv) => void svc.onInvite(inv) },
    );
    return svc;
  }

  get sipPort(): number {
    return this.ua.port;
  }

  get activeLegs(): number {
    return this.legs.size;
  }

  /** Call outcomes since start, by direction and result (metrics). */
  readonly callCounts: Record<string, number> = {};
  /** Media counters of legs that have ended (live legs are added by mediaStats). */
  private readonly endedMedia: Record<string, number> = { packetsIn: 0, packetsOut: 0, ignoredSource: 0, concealed: 0, dropped: 0, late: 0, underruns: 0, played: 0 };

  countCall(direction: 'inbound' | 'outbound', result: string): void {
    const key = `${direction}:${result}`;
    this.callCounts[key] = (this.callCounts[key] ?? 0) + 1;
  }

  /** Media counters: live legs (legs, maxTargetFrames, maxJitterMs) and totals since start (the rest). */
  mediaStats(): Record<string, number> {
    const sum: Record<string, number> = { ...this.endedMedia, clockLateTicks: (this.clock as { lateTicks?: number }).lateTicks ?? 0, legs: 0, maxTargetFrames: 0, maxJitterMs: 0 };
    for (const { leg } of this.legs.values()) {
      const r = leg.rtpStats;
      const j = leg.jitterStats;
      sum.legs++;
      sum.packetsIn += r.packetsIn;
      sum.packetsOut += r.packetsOut;
      sum.ignoredSource += r.ignoredSource;
      sum.concealed += j.concealed;
      sum.dropped += j.dropped;
      sum.late += j.late;
      sum.underruns += j.underruns;
      sum.played += j.played;
      sum.maxTargetFrames = Math.max(sum.maxTargetFrames, j.targetFrames);
      sum.maxJitterMs = Math.max(sum.maxJitterMs, Math.round(j.jitterMs * 10) / 10);
      addLegQuality(sum, leg.callQuality, j);
    }
    return finishQualitySummary(sum);
  }

  legsOf(sessionId: string): SipLeg[] {
    return [...this.legs.values()].map((l) => l.leg).filter((l) => l.sessionId === sessionId);
  }

  /** True once drain() began: new INVITEs get 503 + Retry-After while live calls finish. */
  draining = false;

  /**
   * Graceful drain (rolling upgrades): stop taking INVITEs, let live calls end on their own for up
   * to `maxMs`, then return (close() ends what is left with BYE). Resolves at once with no calls.
   */
  async drain(maxMs: number): Promise<void> {
    this.draining = true;
    const deadline = Date.now() + maxMs;
    if (this.legs.size > 0) this.log.info({ calls: this.legs.size, maxMs }, 'draining SIP calls');
    while (this.legs.size > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(250, Math.max(1, deadline - Date.now()))));
    }
    if (this.legs.size > 0) this.log.warn({ calls: this.legs.size }, 'drain time over: ending the remaining calls');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const { leg } of [...this.legs.values()]) leg.close('shutdown');
    this.ua.close();
    this.anchor?.close();
  }

  // ---- inbound -----------------------------------------------------------------------------

  private async onInvite(inv: IncomingInvite): Promise<void> {
    try {
      await this.admitAndAnswer(inv);
    } catch (err) {
      if (err instanceof SipError) {
        this.countCall('inbound', `rejected_${err.status}`);
        inv.reject(err.status, err.reason, err.status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : undefined);
      }
      else {
        this.log.error({ err, callId: inv.callId }, 'inbound call failed');
        inv.reject(500, 'Server Internal Error');
      }
    }
  }

  private async admitAndAnswer(inv: IncomingInvite): Promise<void> {
    const sipCfg = this.o.config.sip;
    if (this.closed || this.draining) throw new SipError(503, 'Service Unavailable');
    // Capacity counts live legs and INVITEs being set up (this one included).
    if (this.legs.size + this.ua.pendingInviteCount > sipCfg.maxConcurrentCalls) throw new SipError(503, 'Service Unavailable');
    // No offer in the INVITE (late offer): we offer in the 200 OK and take the answer from the ACK.
    const offer = inv.sdp;
    if (offer) {
      try {
        // Anchored, rtpengine transcodes what we do not speak (G.722 and the like) to PCMU: an audio line is enough.
        if (this.anchor) requireAudio(parseSdp(offer)); else negotiate(parseSdp(offer));
      } catch (err) {
        if (!(err instanceof SdpError)) throw err;
        // A body that is not SDP at all is a bad request; SDP without a codec we speak is not acceptable.
        throw err.code === 'malformed' ? new SipError(400, 'Bad SDP') : new SipError(488, 'Not Acceptable Here');
      }
      checkOfferSecurity(offer, this.anchor !== null);
    }
    // Only an allow-listed source (carrier, SBC) may learn which numbers exist: anyone else gets the
    // same digest challenge, then the same 403, for an unknown number as for one not open to it.
    const trusted = this.guard.isAllowListed(inv.remote.address);
    const dialed = dialedNumber(inv);
    const number = dialed ? await this.findNumber(dialed) : null;
    if (!number) {
      if (trusted) throw new SipError(404, 'Not Found');
      this.sourceAuth.challengeOrRefuse(inv); // challenges, or throws 403 on the answer
      return;
    }
    const connection = await this.sourceAuth.check(inv, number, trusted);
    if (connection === 'challenged') return;
    checkInboundSecurity(connection, inv.remote, offer);
    // A session whose customer already talks on a live leg here is not waiting for this call.
    const candidates = await repo.findSessionsWaitingForNumber(this.o.db, number.org_id, number.number);
    const sessionId = candidates.find((id) => !this.legsOf(id).some((l) => l.party === 'customer'))
      ?? (number.default_session_id && (await repo.isSessionOpen(this.o.db, number.default_session_id)) ? number.default_session_id : null);
    if (!sessionId) throw new SipError(480, 'Temporarily Unavailable');
    if (await this.redirectToOwner(inv, sessionId, dialed!)) return;
    if (inv.isCancelled) return;
    inv.progress(180);

    const endpoint = await RtpEndpoint.open({
      bindAddress: sipCfg.host, portMin: sipCfg.rtpPortMin, portMax: sipCfg.rtpPortMax, timeoutMs: sipCfg.rtpTimeoutSeconds * 1000, clock: this.clock, latching: connection?.rtp_latching,
    });
    const fromTag = String(inv.from.params.tag ?? '');
    // rtpengine keys a call by the tag of whoever offered first: the caller's, or ours on a late offer.
    const anchorTag = offer ? fromTag : inv.localTag;
    let anchored = false;
    let callRowId: string | null = null;
    let dialog: Dialog | null = null;
    try {
      let toCaller: string;
      let media: NegotiatedMedia | null = null;
      const local = { address: sipCfg.advertisedAddress, port: endpoint.port, sessionId: String(Date.now()), sessionVersion: 1 };
      if (offer) {
        let gatewayOffer = offer;
        if (this.anchor) {
          gatewayOffer = await this.anchor.offerFromPeer(inv.callId, fromTag, offer);
          anchored = true;
        }
        const answered = answerOffer(gatewayOffer, local);
        media = answered.media;
        toCaller = this.anchor ? await this.anchor.answerFromGateway(inv.callId, fromTag, inv.localTag, answered.sdp) : answered.sdp;
      } else {
        const ourOffer = buildSdp({ ...local, codecs: this.anchor ? [PCMU] : DEFAULT_CODECS, dtmfPayloadType: DEFAULT_DTMF_PT, direction: 'sendrecv' });
        toCaller = ourOffer;
        if (this.anchor) {
          toCaller = await this.anchor.offerFromGateway(inv.callId, inv.localTag, ourOffer);
          anchored = true;
        }
      }
      if (inv.isCancelled) throw new SipError(487, 'Request Terminated');
      const provider = connection?.provider ?? 'sip';
      const call = await repo.insertCall(this.o.db, {
        sessionId, orgId: number.org_id, party: 'customer', direction: 'inbound', provider, callSid: inv.callId,
        from: uriOf(inv.from.uri), to: number.number, status: 'ringing',
      });
      callRowId = call.id;
      if (inv.isCancelled) throw new SipError(487, 'Request Terminated');
      dialog = inv.answer(toCaller);
      if (!media) {
        const ack = await ackOf(dialog);
        if (!ack?.content) throw new SdpError('no answer in the ACK', 'missing');
        const answer = this.anchor ? await this.anchor.answerFromPeer(inv.callId, inv.localTag, fromTag, ack.content) : ack.content;
        media = negotiate(parseSdp(answer));
        dialog.remoteSdp = ack.content;
      }
      const leg = new SipLeg({
        id: call.id, sessionId, orgId: number.org_id, party: 'customer', direction: 'inbound', provider,
        from: uriOf(inv.from.uri), to: number.number, dialog, endpoint, media,
        advertisedAddress: sipCfg.advertisedAddress,
        anchor: this.anchor ? { server: this.anchor, callId: inv.callId, fromTag: anchorTag } : null,
      });
      await this.bridge(leg);
    } catch (err) {
      endpoint.close();
      if (anchored) void this.anchor!.delete(inv.callId, anchorTag);
      if (callRowId) await repo.markCallEnded(this.o.db, callRowId, inv.isCancelled ? 'canceled' : 'failed', inv.isCancelled ? 'caller_cancel' : 'setup_failed').catch(() => undefined);
      if (dialog) {
        // Answered already: the failure (e.g. an unusable answer in the ACK) ends the call with BYE.
        void dialog.bye('setup_failed');
        this.log.warn({ err: String(err), callId: inv.callId }, 'call failed after answer');
        return;
      }
      if (err instanceof MediaServerUnavailable) throw new SipError(503, 'Service Unavailable');
      if (err instanceof SdpError) throw new SipError(488, 'Not Acceptable Here');
      throw err;
    }
  }

  /**
   * A session lives on one node: an INVITE for a session another node owns is answered 302 Moved
   * Temporarily with that node's contact (RFC 3261 §8.3.3, §21.3.3), so the carrier retries there.
   * Only after the source check, so an unauthenticated caller learns nothing about other nodes.
   */
  private async redirectToOwner(inv: IncomingInvite, sessionId: string, dialed: string): Promise<boolean> {
    const owner = await this.o.ownerElsewhere?.(sessionId);
    if (!owner) return false;
    if (!owner.sip) throw new SipError(480, 'Temporarily Unavailable');
    if (inv.isCancelled) return true;
    // The carrier retries over the transport it used (Via, RFC 3261 §18.2.2).
    const transport = /tcp/i.test(String(inv.req.headers.via?.[0]?.protocol ?? '')) ? ';transport=tcp' : '';
    const contact = { uri: `sip:${dialed}@${owner.sip.address}:${owner.sip.port}${transport}`, params: {} };
    this.countCall('inbound', 'redirected_302');
    this.log.info({ callId: inv.callId, sessionId, owner: owner.node }, 'call redirected to the owning node');
    inv.reject(302, 'Moved Temporarily', { contact: [contact] });
    return true;
  }

  private async findNumber(dialed: string): Promise<repo.PhoneNumberRecord | null> {
    const candidates = dialed.startsWith('+') ? [dialed] : [`+${dialed}`, dialed];
    for (const c of candidates) {
      const n = await repo.findPhoneNumber(this.o.db, c);
      if (n) return n;
    }
    return null;
  }

  // ---- bridging and records -------------------------------------------------------------------

  /** Attaches a connected leg to its session and records it; hangs up when the session is gone. */
  private async bridge(leg: SipLeg): Promise<void> {
    const entry: { leg: SipLeg; attachment: SessionAttachment | null } = { leg, attachment: null };
    this.legs.set(leg.id, entry);
    const ended = new Promise<{ reason: string; durationSeconds: number }>((r) => leg.once('ended', r));
    void ended.then((e) => this.onLegEnded(entry, e.reason, e.durationSeconds));
    let attachment: SessionAttachment | null = null;
    try {
      attachment = await this.o.sessions.attachLeg(leg.sessionId, leg);
    } catch (err) {
      this.log.warn({ err, sessionId: leg.sessionId }, 'attaching leg failed');
    }
    if (!attachment) {
      leg.close('session_unavailable');
      return;
    }
    if (leg.isEnded) {
      attachment.detach('ended');
      return;
    }
    entry.attachment = attachment;
    leg.on('audio', (f) => attachment.pushAudio(f));
    await repo.recordCallConnected(this.o.db, {
      callId: leg.id, sessionId: leg.sessionId, orgId: leg.orgId, provider: leg.provider,
      data: { session_id: leg.sessionId, provider: { type: leg.provider, call_sid: leg.callSid, status: 'connected', from: leg.from, to: leg.to } },
    }).catch((err) => this.log.error({ err, callSid: leg.callSid }, 'recording connected call failed'));
    this.log.info({ callSid: leg.callSid, sessionId: leg.sessionId, party: leg.party, direction: leg.direction }, 'call connected');
  }

  private async onLegEnded(entry: { leg: SipLeg; attachment: SessionAttachment | null }, reason: string, durationSeconds: number): Promise<void> {
    const leg = entry.leg;
    this.legs.delete(leg.id);
    this.countCall(leg.direction, 'completed');
    const fin = leg.finalStats;
    if (fin) {
      const m = this.endedMedia;
      m.packetsIn += fin.rtp.packetsIn;
      m.packetsOut += fin.rtp.packetsOut;
      m.ignoredSource += fin.rtp.ignoredSource;
      m.concealed += fin.jitter.concealed;
      m.dropped += fin.jitter.dropped;
      m.late += fin.jitter.late;
      m.underruns += fin.jitter.underruns;
      m.played += fin.jitter.played;
    }
    try {
      entry.attachment?.detach(reason);
    } catch (err) {
      this.log.warn({ err }, 'detaching leg failed');
    }
    await repo.recordCallEnded(this.o.db, {
      callId: leg.id, orgId: leg.orgId, status: 'completed', reason,
      data: { session_id: leg.sessionId, provider: { type: leg.provider, call_sid: leg.callSid, status: 'disconnected', disconnect_reason: reason, duration: durationSeconds, quality: leg.callQuality } },
    }).catch((err) => this.log.error({ err, callSid: leg.callSid }, 'recording ended call failed'));
    const q = leg.callQuality;
    this.log.info({ callSid: leg.callSid, reason, durationSeconds, mos: q.mos, lossPercent: q.loss_percent, jitterMs: q.jitter_ms, rttMs: q.rtt_ms, media: leg.finalStats }, 'call ended');
  }

  // ---- outbound ----------------------------------------------------------------------------

  /** Dials out for a session and resolves once the call is answered (or throws TelephonyError). */
  async dial(sessionId: string, orgId: string, req: DialRequest): Promise<CallView> {
    const sipCfg = this.o.config.sip;
    const s = await repo.getTelephonySession(this.o.db, sessionId);
    if (!s || s.org_id !== orgId) throw new TelephonyError('session_not_found', 'No such session.');
    if (s.status === 'ended') throw new TelephonyError('session_not_dialable', 'The session has ended.');
    if (this.closed) throw new TelephonyError('media_server_unavailable', 'Telephony is shutting down.');
    const busy = new Set(this.legsOf(sessionId).map((l) => l.party));
    const party: Party = req.party ?? (busy.has('customer') ? 'agent' : 'customer');
    if (busy.has(party)) throw new TelephonyError('session_not_dialable', `The session already has a live ${party} leg.`);
    if (this.legs.size >= sipCfg.maxConcurrentCalls) throw new TelephonyError('media_server_unavailable', 'The gateway is at its call capacity.');
    const target = await resolveDialTarget(s, req, sipCfg.advertisedAddress, {
      connection: (id) => repo.getConnection(this.o.db, id),
      number: (n) => repo.findPhoneNumber(this.o.db, n),
      decrypt: (enc) => decryptSecret(this.o.config.secretKey, enc),
    });

    const endpoint = await RtpEndpoint.open({
      bindAddress: sipCfg.host, portMin: sipCfg.rtpPortMin, portMax: sipCfg.rtpPortMax, timeoutMs: sipCfg.rtpTimeoutSeconds * 1000, clock: this.clock, latching: target.latching,
    });
    let callSid = '';
    let fromTag = '';
    let anchored = false;
    let callRow: repo.CallRecord | null = null;
    try {
      const ourOffer = buildSdp({
        address: sipCfg.advertisedAddress, port: endpoint.port, sessionId: String(Date.now()), sessionVersion: 1,
        codecs: this.anchor ? [{ payloadType: 0, name: 'PCMU' }] : [{ payloadType: 0, name: 'PCMU' }, { payloadType: 8, name: 'PCMA' }],
        dtmfPayloadType: DEFAULT_DTMF_PT, direction: 'sendrecv',
      });
      callSid = newCallId(sipCfg.advertisedAddress);
      fromTag = newTag();
      let offerOut = ourOffer;
      if (target.srtp && !this.anchor) throw new TelephonyError('dial_failed', 'The connection requires SRTP, which needs rtpengine (RTPENGINE_NG).');
      if (this.anchor) {
        offerOut = await this.anchor.offerFromGateway(callSid, fromTag, ourOffer, target.srtp);
        anchored = true;
      }
      callRow = await repo.insertCall(this.o.db, {
        sessionId, orgId, party, direction: 'outbound', provider: target.provider, callSid,
        from: target.from, to: target.to, status: 'ringing',
      });
      const ringMs = Math.min(Math.max(req.ringTimeoutSeconds ?? 30, 1), 120) * 1000;
      const dialog = await this.ua.call(target.uri, {
        callId: callSid,
        fromTag,
        from: target.from,
        to: target.to,
        headers: target.headers,
        sdp: offerOut,
        auth: target.auth ?? undefined,
        transport: target.transport,
        ringTimeoutMs: ringMs,
      });
      let answerSdp = dialog.remoteSdp;
      if (!answerSdp) throw new SipError(488, 'Answer without SDP');
      if (target.srtp && !mediaSecurityOf(answerSdp).sdes) {
        void dialog.bye('srtp_refused');
        throw new SipError(488, 'Answer without SRTP on a secure connection');
      }
      if (this.anchor) answerSdp = await this.anchor.answerFromPeer(dialog.callId, dialog.localTag, dialog.remoteTag, answerSdp);
      const media = negotiate(parseSdp(answerSdp));
      const row: repo.CallRecord = callRow;
      const leg = new SipLeg({
        id: row.id, sessionId, orgId, party, direction: 'outbound', provider: target.provider,
        from: target.from, to: target.to, dialog, endpoint, media, advertisedAddress: sipCfg.advertisedAddress,
        anchor: this.anchor ? { server: this.anchor, callId: dialog.callId, fromTag: dialog.localTag } : null,
      });
      await this.bridge(leg);
      return { ...this.viewOf(leg), status: leg.isEnded ? 'completed' : 'in-progress' };
    } catch (err) {
      endpoint.close();
      if (anchored) void this.anchor!.delete(callSid, fromTag);
      const row = callRow;
      if (row) await repo.markCallEnded(this.o.db, row.id, 'failed', err instanceof SipError ? `sip_${err.status}` : 'error').catch(() => undefined);
      this.countCall('outbound', err instanceof SipError ? `failed_${err.status}` : 'failed');
      if (err instanceof TelephonyError) throw err;
      if (err instanceof MediaServerUnavailable) throw new TelephonyError('media_server_unavailable', err.message);
      if (err instanceof SipError) throw new TelephonyError('dial_failed', `SIP dial failed: ${err.status} ${err.reason}`, err.status);
      if (err instanceof SdpError) throw new TelephonyError('dial_failed', `SIP dial failed: unusable answer SDP (${err.message})`);
      throw err;
    }
  }

  /** Hangs up the session's SIP legs (all, one party's, or one call by id or Call-ID). */
  async hangup(sessionId: string, orgId: string, req: { call_id?: string; party?: Party }): Promise<CallView[]> {
    const s = await repo.getTelephonySession(this.o.db, sessionId);
    if (!s || s.org_id !== orgId) throw new TelephonyError('session_not_found', 'No such session.');
    const legs = this.legsOf(sessionId).filter((l) =>
      (!req.party || l.party === req.party) && (!req.call_id || l.id === req.call_id || l.callSid === req.call_id));
    if (legs.length === 0) throw new TelephonyError('session_not_dialable', 'The session has no active SIP leg to hang up.');
    const views: CallView[] = [];
    for (const leg of legs) {
      const ended = new Promise<void>((r) => leg.once('ended', () => r()));
      leg.close('hangup');
      await ended.catch(() => undefined);
      views.push({ ...this.viewOf(leg), status: 'completed', disconnect_reason: 'hangup' });
    }
    return views;
  }

  private viewOf(leg: SipLeg): CallView {
    return {
      id: leg.id, object: 'call', provider: leg.provider, call_sid: leg.callSid, party: leg.party, direction: leg.direction,
      status: leg.isEnded ? 'completed' : 'in-progress', from: leg.from, to: leg.to,
      duration: Math.round((Date.now() - leg.connectedAt.getTime()) / 100) / 10,
      quality: leg.callQuality,
    };
  }
}

const PCMU = { payloadType: 0, name: 'PCMU' as const };
const ACK_WAIT_MS = 32_000;

/** The ACK of a dialog's 2xx (RFC 3261 §13.3.1.4: given up after 64*T1), or null. */
function ackOf(dialog: Dialog): Promise<SipRequest | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(null), ACK_WAIT_MS);
    const onAck = (rq: SipRequest): void => done(rq);
    const onDestroy = (): void => done(null);
    function done(v: SipRequest | null): void {
      clearTimeout(timer);
      dialog.off('ack', onAck);
      dialog.off('destroy', onDestroy);
      resolve(v);
    }
    dialog.once('ack', onAck);
    dialog.once('destroy', onDestroy);
  });
}

function uriOf(u: string | { schema: string; user?: string; host: string; port?: number }): string {
  if (typeof u === 'string') return u;
  return `${u.schema}:${u.user ? `${u.user}@` : ''}${u.host}${u.port ? `:${u.port}` : ''}`;
}

/** The dialled number: the Request-URI user part, else the To user part, without parameters. */
function dialedNumber(inv: IncomingInvite): string | null {
  const pick = (u: unknown): string | null => {
    const s = typeof u === 'string' ? u : u && typeof u === 'object' ? String((u as { user?: string }).user ?? '') : '';
    const m = /^sips?:([^@;]+)@/.exec(s) ?? (s && !s.includes(':') ? [s, s] : null);
    if (!m) return null;
    const user = decodeURIComponent(m[1]).split(';')[0].replace(/[\s().-]/g, '');
    return /^\+?\d{3,15}$/.test(user) ? user : null;
  };
  return pick(inv.req.uri) ?? pick(inv.to.uri);
}
