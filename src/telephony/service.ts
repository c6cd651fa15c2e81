// The telephony front, composed: a SIP user agent (sip/user-agent.ts) whose INVITEs go through
// admission (inbound.ts) and media set-up (media-setup.ts), outbound dials (outbound.ts), the live
// legs bridged into sessions (live-legs.ts) and the counters for /metrics (call-stats.ts).
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { Party } from '../sessions/index.js';
import { MediaClock, overloadLimits, processMediaClock, startNodeOverloadGuard, type OverloadGuard, type TickSource } from '../media/index.js';
import { UserAgent } from './sip/user-agent.js';
import { RefusalCounter } from './sip/refusals.js';
import { SourceGuard } from './sip/source-guard.js';
import { TrustedEdge } from './sip/trusted-edge.js';
import type { IncomingInvite } from './sip/incoming-invite.js';
import { SipError } from './sip/errors.js';
import { SourceAuth } from './source-auth.js';
import { rtpMediaClock } from './rtp/endpoint.js';
import type { CallQuality } from './rtp/call-quality.js';
import { MediaAnchor } from './media-anchor.js';
import type { SipLeg } from './call-leg.js';
import { TelephonyError } from './errors.js';
import type { DialRequest } from './dial-target.js';
import type { TelephonySessionPort } from './session-port.js';
import { answerInbound, InboundAdmission, inboundRepo, type OwnerLookup } from './inbound.js';
import { OutboundDialer, REFUSED_RETRY_AFTER_SECONDS } from './outbound.js';
import { CallStats } from './call-stats.js';
import { LiveLegs } from './live-legs.js';
import type { MediaSetupDeps } from './media-setup.js';
import { SipCapture } from './capture/sip-capture.js';
import { HepSender } from './capture/hep.js';
import { tlsListenerOf } from './tls-config.js';

export interface TelephonyOptions {
  config: Config;
  logger: Logger;
  db: Db;
  sessions: TelephonySessionPort;
  /** Default: the process's media clock, which the session pacers tick on too; tests pass a manual one. */
  clock?: TickSource;
  /**
   * Scale-out (DESIGN.md): the SIP contact of the node that owns a session live, when that is
   * another node (null: no other node owns it, the call is taken here). `sip` null: the owner runs no SIP.
   */
  ownerElsewhere?: OwnerLookup;
  /** The node's media overload guard (media/overload-guard.ts); absent: the service runs its own. */
  overload?: OverloadGuard;
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
  /** RTP/RTCP quality of the leg so far. */
  quality?: CallQuality;
}

