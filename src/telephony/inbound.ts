// Inbound calls: admission of an INVITE (capacity, offer, source check before any lookup, the
// waiting session, the owning node) over a repo port, then the answer and the media set-up.
import type { Logger } from 'pino';
import type { SipRequest } from 'sip';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { IncomingInvite } from './sip/incoming-invite.js';
import type { Dialog } from './sip/dialog.js';
import { SipError } from './sip/errors.js';
import { negotiate, parseSdp, requireAudio, SdpError, type NegotiatedMedia } from './sdp/sdp.js';
import { checkInboundSecurity, checkOfferSecurity } from './secure-trunk.js';
import { MediaServerUnavailable } from './media-anchor.js';
import { LegSetup, type MediaSetupDeps } from './media-setup.js';
import type { SipLeg } from './call-leg.js';

/** What admission reads from the store (a fake in unit tests). */
export interface InboundRepo {
  findPhoneNumber(number: string): Promise<repo.PhoneNumberRecord | null>;
  findSessionsWaitingForNumber(orgId: string, number: string): Promise<string[]>;
  isSessionOpen(sessionId: string): Promise<boolean>;
}

export function inboundRepo(db: Db): InboundRepo {
  return {
    findPhoneNumber: (n) => repo.findPhoneNumber(db, n),
    findSessionsWaitingForNumber: (orgId, n) => repo.findSessionsWaitingForNumber(db, orgId, n),
    isSessionOpen: (id) => repo.isSessionOpen(db, id),
  };
}

/** The parts of an IncomingInvite admission looks at. */
export type AdmissionInvite = Pick<IncomingInvite, 'callId' | 'remote' | 'req' | 'from' | 'to' | 'sdp' | 'isCancelled' | 'reject'>;

/** The source check (source-auth.ts): CIDR allow-list or digest; 'challenged' when a 401 went out. */
export interface SourceCheck {
  check(inv: AdmissionInvite, number: repo.PhoneNumberRecord, trusted: boolean): Promise<repo.ConnectionRecord | null | 'challenged'>;
  challengeOrRefuse(inv: AdmissionInvite): 'challenged';
}

/** Where another node takes SIP: its advertised address, its UDP/TCP port and its TLS port (null: no TLS). */
export interface OwnerSipContact {
  address: string;
  port: number;
  tlsPort?: number | null;
}

export type OwnerLookup = (sessionId: string) => Promise<{ node: string; sip: OwnerSipContact | null } | null>;

export interface AdmissionOptions {
  repo: InboundRepo;
  sourceAuth: SourceCheck;
  /** Carrier/SBC sources (config.sip.guard allow-list): they may learn which numbers exist. */
  isAllowListed(address: string): boolean;
  /** False while closing or draining. */
  accepting(): boolean;
  /** Live legs plus INVITEs being set up (this one included), against `maxCalls`. */
  load(): number;
  maxCalls: number;
  /** True while the media path is overloaded (media/overload-guard.ts): new calls get 503 + Retry-After. */
  overloaded(): boolean;
  /** rtpengine anchors media (it transcodes and terminates SRTP for us). */
  anchored: boolean;
  /** True when the session already has a live customer leg here (it is not waiting for this call). */
  customerBusy(sessionId: string): boolean;
  ownerElsewhere?: OwnerLookup;
  /** Counts outcomes that admission answers itself (the 302). */
  count?(result: string): void;
  log?: Pick<Logger, 'info'>;
}

export interface Admitted {
  number: repo.PhoneNumberRecord;
  connection: repo.ConnectionRecord | null;
  sessionId: string;
  /** The caller's SDP offer, or null for a late offer. */
  offer: string | null;
}

export class InboundAdmission {
  constructor(private readonly o: AdmissionOptions) {}

  /**
   * True while an INVITE gets 503 before any lookup: closing or draining, at capacity, or the media path
   * overloaded. `arriving`: INVITEs asked about that load() does not count yet (1 for an OPTIONS ping,
   * answered as an INVITE would be).
   */
  refusesCalls(arriving = 0): boolean {
    return !this.o.accepting() || this.o.load() + arriving > this.o.maxCalls || this.o.overloaded();
  }

