// Outbound calls: POST /v1/sessions/{id}/dial resolves the target (dial-target.ts), sets up media,
// sends the INVITE and bridges the answered leg into the session.
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { Party } from '../sessions/index.js';
import { decryptSecret } from '../secrets/index.js';
import { newCallId, newTag, type UserAgent } from './sip/user-agent.js';
import { SipError } from './sip/errors.js';
import { SdpError } from './sdp/sdp.js';
import { MediaServerUnavailable } from './media-anchor.js';
import { LegSetup, type MediaSetupDeps } from './media-setup.js';
import { TelephonyError } from './errors.js';
import { resolveDialTarget, type DialRequest } from './dial-target.js';
import { mediaSecurityOf } from './secure-trunk.js';
import type { SipLeg } from './call-leg.js';

export interface OutboundOptions {
  config: Config;
  db: Db;
  media: MediaSetupDeps;
  ua(): UserAgent;
  /** Live legs of a session here, and of the node (capacity). */
  legsOf(sessionId: string): readonly SipLeg[];
  liveCount(): number;
  /** False once the service closes. */
  accepting(): boolean;
  /** True while the node drains for a restart: new dials are refused, ringing ones cancelled. */
  draining(): boolean;
  /** True while the media path is overloaded (media/overload-guard.ts): new dials are refused. */
  overloaded(): boolean;
  count(result: string): void;
}

/**
 * Seconds a caller or client should wait while this node refuses new calls (draining, full, media path
 * overloaded; another node takes them meanwhile): the Retry-After of the SIP 503s and of refused dials.
 */
export const REFUSED_RETRY_AFTER_SECONDS = 5;

function drainingError(): TelephonyError {
  return new TelephonyError('media_server_unavailable', 'This gateway node is draining for a restart; retry the dial.', undefined, {
    retryAfterSeconds: REFUSED_RETRY_AFTER_SECONDS,
  });
}

export class OutboundDialer {
  /** Dials not yet answered, aborted when the node starts draining. */
  private readonly pending = new Set<AbortController>();

  constructor(private readonly o: OutboundOptions) {}

  /** Drain: every dial still ringing is cancelled (CANCEL after a provisional) and answers 503. */
  cancelPending(): void {
    for (const ac of this.pending) ac.abort();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Dials out for a session and resolves with the answered leg (or throws TelephonyError). */
  async dial(sessionId: string, orgId: string, req: DialRequest): Promise<SipLeg> {
    const sipCfg = this.o.config.sip;
    const db = this.o.db;
    const s = await repo.getTelephonySession(db, sessionId);
    if (!s || s.org_id !== orgId) throw new TelephonyError('session_not_found', 'No such session.');
    if (s.status === 'ended') throw new TelephonyError('session_not_dialable', 'The session has ended.');
    if (this.o.draining()) throw drainingError();
    if (!this.o.accepting()) throw new TelephonyError('media_server_unavailable', 'Telephony is shutting down.');
    const busy = new Set(this.o.legsOf(sessionId).map((l) => l.party));
    const party: Party = req.party ?? (busy.has('customer') ? 'agent' : 'customer');
    if (busy.has(party)) throw new TelephonyError('session_not_dialable', `The session already has a live ${party} leg.`);
    if (this.o.liveCount() >= sipCfg.maxConcurrentCalls) throw new TelephonyError('media_server_unavailable', 'The gateway is at its call capacity.');
    if (this.o.overloaded()) {
      throw new TelephonyError('media_server_unavailable', "This gateway node's media path is overloaded; retry the dial.", undefined, {
        retryAfterSeconds: REFUSED_RETRY_AFTER_SECONDS,
      });
    }
    const target = await resolveDialTarget(s, req, sipCfg.advertisedAddress, {
      connection: (id) => repo.getConnection(db, id),
      number: (n) => repo.findPhoneNumber(db, n),
      decrypt: (enc) => decryptSecret(this.o.config.secretKey, enc),
    });

    if (target.srtp && !this.o.media.anchor) throw new TelephonyError('dial_failed', 'The connection requires SRTP, which needs rtpengine (RTPENGINE_NG).');
    const setup = await LegSetup.open(this.o.media, target.latching);
    const ac = new AbortController();
    this.pending.add(ac);
    try {
      const callSid = newCallId(sipCfg.advertisedAddress);
      const fromTag = newTag();
      const offer = await setup.gatewayOffer(callSid, fromTag, target.srtp);
      const row = await setup.insertCall({
        sessionId,
        orgId,
        party,
        direction: 'outbound',
        provider: target.provider,
        callSid,
        from: target.from,
        to: target.to,
        status: 'ringing',
      });
      const ringMs = Math.min(Math.max(req.ringTimeoutSeconds ?? 30, 1), 120) * 1000;
      const dialog = await this.o.ua().call(target.uri, {
        callId: callSid,
        fromTag,
        from: target.from,
        to: target.to,
        headers: target.headers,
        sdp: offer,
        auth: target.auth ?? undefined,
        transport: target.transport,
        ringTimeoutMs: ringMs,
        signal: ac.signal,
      });
      this.pending.delete(ac);
      if (!dialog.remoteSdp) throw new SipError(488, 'Answer without SDP');
      if (target.srtp && !mediaSecurityOf(dialog.remoteSdp).sdes) {
        void dialog.bye('srtp_refused');
        throw new SipError(488, 'Answer without SRTP on a secure connection');
      }
      const media = await setup.peerAnswer(dialog.callId, dialog.localTag, dialog.remoteTag, dialog.remoteSdp);
      return setup.leg({
        id: row.id,
        sessionId,
        orgId,
        party,
        direction: 'outbound',
        provider: target.provider,
        from: target.from,
        to: target.to,
        dialog,
        media,
      });
    } catch (err) {
      this.pending.delete(ac);
      if (ac.signal.aborted) {
        await setup.release('canceled', 'drain');
        this.o.count('canceled_drain');
        throw drainingError();
      }
      await setup.release('failed', err instanceof SipError ? `sip_${err.status}` : 'error');
      this.o.count(err instanceof SipError ? `failed_${err.status}` : 'failed');
      if (err instanceof TelephonyError) throw err;
      if (err instanceof MediaServerUnavailable) throw new TelephonyError('media_server_unavailable', err.message);
      if (err instanceof SipError) throw new TelephonyError('dial_failed', `SIP dial failed: ${err.status} ${err.reason}`, err.status);
      if (err instanceof SdpError) throw new TelephonyError('dial_failed', `SIP dial failed: unusable answer SDP (${err.message})`);
      throw err;
    }
  }
}
