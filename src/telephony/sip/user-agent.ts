// SIP user agent on the npm `sip` package (RFC 3261 transactions over UDP and TCP), wrapped in a
// small promise API: inbound INVITEs arrive as IncomingInvite objects, `answer()` gives a Dialog,
// `call()` places an outbound INVITE (with digest auth retry) and resolves with a Dialog.
import sip, { type NameAddr, type Remote, type SipMessage, type SipRequest, type SipResponse } from 'sip';
import { Dialog } from './dialog.js';
import { ClientInvite, type CallOptions, type ClientInviteHost } from './client-invite.js';
import { IncomingInvite } from './incoming-invite.js';
import { ALLOW_HEADER } from './errors.js';
import { validateRequest } from './validate.js';
import { reserveSipPort } from './bind-check.js';
import { createSipStack, type FrontStack } from './stack.js';
import { pooledRandomBytes } from '../../random.js';
import type { SourceGuard } from './source-guard.js';
import type { TrustedEdge } from './trusted-edge.js';
import type { SipLimits } from './framing.js';
import type { IngressLimits } from './ingress-queue.js';
import type { StreamLimits, TlsMaterial } from './transports.js';
import { applyTransport, contactFor, requestIsSips, targetIsSips, transportOfVia, type SipTransportName } from './secure-transport.js';

export type { CallOptions } from './client-invite.js';

export interface SipLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface UserAgentOptions {
  host: string;
  port: number;
  transports: ('udp' | 'tcp')[];
  /** Address put in Via, Contact and SDP (the public address behind NAT). */
  advertisedAddress: string;
  userAgent?: string;
  logger?: SipLogger;
  limits?: Partial<SipLimits>;
  stream?: Partial<StreamLimits>;
  /** SO_RCVBUF asked for the UDP socket (sip.udpReceiveBufferBytes). */
  udpReceiveBufferBytes?: number;
  /** UDP datagrams handled a few ms per event-loop turn (sip.udpIngressBudgetMs, sip.udpIngressQueueMax). */
  udpIngress?: IngressLimits;
  /** SIP over TLS listener (off when null/absent). */
  tls?: { port: number; material: TlsMaterial } | null;
  /** Per-source flood and scanner defences, checked before anything else looks at a request. */
  guard?: SourceGuard;
  /** Behind an SBC: requests only from it, the caller's address from its header (trusted-edge.ts). */
  edge?: TrustedEdge;
  /** `host:port` every dial is routed through (a preloaded loose Route, RFC 3261 §8.1.2): the edge. */
  outboundProxy?: string | null;
  /** Input the front refused before parsing (hostile or malformed), for counters and logs. */
  onRefused?(fault: string, remote: { address: string; port: number; protocol: string }, detail?: string): void;
  /** SIP capture: every message sent and received as on the wire, with its peer (never blocks; see capture/sip-capture.ts). */
  onCapture?(direction: 'in' | 'out', m: SipMessage, wire: string, remote: Remote): void;
  /**
   * Seconds a caller should wait while this node answers new INVITEs 503 (draining, full, media path overloaded),
   * null while it takes calls: OPTIONS then gets the same 503, as RFC 3261 §11.2 asks, so an edge that
   * probes its nodes (Kamailio's dispatcher) stops sending calls here instead of bouncing each one.
   */
  refusingCalls?(): number | null;
}

export interface UserAgentHandlers {
  /** A new INVITE outside any dialog; 100 Trying has been sent. */
  onInvite(invite: IncomingInvite): void;
}

const T1 = 500;
const T2 = 4000;
const ACK_WAIT_MS = 64 * T1;
const noopLogger: SipLogger = { debug() {}, info() {}, warn() {} };

export const newTag = (): string => pooledRandomBytes(6).toString('hex');
export const newCallId = (host: string): string => `${pooledRandomBytes(12).toString('hex')}@${host}`;

interface Pending2xx {
  timer: NodeJS.Timeout | null;
  giveUp: NodeJS.Timeout;
  dialog: Dialog | null;
}

