// The client side of an initial INVITE until it is answered, refused, timed out or aborted
// (RFC 3261 §13.2, §9.1): one digest retry on 401/407, CANCEL only after a provisional response,
// a 2xx that crosses our CANCEL, or that the edge refuses (X-VB-Refused), acknowledged and hung up.
// The counterpart of incoming-invite.ts.
import sip, { type NameAddr, type Remote, type SipMessage, type SipRequest, type SipResponse, type SipUri } from 'sip';
import digest from 'sip/digest.js';
import { Dialog, type DialogTransport } from './dialog.js';
import { ALLOW_HEADER, SipError } from './errors.js';
import { applyTransport, targetIsSips, type SipTransportName } from './secure-transport.js';
import { EDGE_REFUSED_HEADER } from './trusted-edge.js';

export interface CallOptions {
  /** Call-ID and From tag chosen by the caller (rtpengine needs them before the INVITE leaves). */
  callId?: string;
  fromTag?: string;
  from: string;
  fromName?: string;
  /** To header URI; defaults to the request URI. */
  to?: string;
  headers?: Record<string, string>;
  sdp: string;
  auth?: { username: string; password: string };
  /** Send CANCEL when no final answer arrives in this time. */
  ringTimeoutMs?: number;
  transport?: SipTransportName;
  signal?: AbortSignal;
  onProvisional?(rs: SipResponse): void;
  /** Gets the Call-ID as soon as the INVITE is built (for bookkeeping before the answer). */
  onCallId?(callId: string): void;
}

/** What a client INVITE needs from its user agent. */
export interface ClientInviteHost extends DialogTransport {
  /** `onResponse` learns the hop the request went out on (see stack.ts). */
  send(m: SipMessage, onResponse?: (rs: SipResponse, hop?: Remote) => void): void;
  contactFor(transport: SipTransportName, sips?: boolean): NameAddr;
  sendAck(dialog: Dialog, seq: number): void;
  /** Registers a dialog the INVITE created so in-dialog requests find it. */
  addDialog(dialog: Dialog): void;
  readonly userAgent?: string;
  /** `host:port` of an outbound proxy (the edge) every dial goes through; null: straight to the target. */
  readonly outboundProxy?: string | null;
}

export class ClientInvite {
  readonly callId: string;
  private readonly transport: SipTransportName;
  private readonly uri: SipUri;
  private readonly from: NameAddr;
  private readonly to: NameAddr;
  private seq = 1;
  private rq: SipRequest;
  private authTried = false;
  private done = false;
  private provisional = false;
  private cancelWanted: { status: number; reason: string } | null = null;
  private ringTimer: NodeJS.Timeout | null = null;
  private dialog: Dialog | null = null;
  private settle: { resolve(d: Dialog): void; reject(e: SipError): void } | null = null;
  private readonly onAbort = (): void => this.cancel(487, 'Request Terminated');

  /** Throws SipError(400) on a target that is not a SIP URI. */
  constructor(
    private readonly host: ClientInviteHost,
    private readonly target: string,
    private readonly o: CallOptions,
    callId: string,
    fromTag: string,
  ) {
    this.transport = o.transport ?? 'udp';
    const uri = sip.parseUri(target);
    if (!uri) throw new SipError(400, `bad target URI ${target}`);
    applyTransport(uri, this.transport);
    this.uri = uri;
    this.callId = callId;
    this.from = { name: o.fromName, uri: o.from, params: { tag: fromTag } };
    this.to = { uri: o.to ?? target, params: {} };
    this.rq = this.build();
  }

  /** Sends the INVITE; resolves with the confirmed dialog on 2xx, rejects with SipError otherwise. */
  run(): Promise<Dialog> {
    return new Promise<Dialog>((resolve, reject) => {
      this.settle = { resolve, reject };
      this.o.onCallId?.(this.callId);
      const signal = this.o.signal;
      if (signal?.aborted) {
        this.finish(new SipError(487, 'Request Terminated'));
        return;
      }
      signal?.addEventListener('abort', this.onAbort);
      if (this.o.ringTimeoutMs) this.ringTimer = setTimeout(() => this.cancel(408, 'Request Timeout'), this.o.ringTimeoutMs);
      this.host.send(this.rq, (rs, hop) => this.onResponse(rs, hop));
    });
  }

  private build(): SipRequest {
    return {
      method: 'INVITE',
      uri: { ...this.uri, params: { ...this.uri.params } },
      headers: {
        via: [],
        to: this.to,
        from: this.from,
        'call-id': this.callId,
        cseq: { seq: this.seq, method: 'INVITE' },
        contact: [this.host.contactFor(this.transport, targetIsSips(this.target))],
        'max-forwards': 70,
        allow: ALLOW_HEADER,
        'content-type': 'application/sdp',
        ...(this.host.outboundProxy ? { route: [this.proxyRoute()] } : {}),
        ...(this.host.userAgent ? { 'user-agent': this.host.userAgent } : {}),
        ...(this.o.headers ?? {}),
      },
      content: this.o.sdp,
    };
  }

