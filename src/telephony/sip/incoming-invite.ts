// The server side of an initial INVITE until it is answered, rejected or cancelled (RFC 3261 §13.3).
import { SafeEmitter } from '../../events/index.js';
import type { NameAddr, Remote, SipRequest } from 'sip';
import { type Dialog } from './dialog.js';
import type { UserAgent } from './user-agent.js';

export interface IncomingInviteEvents {
  /** The caller sent CANCEL; 487 has already been sent. */
  cancel: [];
}

export class IncomingInvite extends SafeEmitter<IncomingInviteEvents> {
  readonly callId: string;
  readonly localTag: string;
  private finished = false;
  private cancelled = false;

  constructor(
    readonly req: SipRequest,
    readonly remote: Remote,
    private readonly ua: UserAgent,
    localTag: string,
    /** The connection the INVITE came over (behind an edge: the edge's), for requests back in the dialog. */
    readonly flow: Remote = remote,
  ) {
    super();
    this.callId = req.headers['call-id'];
    this.localTag = localTag;
  }

  get from(): NameAddr {
    return this.req.headers.from;
  }

  get to(): NameAddr {
    return this.req.headers.to;
  }

  /** The offer, when the INVITE carries one. */
  get sdp(): string | null {
    const ct = String(this.req.headers['content-type'] ?? '');
    return this.req.content && /application\/sdp/i.test(ct) ? this.req.content : null;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name.toLowerCase()];
    return typeof v === 'string' ? v : undefined;
  }

  /** 180 Ringing or 183 Session Progress (with early media SDP). */
  progress(status: 180 | 183, localSdp?: string): void {
    if (this.finished) return;
    const reason = status === 180 ? 'Ringing' : 'Session Progress';
    this.ua.respondTagged(
      this.req,
      status,
      reason,
      this.localTag,
      localSdp ? { headers: { 'content-type': 'application/sdp' }, content: localSdp } : undefined,
    );
  }

  reject(status: number, reason: string, headers?: Record<string, unknown>): void {
    if (this.finished) return;
    this.finished = true;
    this.ua.forgetInvite(this);
    this.ua.respondTagged(this.req, status, reason, this.localTag, headers ? { headers } : undefined);
  }

  /** Sends 200 OK with our SDP and returns the dialog; the 200 is retransmitted until ACK (§13.3.1.4). */
  answer(localSdp: string): Dialog {
    if (this.finished) throw new Error(this.cancelled ? 'INVITE was cancelled' : 'INVITE already answered');
    this.finished = true;
    this.ua.forgetInvite(this);
    return this.ua.acceptInvite(this, localSdp);
  }

  /** Called by the UA on CANCEL: 487 for the INVITE (RFC 3261 §9.2). */
  cancel(): void {
    if (this.finished) return;
    this.cancelled = true;
    this.reject(487, 'Request Terminated');
    this.safeEmit('cancel');
  }
}