export class UserAgent implements ClientInviteHost {
  private readonly stack: FrontStack;
  private readonly dialogs = new Map<string, Dialog>();
  private readonly invites = new Map<string, IncomingInvite>();
  private readonly pending2xx = new Map<string, Pending2xx>();
  private readonly log: SipLogger;
  private closed = false;
  /** Requests taken in by method (after the trusted-edge check): how much reached this node. */
  readonly requestCounts: Record<string, number> = {};

  private constructor(
    readonly o: UserAgentOptions,
    private readonly handlers: UserAgentHandlers,
  ) {
    this.log = o.logger ?? noopLogger;
    this.stack = createSipStack(
      {
        host: o.host,
        port: o.port,
        transports: o.transports,
        publicAddress: o.advertisedAddress,
        limits: o.limits,
        stream: o.stream,
        udpReceiveBufferBytes: o.udpReceiveBufferBytes,
        udpIngress: o.udpIngress,
        tls: o.tls,
        onError: (e) => this.log.warn({ err: String(e) }, 'sip stack error'),
        onWarning: (message, fields) => this.log.warn(fields, message),
        onSend: (m, wire, target) => {
          this.log.debug({ target, msg: wire }, 'sip send');
          o.onCapture?.('out', m, wire, target);
        },
        onReceive: (m, wire, remote) => {
          this.log.debug({ remote, msg: wire }, 'sip recv');
          o.onCapture?.('in', m, wire, remote);
        },
        onRefused: (fault, remote, detail) => {
          o.onRefused?.(fault, remote, detail);
          // Hostile input counts against its source; an idle connection closing is no fault.
          if (fault !== 'idle_timeout' && fault !== 'socket_error') o.guard?.strike(remote.address, `refused input (${fault})`);
        },
      },
      (rq, remote) => this.onRequest(rq, remote),
    );
  }

  /** Starts the stack on o.port (0: any free port; read `port` afterwards). Rejects when the port is taken. */
  static async start(o: UserAgentOptions, handlers: UserAgentHandlers): Promise<UserAgent> {
    const port = await reserveSipPort(o.port, o.host, o.transports);
    const tls = o.tls && { ...o.tls, port: await reserveSipPort(o.tls.port, o.host, ['tcp']) };
    return new UserAgent({ ...o, port, tls }, handlers);
  }

  get port(): number {
    return this.o.port;
  }

  /** The SIP-over-TLS port, or null when TLS is off. */
  get tlsPort(): number | null {
    return this.o.tls?.port ?? null;
  }

  /** Live dialogs plus INVITEs not yet answered. */
  get activeCount(): number {
    return this.dialogs.size + this.invites.size;
  }

  get dialogCount(): number {
    return this.dialogs.size;
  }

  get pendingInviteCount(): number {
    return this.invites.size;
  }