  /**
   * Decides an INVITE: the admitted call, null when admission answered it already (401 challenge,
   * 302 redirect, caller cancelled), or a SipError thrown for the final answer.
   */
  async admit(inv: AdmissionInvite): Promise<Admitted | null> {
    if (this.refusesCalls()) throw new SipError(503, 'Service Unavailable');
    // No offer in the INVITE (late offer): we offer in the 200 OK and take the answer from the ACK.
    const offer = inv.sdp;
    if (offer) {
      try {
        // Anchored, rtpengine transcodes what we do not speak (G.722 and the like) to PCMU: an audio line is enough.
        if (this.o.anchored) requireAudio(parseSdp(offer));
        else negotiate(parseSdp(offer));
      } catch (err) {
        if (!(err instanceof SdpError)) throw err;
        // A body that is not SDP at all is a bad request; SDP without a codec we speak is not acceptable.
        throw err.code === 'malformed' ? new SipError(400, 'Bad SDP') : new SipError(488, 'Not Acceptable Here');
      }
      checkOfferSecurity(offer, this.o.anchored);
    }
    // Only an allow-listed source (carrier, SBC) may learn which numbers exist: anyone else gets the
    // same digest challenge, then the same 403, for an unknown number as for one not open to it.
    const trusted = this.o.isAllowListed(inv.remote.address);
    const dialed = dialedNumber(inv.req, inv.to.uri);
    const number = dialed ? await this.findNumber(dialed) : null;
    if (!number || !dialed) {
      if (trusted) throw new SipError(404, 'Not Found');
      this.o.sourceAuth.challengeOrRefuse(inv); // challenges, or throws 403 on the answer
      return null;
    }
    const connection = await this.o.sourceAuth.check(inv, number, trusted);
    if (connection === 'challenged') return null;
    checkInboundSecurity(connection, inv.remote, offer);
    const candidates = await this.o.repo.findSessionsWaitingForNumber(number.org_id, number.number);
    const sessionId =
      candidates.find((id) => !this.o.customerBusy(id)) ??
      (number.default_session_id && (await this.o.repo.isSessionOpen(number.default_session_id)) ? number.default_session_id : null);
    if (!sessionId) throw new SipError(480, 'Temporarily Unavailable');
    if (await this.redirectToOwner(inv, sessionId, dialed)) return null;
    if (inv.isCancelled) return null;
    return { number, connection, sessionId, offer };
  }

  /**
   * A session lives on one node: an INVITE for a session another node owns is answered 302 Moved
   * Temporarily with that node's contact (RFC 3261 §8.3.3, §21.3.3), so the carrier retries there.
   * Only after the source check, so an unauthenticated caller learns nothing about other nodes.
   */
  private async redirectToOwner(inv: AdmissionInvite, sessionId: string, dialed: string): Promise<boolean> {
    const owner = await this.o.ownerElsewhere?.(sessionId);
    if (!owner) return false;
    if (!owner.sip) throw new SipError(480, 'Temporarily Unavailable');
    if (inv.isCancelled) return true;
    const contact = { uri: ownerContact(dialed, owner.sip, inv), params: {} };
    this.o.count?.('redirected_302');
    this.o.log?.info({ callId: inv.callId, sessionId, owner: owner.node }, 'call redirected to the owning node');
    inv.reject(302, 'Moved Temporarily', { contact: [contact] });
    return true;
  }

  private async findNumber(dialed: string): Promise<repo.PhoneNumberRecord | null> {
    const candidates = dialed.startsWith('+') ? [dialed] : [`+${dialed}`, dialed];
    for (const c of candidates) {
      const n = await this.o.repo.findPhoneNumber(c);
      if (n) return n;
    }
    return null;
  }
}

const ACK_WAIT_MS = 32_000;

/**
 * Answers an admitted INVITE: media set up (anchored when rtpengine runs), the call row, 200 OK,
 * the answer from the ACK on a late offer; returns the connected leg. Throws SipError for the
 * final answer when it fails before the 200; after the 200 a failure ends the call with BYE (null).
 */
