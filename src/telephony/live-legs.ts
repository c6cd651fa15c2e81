// The SIP legs live on this node: each connected leg is attached to its session and recorded as
// connected; when it ends it is detached, counted and recorded as ended, with the other ends of the
// same loop turn in one statement (a BYE burst is one commit), and always after its connected row.
import type { Logger } from 'pino';
import { TurnBatch, type CallEnd, type Db } from '../store/index.js';
import * as repo from '../store/index.js';
import type { SipLeg } from './call-leg.js';
import type { CallStats } from './call-stats.js';
import type { SessionAttachment, TelephonySessionPort } from './session-port.js';

interface Entry {
  leg: SipLeg;
  attachment: SessionAttachment | null;
  /** Settles once the connected row is written (or failed): the end is written after it. */
  connected: Promise<void>;
}

export class LiveLegs {
  private readonly entries = new Map<string, Entry>();
  /** Live legs by session: lists replaced, never changed in place, so a caller may walk one while legs end. */
  private readonly bySession = new Map<string, readonly SipLeg[]>();
  private readonly ends: TurnBatch<CallEnd>;
  /** Ends waiting for their call's connected row before they join the batch. */
  private readonly queuing = new Set<Promise<void>>();

  constructor(private readonly o: { db: Db; log: Logger; sessions: TelephonySessionPort; stats: CallStats }) {
    this.ends = new TurnBatch((ends) => repo.recordCallsEnded(o.db, ends), o.log, 'recording ended calls');
  }

  get size(): number {
    return this.entries.size;
  }

  all(): SipLeg[] {
    return [...this.entries.values()].map((e) => e.leg);
  }

  /** A lookup, not a scan: the heartbeat asks it for every live session, the API for every call read. */
  ofSession(sessionId: string): readonly SipLeg[] {
    return this.bySession.get(sessionId) ?? [];
  }

  /** Attaches a connected leg to its session and records it; hangs up when the session is gone. */
  async bridge(leg: SipLeg): Promise<void> {
    const entry: Entry = { leg, attachment: null, connected: Promise.resolve() };
    this.entries.set(leg.id, entry);
    this.bySession.set(leg.sessionId, [...this.ofSession(leg.sessionId), leg]);
    leg.once('ended', (e) => this.onEnded(entry, e.reason, e.durationSeconds));
    let attachment: SessionAttachment | null = null;
    try {
      attachment = await this.o.sessions.attachLeg(leg.sessionId, leg);
    } catch (err) {
      this.o.log.warn({ err, sessionId: leg.sessionId }, 'attaching leg failed');
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
    leg.onAudio(attachment.pushAudio);
    entry.connected = repo
      .recordCallConnected(this.o.db, {
        callId: leg.id,
        sessionId: leg.sessionId,
        orgId: leg.orgId,
        provider: leg.provider,
        data: { session_id: leg.sessionId, provider: { type: leg.provider, call_sid: leg.callSid, status: 'connected', from: leg.from, to: leg.to } },
      })
      .catch((err) => this.o.log.error({ err, callSid: leg.callSid }, 'recording connected call failed'));
    await entry.connected;
    this.o.log.info({ callSid: leg.callSid, sessionId: leg.sessionId, party: leg.party, direction: leg.direction }, 'call connected');
  }

  /** Writes the ends still pending (shutdown: before the database closes). */
  async flush(): Promise<void> {
    await Promise.all(this.queuing);
    await this.ends.flush();
  }

  private onEnded(entry: Entry, reason: string, durationSeconds: number): void {
    const leg = entry.leg;
    this.entries.delete(leg.id);
    const rest = this.ofSession(leg.sessionId).filter((l) => l !== leg);
    if (rest.length) this.bySession.set(leg.sessionId, rest);
    else this.bySession.delete(leg.sessionId);
    this.o.stats.countCall(leg.direction, 'completed');
    this.o.stats.addEnded(leg);
    try {
      entry.attachment?.detach(reason);
    } catch (err) {
      this.o.log.warn({ err }, 'detaching leg failed');
    }
    const end: CallEnd = {
      callId: leg.id,
      orgId: leg.orgId,
      status: 'completed',
      reason,
      data: {
        session_id: leg.sessionId,
        provider: {
          type: leg.provider,
          call_sid: leg.callSid,
          status: 'disconnected',
          disconnect_reason: reason,
          duration: durationSeconds,
          quality: leg.callQuality,
        },
      },
    };
    const queued = entry.connected.then(() => this.ends.add(end));
    this.queuing.add(queued);
    void queued.finally(() => this.queuing.delete(queued));
    const q = leg.callQuality;
    this.o.log.info(
      { callSid: leg.callSid, reason, durationSeconds, mos: q.mos, lossPercent: q.loss_percent, jitterMs: q.jitter_ms, rttMs: q.rtt_ms, media: leg.finalStats },
      'call ended',
    );
  }
}