  /** A loose Route to the outbound proxy (it Record-Routes, so the dialog's requests pass it too). */
  private proxyRoute(): NameAddr {
    return { uri: `sip:${this.host.outboundProxy};lr`, params: {} };
  }

  private finish(err: SipError | null, d?: Dialog): void {
    if (this.done) return;
    this.done = true;
    if (this.ringTimer) clearTimeout(this.ringTimer);
    this.o.signal?.removeEventListener('abort', this.onAbort);
    if (err) this.settle?.reject(err);
    else if (d) this.settle?.resolve(d);
  }

  private sendCancel(): void {
    const via = this.rq.headers.via[0];
    this.host.send({
      method: 'CANCEL',
      uri: this.rq.uri,
      headers: {
        via: via ? [via] : [],
        to: this.rq.headers.to,
        from: this.rq.headers.from,
        'call-id': this.callId,
        cseq: { seq: this.rq.headers.cseq.seq, method: 'CANCEL' },
        'max-forwards': 70,
        // RFC 3261 §9.1: a CANCEL takes the INVITE's Route, so it reaches the same hop.
        ...(this.host.outboundProxy ? { route: [this.proxyRoute()] } : {}),
      },
    });
  }

  private cancel(status: number, reason: string): void {
    if (this.done || this.cancelWanted) return;
    this.cancelWanted = { status, reason };
    // RFC 3261 §9.1: CANCEL only after a provisional response. Without one the caller still gets
    // its answer now (ring timeout honoured); a late provisional gets the CANCEL, a late 2xx an
    // ACK and a BYE (onResponse).
    if (this.provisional) this.sendCancel();
    else this.finish(new SipError(status, reason));
  }

  private onResponse(rs: SipResponse, hop?: Remote): void {
    if (rs.status < 200) {
      if (!this.provisional) {
        this.provisional = true;
        if (this.cancelWanted) this.sendCancel();
      }
      this.o.onProvisional?.(rs);
      return;
    }
    if (rs.status < 300) {
      this.onSuccess(rs, hop);
      return;
    }
    if ((rs.status === 401 || rs.status === 407) && this.o.auth && !this.authTried && !this.cancelWanted) {
      this.retryWithAuth(rs, this.o.auth);
      return;
    }
    if (this.cancelWanted && rs.status === 487) {
      this.finish(new SipError(this.cancelWanted.status, this.cancelWanted.reason));
      return;
    }
    this.finish(new SipError(rs.status, rs.reason || 'Failed'));
  }

  /** `hop`: the connection the INVITE went out on; the dialog's requests reuse it while it is open. */
  private onSuccess(rs: SipResponse, hop?: Remote): void {
    if (this.dialog) {
      this.host.sendAck(this.dialog, rs.headers.cseq.seq); // retransmitted 2xx
      return;
    }
    const contact = Array.isArray(rs.headers.contact) ? rs.headers.contact[0] : undefined;
    const dialog = new Dialog(
      {
        callId: this.callId,
        direction: 'outbound',
        local: this.from,
        remote: rs.headers.to,
        remoteTarget: sip.stringifyUri(contact?.uri ?? this.target),
        routeSet: [...(rs.headers['record-route'] ?? [])].reverse(),
        localSeq: this.seq,
        remoteSeq: 0,
        localSdp: this.o.sdp,
        remoteSdp: rs.content ?? null,
        transport: this.transport,
        // RFC 5923 / RFC 5626 flow reuse: ACK, BYE and re-INVITEs go over the connection the INVITE
        // went out on while it is open, not to the Contact, which a callee behind NAT or a PBX may
        // give unreachable. Falls back to the Contact once that connection has closed.
        flow: hop && hop.protocol.toUpperCase() !== 'UDP' ? { protocol: hop.protocol.toUpperCase(), address: hop.address, port: hop.port } : null,
      },
      this.host,
    );
    this.dialog = dialog;
    this.host.addDialog(dialog);
    this.host.sendAck(dialog, this.seq);
    if (this.done) {
      // Answered after we gave up (CANCEL crossed the 200): hang up at once (RFC 3261 §9.1).
      void dialog.bye('cancelled');
      return;
    }
    if (this.cancelWanted) {
      void dialog.bye('cancelled');
      this.finish(new SipError(this.cancelWanted.status, this.cancelWanted.reason));
      return;
    }
    const refused = this.host.outboundProxy ? rs.headers[EDGE_REFUSED_HEADER] : undefined;
    if (refused !== undefined) {
      void dialog.bye('refused by the edge');
      const why = typeof refused === 'string' ? refused.slice(0, 200) : 'no reason given';
      this.finish(new SipError(502, `Bad Gateway (the edge refused the answer: ${why})`));
      return;
    }
    this.finish(null, dialog);
  }

  private retryWithAuth(rs: SipResponse, auth: { username: string; password: string }): void {
    this.authTried = true;
    this.seq++;
    const next = this.build();
    try {
      digest.signRequest({}, next, rs, { user: auth.username, password: auth.password });
    } catch {
      this.finish(new SipError(rs.status, rs.reason));
      return;
    }
    this.rq = next;
    this.provisional = false;
    this.host.send(this.rq, (r, hop) => this.onResponse(r, hop));
  }
}