export async function answerInbound(inv: IncomingInvite, a: Admitted, d: MediaSetupDeps, log: Pick<Logger, 'warn'>): Promise<SipLeg | null> {
  const setup = await LegSetup.open(d, a.connection?.rtp_latching);
  const fromTag = String(inv.from.params.tag ?? '');
  let dialog: Dialog | null = null;
  try {
    let toCaller: string;
    let media: NegotiatedMedia | null = null;
    if (a.offer) {
      const answered = await setup.answerPeerOffer(inv.callId, fromTag, inv.localTag, a.offer);
      toCaller = answered.sdp;
      media = answered.media;
    } else {
      toCaller = await setup.gatewayOffer(inv.callId, inv.localTag);
    }
    if (inv.isCancelled) throw new SipError(487, 'Request Terminated');
    const provider = a.connection?.provider ?? 'sip';
    const from = uriOf(inv.from.uri);
    const call = await setup.insertCall({
      sessionId: a.sessionId,
      orgId: a.number.org_id,
      party: 'customer',
      direction: 'inbound',
      provider,
      callSid: inv.callId,
      from,
      to: a.number.number,
      status: 'ringing',
    });
    if (inv.isCancelled) throw new SipError(487, 'Request Terminated');
    dialog = inv.answer(toCaller);
    if (!media) {
      const ack = await ackOf(dialog);
      if (!ack?.content) throw new SdpError('no answer in the ACK', 'missing');
      media = await setup.peerAnswer(inv.callId, inv.localTag, fromTag, ack.content);
      dialog.remoteSdp = ack.content;
    }
    return setup.leg({
      id: call.id,
      sessionId: a.sessionId,
      orgId: a.number.org_id,
      party: 'customer',
      direction: 'inbound',
      provider,
      from,
      to: a.number.number,
      dialog,
      media,
    });
  } catch (err) {
    await setup.release(inv.isCancelled ? 'canceled' : 'failed', inv.isCancelled ? 'caller_cancel' : 'setup_failed');
    if (dialog) {
      // Answered already: the failure (e.g. an unusable answer in the ACK) ends the call with BYE.
      void dialog.bye('setup_failed');
      log.warn({ err: String(err), callId: inv.callId }, 'call failed after answer');
      return null;
    }
    if (err instanceof MediaServerUnavailable) throw new SipError(503, 'Service Unavailable');
    if (err instanceof SdpError) throw new SipError(488, 'Not Acceptable Here');
    throw err;
  }
}

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

export function uriOf(u: string | { schema: string; user?: string; host: string; port?: number }): string {
  if (typeof u === 'string') return u;
  return `${u.schema}:${u.user ? `${u.user}@` : ''}${u.host}${u.port ? `:${u.port}` : ''}`;
}

/** The dialled number: the Request-URI user part, else the To user part, without parameters. */
export function dialedNumber(req: Pick<SipRequest, 'uri'>, toUri: unknown): string | null {
  const pick = (u: unknown): string | null => {
    const s = typeof u === 'string' ? u : u && typeof u === 'object' ? String((u as { user?: string }).user ?? '') : '';
    const m = /^sips?:([^@;]+)@/.exec(s) ?? (s && !s.includes(':') ? [s, s] : null);
    const userPart = m?.[1];
    if (userPart === undefined) return null;
    const user = (decodeURIComponent(userPart).split(';')[0] ?? '').replace(/[\s().-]/g, '');
    return /^\+?\d{3,15}$/.test(user) ? user : null;
  };
  return pick(req.uri) ?? pick(toUri);
}

/**
 * The owner's contact for a 302: the carrier retries over the transport it used (Via, RFC 3261
 * §18.2.2). A call that came over TLS is sent to the owner's TLS port with `;transport=tls`, never
 * downgraded: an owner without TLS cannot take it (480).
 */
function ownerContact(dialed: string, owner: OwnerSipContact, inv: AdmissionInvite): string {
  const via = String(inv.req.headers.via[0]?.protocol ?? '').toUpperCase();
  if (via === 'TLS' || inv.remote.protocol.toUpperCase() === 'TLS') {
    if (!owner.tlsPort) throw new SipError(480, 'Temporarily Unavailable');
    return `sip:${dialed}@${owner.address}:${owner.tlsPort};transport=tls`;
  }
  return `sip:${dialed}@${owner.address}:${owner.port}${via === 'TCP' ? ';transport=tcp' : ''}`;
}