  /** Our Contact on `transport`; a sips: URI over TLS when the dialog is secure (`sips`). */
  contactFor(transport: SipTransportName, sips = false): NameAddr {
    return contactFor(transport, this.o.advertisedAddress, this.o.port, this.o.tls?.port ?? null, sips);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const d of [...this.dialogs.values()]) void d.bye('shutdown');
    for (const inv of [...this.invites.values()]) inv.reject(503, 'Service Unavailable');
    for (const p of this.pending2xx.values()) {
      if (p.timer) clearTimeout(p.timer);
      clearTimeout(p.giveUp);
    }
    // Let the BYEs leave before the sockets close.
    setTimeout(() => this.stack.destroy(), 50).unref();
  }

  // ---- inbound -----------------------------------------------------------------------------

  private onRequest(rq: SipRequest, received: Remote): void {
    if (this.closed) return;
    const remote = this.edgeSource(rq, received);
    if (!remote) return;
    this.requestCounts[rq.method] = (this.requestCounts[rq.method] ?? 0) + 1;
    const ua = rq.headers['user-agent'];
    const verdict = this.o.guard?.check(remote.address, typeof ua === 'string' ? ua : undefined);
    if (verdict && verdict.kind !== 'pass') {
      const source = { address: remote.address, port: remote.port, protocol: remote.protocol };
      if (verdict.kind === 'drop') {
        // Banned sources and scanners get no answer at all (nothing to learn, nothing reflected).
        this.o.onRefused?.(verdict.why, source);
        return;
      }
      this.o.onRefused?.('rate_limited', source);
      if (rq.method !== 'ACK') this.respond(rq, 503, 'Service Unavailable', { headers: { 'retry-after': String(verdict.retryAfterSeconds) } });
      return;
    }
    try {
      this.dispatch(rq, remote, received);
    } catch (err) {
      this.log.warn({ err: String(err), method: rq.method }, 'sip request failed');
      if (rq.method !== 'ACK') this.respond(rq, 500, 'Server Internal Error');
    }
  }

  /** With a trusted edge: the caller's address for everything that follows, or null (refused, counted). */
  private edgeSource(rq: SipRequest, received: Remote): Remote | null {
    if (!this.o.edge) return received;
    const key = `${rq.headers['call-id']}:${rq.headers.to?.params?.tag ?? ''}`;
    const verdict = this.o.edge.classify(rq, received, () => this.dialogs.get(key)?.direction === 'outbound');
    if (verdict.kind === 'refuse') {
      this.o.onRefused?.('not_from_edge', { address: received.address, port: received.port, protocol: received.protocol });
      return null;
    }
    if (verdict.kind !== 'edge') return received;
    // The caller's TLS hop to the edge (client certificate included, and SRTP it terminates) stands in for ours, which is the edge's.
    return { ...received, address: verdict.source, ...(verdict.tls ? { tls: verdict.tls } : {}), ...(verdict.srtp ? { edgeSrtp: true } : {}) };
  }

  /** `remote`: the caller (behind an edge, the address it names); `received`: the hop the request came over. */
  private dispatch(rq: SipRequest, remote: Remote, received: Remote): void {
    const problem = validateRequest(rq);
    if (problem) {
      if (rq.method !== 'ACK') this.respond(rq, problem.status, problem.reason, problem.headers ? { headers: problem.headers } : undefined);
      return;
    }
    const callId = rq.headers['call-id'];
    const toTag = rq.headers.to.params.tag;
    if (rq.method === 'ACK') {
      const key = `${callId}:${toTag ?? ''}`;
      const p = this.pending2xx.get(key);
      if (p) this.ack2xx(key, p);
      this.dialogs.get(key)?.handleRequest(rq);
      return;
    }
    if (toTag) {
      const dialog = this.dialogs.get(`${callId}:${toTag}`);
      if (dialog) dialog.handleRequest(rq);
      else this.respond(rq, 481, 'Call/Transaction Does Not Exist');
      return;
    }
    switch (rq.method) {
      case 'INVITE': {
        const key = this.inviteKey(rq);
        if (this.invites.has(key)) return; // retransmission the transaction layer did not absorb
        this.respond(rq, 100, 'Trying');
        const inv = new IncomingInvite(rq, remote, this, newTag(), received);
        this.invites.set(key, inv);
        this.handlers.onInvite(inv);
        return;
      }
      case 'CANCEL': {
        const inv = this.invites.get(this.inviteKey(rq));
        if (!inv) {
          this.respond(rq, 481, 'Call/Transaction Does Not Exist');
          return;
        }
        this.respond(rq, 200, 'OK');
        inv.cancel();
        return;
      }
      case 'OPTIONS': {
        // Carriers and the edge ping with OPTIONS; answer as an INVITE would be answered (RFC 3261 §11.2).
        const retryAfter = this.o.refusingCalls?.() ?? null;
        if (retryAfter !== null) this.respond(rq, 503, 'Service Unavailable', { headers: { 'retry-after': String(retryAfter), allow: ALLOW_HEADER } });
        else this.respond(rq, 200, 'OK', { headers: { allow: ALLOW_HEADER, accept: 'application/sdp', supported: '' } });
        return;
      }
      case 'BYE':
      case 'INFO':
        this.respond(rq, 481, 'Call/Transaction Does Not Exist');
        return;
      default:
        this.respond(rq, 405, 'Method Not Allowed', { headers: { allow: ALLOW_HEADER } });
    }
  }

  private inviteKey(rq: SipRequest): string {
    return `${rq.headers['call-id']}:${rq.headers.via[0]?.params.branch ?? ''}`;
  }

  forgetInvite(inv: IncomingInvite): void {
    this.invites.delete(this.inviteKey(inv.req));
  }

  respond(rq: SipRequest, status: number, reason: string, extra?: { headers?: Record<string, unknown>; content?: string }, reliable2xx = false): void {
    const rs = sip.makeResponse(rq, status, reason, extra);
    if (this.o.userAgent) rs.headers.server = this.o.userAgent;
    if (reliable2xx && rq.method === 'INVITE') {
      // Our tag is already in To for in-dialog requests.
      rs.headers.contact = [this.contactFor(this.dialogTransport(rq), requestIsSips(rq))];
      this.sendReliable2xx(rq, rs, null);
      return;
    }
    this.stack.send(rs);
  }

  respondTagged(rq: SipRequest, status: number, reason: string, tag: string, extra?: { headers?: Record<string, unknown>; content?: string }): void {
    const rs = sip.makeResponse(rq, status, reason, extra);
    rs.headers.to = { ...rq.headers.to, params: { ...rq.headers.to.params, tag } };
    if (status > 100 && status < 300) {
      rs.headers.contact = [this.contactFor(this.dialogTransport(rq), requestIsSips(rq))];
      // §12.1.1: every response that creates a (early) dialog copies the Record-Route.
      if (rq.headers['record-route']) rs.headers['record-route'] = rq.headers['record-route'];
    }
    if (this.o.userAgent) rs.headers.server = this.o.userAgent;
    this.stack.send(rs);
  }

  acceptInvite(inv: IncomingInvite, localSdp: string): Dialog {
    const rq = inv.req;
    const rs = sip.makeResponse(rq, 200, 'OK', { headers: { 'content-type': 'application/sdp', allow: ALLOW_HEADER }, content: localSdp });
    const local: NameAddr = { ...rq.headers.to, params: { ...rq.headers.to.params, tag: inv.localTag } };
    rs.headers.to = local;
    const transport = this.dialogTransport(rq);
    rs.headers.contact = [this.contactFor(transport, requestIsSips(rq))];
    if (rq.headers['record-route']) rs.headers['record-route'] = rq.headers['record-route'];
    const contact = Array.isArray(rq.headers.contact) ? rq.headers.contact[0] : undefined;
    const dialog = new Dialog(
      {
        callId: inv.callId,
        direction: 'inbound',
        local,
        remote: rq.headers.from,
        remoteTarget: sip.stringifyUri(contact?.uri ?? rq.headers.from.uri),
        routeSet: rq.headers['record-route'] ?? [],
        localSeq: Math.floor(Math.random() * 10000),
        remoteSeq: rq.headers.cseq.seq,
        localSdp,
        remoteSdp: inv.sdp,
        transport,
        // Our requests in this dialog go back over the connection the caller opened, while it is open.
        flow: inv.flow,
      },
      this,
    );
    this.dialogs.set(`${inv.callId}:${inv.localTag}`, dialog);
    this.sendReliable2xx(rq, rs, dialog);
    return dialog;
  }

  private dialogTransport(rq: SipRequest): SipTransportName {
    return transportOfVia(rq);
  }

  /** RFC 3261 §13.3.1.4: the UAS core retransmits 2xx until ACK, T1 doubling to T2, for 64*T1. */
  private sendReliable2xx(rq: SipRequest, rs: SipResponse, dialog: Dialog | null): void {
    const key = `${rq.headers['call-id']}:${rs.headers.to.params.tag ?? ''}`;
    const old = this.pending2xx.get(key);
    if (old) this.ack2xx(key, old);
    this.stack.send(rs);
    const reliable = this.dialogTransport(rq) !== 'udp';
    const p: Pending2xx = {
      timer: null,
      dialog,
      giveUp: setTimeout(() => {
        this.ack2xx(key, p);
        if (dialog && !dialog.isDestroyed) {
          this.log.warn({ callId: rq.headers['call-id'] }, 'no ACK for 200 OK');
          void dialog.bye('ack_timeout');
        }
      }, ACK_WAIT_MS),
    };
    if (!reliable) {
      const resend = (t: number): void => {
        p.timer = setTimeout(() => {
          this.stack.send(rs);
          resend(Math.min(t * 2, T2));
        }, t);
      };
      resend(T1);
    }
    this.pending2xx.set(key, p);
  }

  private ack2xx(key: string, p: Pending2xx): void {
    if (p.timer) clearTimeout(p.timer);
    clearTimeout(p.giveUp);
    this.pending2xx.delete(key);
  }

  forget(dialog: Dialog): void {
    const key = `${dialog.callId}:${dialog.localTag}`;
    this.dialogs.delete(key);
    const p = this.pending2xx.get(key);
    if (p) this.ack2xx(key, p);
  }

  // ---- outbound ----------------------------------------------------------------------------

  sendRequest(dialog: Dialog, method: string, extra?: { headers?: Record<string, unknown>; content?: string }): Promise<SipResponse> {
    const seq = ++dialog.localSeq;
    const rq = this.inDialogRequest(dialog, method, seq);
    rq.headers = { ...rq.headers, contact: [this.contactFor(dialog.transport, targetIsSips(dialog.remoteTarget))], ...(extra?.headers ?? {}) };
    rq.content = extra?.content;
    return new Promise((resolve) => {
      this.stack.send(
        rq,
        (rs) => {
          if (rs.status < 200) return;
          if (method === 'INVITE' && rs.status < 300) this.sendAck(dialog, seq);
          resolve(rs);
        },
        dialog.flow,
      );
    });
  }

  sendAck(dialog: Dialog, seq: number): void {
    this.stack.send(this.inDialogRequest(dialog, 'ACK', seq), undefined, dialog.flow);
  }

  /** A request inside the dialog (RFC 3261 §12.2.1.1): remote target as Request-URI, route set, tags, Call-ID. */
  private inDialogRequest(dialog: Dialog, method: string, seq: number): SipRequest {
    const uri = sip.parseUri(dialog.remoteTarget) ?? dialog.remoteTarget;
    if (typeof uri === 'object') applyTransport(uri, dialog.transport);
    return {
      method,
      uri,
      headers: {
        via: [],
        to: dialog.remote,
        from: dialog.local,
        'call-id': dialog.callId,
        cseq: { seq, method },
        'max-forwards': 70,
        ...(dialog.routeSet.length ? { route: dialog.routeSet.map((r) => ({ ...r })) } : {}),
      },
    };
  }

  /**
   * Places a call. Resolves with the confirmed dialog on 2xx; rejects with SipError on a final
   * failure (after one digest retry on 401/407), on ring timeout (408) or when aborted (487).
   */
  call(target: string, o: CallOptions): Promise<Dialog> {
    try {
      const invite = new ClientInvite(this, target, o, o.callId ?? newCallId(this.o.advertisedAddress), o.fromTag ?? newTag());
      return invite.run();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  // ---- ClientInviteHost ----------------------------------------------------------------------

  send(m: SipMessage, onResponse?: (rs: SipResponse, hop?: Remote) => void): void {
    this.stack.send(m, onResponse);
  }

  addDialog(dialog: Dialog): void {
    this.dialogs.set(`${dialog.callId}:${dialog.localTag}`, dialog);
  }

  get userAgent(): string | undefined {
    return this.o.userAgent;
  }

  get outboundProxy(): string | null {
    return this.o.outboundProxy ?? null;
  }
}
