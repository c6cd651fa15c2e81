// A confirmed (or early-confirmed) SIP dialog (RFC 3261 §12): the state needed to send and route
// in-dialog requests, and the events call code listens to (drachtio-srf's Dialog shape).
import { SafeEmitter } from '../../events/index.js';
import type { NameAddr, Remote, SipRequest, SipResponse } from 'sip';
import { SipError } from './errors.js';
import type { SipTransportName } from './secure-transport.js';

export interface DialogDestroyed {
  by: 'local' | 'remote';
  reason: string;
}

export interface ModifyRequest {
  /** The offer in the re-INVITE, or null for an offer-less refresh. */
  sdp: string | null;
  request: SipRequest;
  /** Answers the re-INVITE; a 2xx carries our (new) local SDP. */
  respond(status: number, reason: string, localSdp?: string): void;
}

export interface DialogEvents {
  destroy: [DialogDestroyed];
  modify: [ModifyRequest];
  info: [SipRequest];
  ack: [SipRequest];
}

/** What a Dialog needs from its user agent; keeps dialog.ts free of the transport. */
export interface DialogTransport {
  sendRequest(dialog: Dialog, method: string, extra?: { headers?: Record<string, unknown>; content?: string }): Promise<SipResponse>;
  respond(req: SipRequest, status: number, reason: string, extra?: { headers?: Record<string, unknown>; content?: string }, reliable2xx?: boolean): void;
  forget(dialog: Dialog): void;
}

export interface DialogInit {
  callId: string;
  direction: 'inbound' | 'outbound';
  local: NameAddr;
  remote: NameAddr;
  remoteTarget: string;
  routeSet: NameAddr[];
  localSeq: number;
  remoteSeq: number;
  localSdp: string;
  remoteSdp: string | null;
  transport: SipTransportName;
  /**
   * The TCP/TLS connection of the dialog, reused for our requests while open (null: route by URI):
   * the one the caller opened to us (inbound), or the one our INVITE went out on (outbound).
   */
  flow?: Remote | null;
}

export class Dialog extends SafeEmitter<DialogEvents> {
  readonly callId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly local: NameAddr;
  readonly remote: NameAddr;
  readonly transport: SipTransportName;
  readonly flow: Remote | null;
  remoteTarget: string;
  routeSet: NameAddr[];
  localSeq: number;
  remoteSeq: number;
  localSdp: string;
  remoteSdp: string | null;
  readonly connectedAt = new Date();
  private destroyed = false;

  constructor(
    init: DialogInit,
    private readonly ua: DialogTransport,
  ) {
    super();
    this.callId = init.callId;
    this.direction = init.direction;
    this.local = init.local;
    this.remote = init.remote;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.localSdp = init.localSdp;
    this.remoteSdp = init.remoteSdp;
    this.transport = init.transport;
    this.flow = init.flow ?? null;
  }

  get localTag(): string {
    return String(this.local.params.tag);
  }

  get remoteTag(): string {
    return String(this.remote.params.tag ?? '');
  }

  get isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Ends the dialog with BYE (RFC 3261 §15.1.1); resolves once answered or timed out. Idempotent. */
  async bye(reason = 'local_hangup'): Promise<void> {
    if (this.destroyed) return;
    this.markDestroyed({ by: 'local', reason });
    try {
      await this.ua.sendRequest(this, 'BYE');
    } catch {
      // The dialog is gone for us whatever the far end says.
    }
  }

  /** Sends a re-INVITE with a new local offer (e.g. to hold the far end); resolves with the answer SDP. */
  async modify(localSdp: string): Promise<string | null> {
    const rs = await this.ua.sendRequest(this, 'INVITE', { headers: { 'content-type': 'application/sdp' }, content: localSdp });
    if (rs.status >= 300) throw new SipError(rs.status, rs.reason);
    this.localSdp = localSdp;
    if (rs.content) this.remoteSdp = rs.content;
    return rs.content ?? null;
  }

  /** In-dialog request from the far end (routed here by Call-ID and our tag). */
  handleRequest(req: SipRequest): void {
    const seq = req.headers.cseq.seq;
    if (req.method === 'ACK') {
      this.safeEmit('ack', req);
      return;
    }
    if (this.destroyed && req.method !== 'BYE') {
      this.ua.respond(req, 481, 'Call/Transaction Does Not Exist');
      return;
    }
    // RFC 3261 §12.2.2: a lower CSeq than the last one is out of order.
    if (seq < this.remoteSeq && req.method !== 'CANCEL') {
      this.ua.respond(req, 500, 'Server Internal Error', { headers: { 'retry-after': '1' } });
      return;
    }
    this.remoteSeq = seq;
    switch (req.method) {
      case 'BYE':
        this.ua.respond(req, 200, 'OK');
        this.markDestroyed({ by: 'remote', reason: 'remote_hangup' });
        return;
      case 'INVITE':
        this.onReinvite(req);
        return;
      case 'INFO':
        this.ua.respond(req, 200, 'OK');
        this.safeEmit('info', req);
        return;
      case 'OPTIONS':
        this.ua.respond(req, 200, 'OK');
        return;
      default:
        this.ua.respond(req, 405, 'Method Not Allowed');
    }
  }

  /** Marks the dialog gone without signalling (ACK timeout, transport failure, UA shutdown). */
  markDestroyed(info: DialogDestroyed): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.ua.forget(this);
    this.safeEmit('destroy', info);
  }

  private onReinvite(req: SipRequest): void {
    const sdp = req.content && /application\/sdp/i.test(String(req.headers['content-type'] ?? '')) ? req.content : null;
    let answered = false;
    const respond = (status: number, reason: string, localSdp?: string): void => {
      if (answered) return;
      answered = true;
      if (status < 300) {
        if (localSdp) this.localSdp = localSdp;
        if (sdp) this.remoteSdp = sdp;
        this.ua.respond(req, status, reason, { headers: { 'content-type': 'application/sdp' }, content: this.localSdp }, true);
      } else {
        this.ua.respond(req, status, reason);
      }
    };
    if (this.listenerCount('modify') === 0) {
      // Nobody renegotiates: a session refresh, answered with what we have (RFC 4028 §9 style).
      respond(200, 'OK');
      return;
    }
    this.safeEmit('modify', { sdp, request: req, respond });
  }
}