export class TelephonyService {
  ua!: UserAgent;
  private readonly anchor: MediaAnchor | null;
  private readonly log: Logger;
  private readonly stats: CallStats;
  private readonly legs: LiveLegs;
  private readonly media: MediaSetupDeps;
  private readonly admission: InboundAdmission;
  private readonly outbound: OutboundDialer;
  /** Input the SIP front refused, by fault (metrics). */
  readonly refusals: RefusalCounter;
  readonly guard: SourceGuard;
  readonly edge: TrustedEdge;
  /** SIP capture (config.sipCapture), null when off. */
  readonly capture: SipCapture | null;
  /** Turns new calls away while the media clock runs late (config.sip.overloadLatePercent; off at 0). */
  readonly overload: OverloadGuard;
  private readonly ownsOverload: boolean;
  private closed = false;
  /** True once drain() began: new INVITEs get 503 + Retry-After while live calls finish. */
  draining = false;

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
    const clock = o.clock ?? rtpMediaClock;
    const cap = o.config.sipCapture;
    this.capture = cap.enabled
      ? new SipCapture({
          db: o.db,
          log: this.log,
          queueSize: cap.queueSize,
          batchSize: cap.batchSize,
          hep: cap.hepAddress ? HepSender.fromAddress(cap.hepAddress) : null,
          hepAgentId: cap.hepAgentId,
        })
      : null;
    this.anchor = o.config.rtpengine.ng ? new MediaAnchor({ ng: o.config.rtpengine.ng, timeoutMs: o.config.rtpengine.timeoutMs }) : null;
    this.stats = new CallStats(clock);
    // The node's guard (server.ts: it admits streams too), else one of our own over the process's clock
    // (a manual clock, in tests, keeps no time of its own).
    this.ownsOverload = !o.overload;
    this.overload =
      o.overload ??
      startNodeOverloadGuard(clock instanceof MediaClock ? clock : processMediaClock, overloadLimits(o.config.sip), this.log, () => ({
        calls: this.legs.size,
      }));
    this.legs = new LiveLegs({ db: o.db, log: this.log, sessions: o.sessions, stats: this.stats });
    this.media = { sip: o.config.sip, db: o.db, anchor: this.anchor, clock };
    const sourceAuth = new SourceAuth({ db: o.db, secretKey: o.config.secretKey, realm: o.config.sip.realm, guard: this.guard });
    this.admission = new InboundAdmission({
      repo: inboundRepo(o.db),
      sourceAuth,
      isAllowListed: (address) => this.guard.isAllowListed(address),
      accepting: () => !this.closed && !this.draining,
      // Capacity counts live legs and INVITEs being set up (this one included).
      load: () => this.legs.size + this.ua.pendingInviteCount,
      maxCalls: o.config.sip.maxConcurrentCalls,
      overloaded: () => this.overload.overloaded,
      anchored: this.anchor !== null,
      customerBusy: (sessionId) => this.legs.ofSession(sessionId).some((l) => l.party === 'customer'),
      ownerElsewhere: o.ownerElsewhere,
      count: (result) => this.stats.countCall('inbound', result),
      log: this.log,
    });
    this.outbound = new OutboundDialer({
      config: o.config,
      db: o.db,
      media: this.media,
      ua: () => this.ua,
      legsOf: (id) => this.legs.ofSession(id),
      liveCount: () => this.legs.size,
      accepting: () => !this.closed,
      draining: () => this.draining,
      overloaded: () => this.overload.overloaded,
      count: (result) => this.stats.countCall('outbound', result),
    });
  }

  /** Binds the SIP port (config.sip.port; 0 picks a free one, see `sipPort`). */
  static async start(o: TelephonyOptions): Promise<TelephonyService> {
    const svc = new TelephonyService(o);
    const sip = o.config.sip;
    svc.ua = await UserAgent.start(
      {
        host: sip.host,
        port: sip.port,
        transports: sip.transports,
        advertisedAddress: sip.advertisedAddress,
        userAgent: 'voxbridge',
        logger: svc.log,
        limits: sip.limits,
        stream: sip.stream,
        udpReceiveBufferBytes: sip.udpReceiveBufferBytes,
        udpIngress: { budgetMs: sip.udpIngressBudgetMs, maxQueued: sip.udpIngressQueueMax },
        tls: tlsListenerOf(sip.tls),
        guard: svc.guard,
        edge: svc.edge.enabled ? svc.edge : undefined,
        outboundProxy: sip.trustedEdge.outboundProxy ?? null,
        onRefused: (fault, remote, detail) => svc.refusals.record(fault, remote, detail),
        refusingCalls: () => (svc.admission.refusesCalls(1) ? REFUSED_RETRY_AFTER_SECONDS : null),
        onCapture: svc.capture
          ? (dir, m, wire, remote) => svc.capture?.record(dir, m, wire, remote.protocol, { address: sip.advertisedAddress, port: svc.ua.port }, remote)
          : undefined,
      },
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
  get callCounts(): Record<string, number> {
    return this.stats.callCounts;
  }

  countCall(direction: 'inbound' | 'outbound', result: string): void {
    this.stats.countCall(direction, result);
  }

  /** Media counters: live legs (legs, maxTargetFrames, maxJitterMs) and totals since start (the rest). */
  mediaStats(): Record<string, number> {
    return this.stats.mediaStats(this.legs.all());
  }

  /** SIP capture counters (metrics): captured, written, dropped, hep_sent, hep_failed. */
  captureCounts(): Record<string, number> {
    const c = this.capture;
    if (!c) return {};
    return { ...c.counts, queued: c.queued, ...(c.hep ? { hep_sent: c.hep.sent, hep_failed: c.hep.failed } : {}) };
  }

  legsOf(sessionId: string): readonly SipLeg[] {
    return this.legs.ofSession(sessionId);
  }

  /**
   * Graceful drain (rolling upgrades): stop taking INVITEs and dials (503 + Retry-After), cancel
   * dials still ringing, let live calls end on their own for up
   * to `maxMs`, then return (close() ends what is left with BYE). Resolves at once with no calls.
   */
  async drain(maxMs: number): Promise<void> {
    this.draining = true;
    // Dials still ringing would become new calls on a node about to stop: cancel them now.
    if (this.outbound.pendingCount > 0) this.log.info({ dials: this.outbound.pendingCount }, 'draining: cancelling ringing dials');
    this.outbound.cancelPending();
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
    if (this.ownsOverload) this.overload.stop();
    for (const leg of this.legs.all()) leg.close('shutdown');
    this.ua.close();
    this.anchor?.close();
    await this.legs.flush();
    if (this.capture) {
      // The BYEs just sent are captured too: the UA sends them before its sockets close (50 ms).
      await new Promise((r) => setTimeout(r, 60));
      await this.capture.close();
    }
  }

  private async onInvite(inv: IncomingInvite): Promise<void> {
    try {
      const admitted = await this.admission.admit(inv);
      if (!admitted) return;
      inv.progress(180);
      const leg = await answerInbound(inv, admitted, this.media, this.log);
      if (leg) await this.legs.bridge(leg);
    } catch (err) {
      if (err instanceof SipError) {
        this.stats.countCall('inbound', `rejected_${err.status}`);
        inv.reject(err.status, err.reason, err.status === 503 ? { 'retry-after': String(REFUSED_RETRY_AFTER_SECONDS) } : undefined);
      } else {
        this.log.error({ err, callId: inv.callId }, 'inbound call failed');
        inv.reject(500, 'Server Internal Error');
      }
    }
  }

  /** Dials out for a session and resolves once the call is answered (or throws TelephonyError). */
  async dial(sessionId: string, orgId: string, req: DialRequest): Promise<CallView> {
    const leg = await this.outbound.dial(sessionId, orgId, req);
    await this.legs.bridge(leg);
    return { ...viewOf(leg), status: leg.isEnded ? 'completed' : 'in-progress' };
  }

  /** Hangs up the session's SIP legs (all, one party's, or one call by id or Call-ID). */
  async hangup(sessionId: string, orgId: string, req: { call_id?: string; party?: Party }): Promise<CallView[]> {
    const s = await repo.getTelephonySession(this.o.db, sessionId);
    if (!s || s.org_id !== orgId) throw new TelephonyError('session_not_found', 'No such session.');
    const legs = this.legsOf(sessionId).filter(
      (l) => (!req.party || l.party === req.party) && (!req.call_id || l.id === req.call_id || l.callSid === req.call_id),
    );
    if (legs.length === 0) throw new TelephonyError('session_not_dialable', 'The session has no active SIP leg to hang up.');
    const views: CallView[] = [];
    for (const leg of legs) {
      const ended = new Promise<void>((r) => leg.once('ended', () => r()));
      leg.close('hangup');
      await ended.catch(() => undefined);
      views.push({ ...viewOf(leg), status: 'completed', disconnect_reason: 'hangup' });
    }
    return views;
  }
}

function viewOf(leg: SipLeg): CallView {
  return {
    id: leg.id,
    object: 'call',
    provider: leg.provider,
    call_sid: leg.callSid,
    party: leg.party,
    direction: leg.direction,
    status: leg.isEnded ? 'completed' : 'in-progress',
    from: leg.from,
    to: leg.to,
    duration: Math.round((Date.now() - leg.connectedAt.getTime()) / 100) / 10,
    quality: leg.callQuality,
  };
}
