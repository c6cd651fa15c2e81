// The live sessions this node owns (DESIGN.md "Scale-out": a session lives on one node). open()
// loads the row, builds the pipeline and records owner_node; `end` commands from the session bus
// close the live session (stream/ then sends `session.ended` and closes the socket). The registry
// also keeps the clocks around a live session: reconnect grace after its socket drops, throttled
// last_activity_at updates (batched), a local inactivity check, and activation on first audio.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import type { Engines } from '../speech/index.js';
import type { VadChoice } from './processors/vad.js';
import { subscribeSessionCommands, type SessionCommand, type SessionOwnership } from '../coord/index.js';
import {
  TurnBatch,
  fillDetectedLanguage,
  getSessionRow,
  setSessionOwner,
  touchSessions,
  insertEvent,
  insertTranscriptTurn,
  lastTranscriptSequence,
  type SessionRow,
  type WebhookEventType,
} from '../store/index.js';
import type { AgentServices } from '../agents/index.js';
import type { PartyDialer } from './contracts.js';
import { AGENT_MODES, isSessionMode } from './modes.js';
import { activateSessions, endSessions, type SessionEnd } from './lifecycle.js';
import { LiveSession } from './live-session.js';
import { sharedMediaClock, type TickSource } from './media-clock.js';
import { SessionEndedError, SessionNotFoundError } from './errors.js';
import { SessionOwnedElsewhereError } from './ownership.js';

export interface SessionRegistryDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  engines: Engines;
  /** An organization's engines (its own choice, else `engines`); absent: every session uses `engines`. */
  enginesFor?: (orgId: string) => Promise<Engines>;
  /** Dedicated connection for the session bus (subscribe mode); default: redis.duplicate(). */
  subscriber?: Redis;
  clock?: TickSource;
  /** last_activity_at is written at most this often per session (default 5000 ms). */
  touchIntervalMs?: number;
  vad?: VadChoice;
  /**
   * Claims on live sessions across nodes (coord/ownership.ts): open() claims the session or throws
   * SessionOwnedElsewhereError; claims are refreshed while live and released on close.
   */
  ownership?: SessionOwnership;
  /** Called once per live session opened here (the composition root attaches the recorder). */
  onOpened?: (session: LiveSession, row: SessionRow) => void;
  /** The AI agent runtime's shared services (ai_agent, help_chat_voice); without it those modes only transcribe. */
  agents?: AgentServices;
}

interface Entry {
  session: LiveSession;
  streams: number;
  /** While nothing carries the session: when its reconnect grace runs out (Date.now() ms). */
  graceEndsAt: number | null;
  /** An end of this session is on its way to the database (the sweep does not ask again). */
  ending: boolean;
  lastActivity: number;
  lastTouch: number;
  /** What carried the session last (names the end reason when the grace runs out). */
  lastCarrier: 'stream' | 'leg' | null;
}

/** A session whose row names a phone route waits for its leg before `ready` (SPEC: "provider connected"). */
export function awaitsPhoneLeg(row: Pick<SessionRow, 'routing'>): boolean {
  const r = row.routing as { phone_number?: unknown; connection_id?: unknown; type?: unknown } | null;
  return !!r && (!!r.phone_number || !!r.connection_id || r.type === 'sip');
}

/** Sessions ended in one transaction at most (a bound on one statement's size, not on the burst). */
const MAX_ENDS_PER_BATCH = 500;

export class SessionRegistry {
  private readonly live = new Map<string, Entry>();
  private readonly opening = new Map<string, Promise<LiveSession>>();
  /** `end` commands that arrived while their session was being opened here. */
  private readonly endedWhileOpening = new Map<string, string>();
  private readonly clock: TickSource;
  private readonly log: Logger;
  private readonly touchIntervalMs: number;
  private subscriber: Redis | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private touchTimer: NodeJS.Timeout | null = null;
  private claimTimer: NodeJS.Timeout | null = null;
  /** Claim releases in flight (awaited on close, before Redis goes). */
  private readonly releases = new Set<Promise<void>>();
  /** Sessions with activity since the last last_activity_at write. */
  private readonly touched = new Set<string>();
  /** First audio of this loop turn's sessions, activated in one statement (store/turn-batch.ts). */
  private readonly activations: TurnBatch<string>;
  private closing: Promise<void> | null = null;
  private partyDialer: PartyDialer | null = null;

  constructor(private readonly deps: SessionRegistryDeps) {
    this.clock = deps.clock ?? sharedMediaClock;
    this.log = deps.logger.child({ component: 'sessions' });
    this.touchIntervalMs = deps.touchIntervalMs ?? 5000;
    this.activations = new TurnBatch((ids) => activateSessions(deps.db, ids), this.log, 'activating sessions');
  }

  /** Subscribes to the session bus and starts the inactivity check. */
  async start(): Promise<void> {
    const { redis, config } = this.deps;
    this.subscriber = this.deps.subscriber ?? redis.duplicate();
    this.unsubscribe = await subscribeSessionCommands(this.subscriber, config.redisKeyPrefix, (cmd) => this.onCommand(cmd));
    // Grace ends are due to the second at most: a grace of a few seconds (tests) is checked more often.
    const everyMs = Math.min(1000, Math.max(100, (config.limits.reconnectGraceSeconds * 1000) / 4));
    this.sweepTimer = setInterval(() => void this.sweep(), everyMs);
    this.sweepTimer.unref();
    this.touchTimer = setInterval(() => void this.flushTouches(), this.touchIntervalMs);
    this.touchTimer.unref();
    const ownership = this.deps.ownership;
    if (ownership) {
      this.claimTimer = setInterval(() => void this.refreshClaims(ownership), Math.max(100, ownership.ttlMs / 3));
      this.claimTimer.unref();
    }
  }

  /** Keeps this node's claims alive; a session another node has taken meanwhile is closed here. */
  private async refreshClaims(ownership: SessionOwnership): Promise<void> {
    if (this.live.size === 0) return;
    try {
      for (const id of await ownership.refresh([...this.live.keys()])) {
        this.log.warn({ session_id: id }, 'another node took the session over; closing it here');
        this.live.get(id)?.session.close('session_moved');
      }
    } catch (err) {
      this.log.warn({ err }, 'refreshing session claims failed');
    }
  }

  /** Telephony's outbound dial, for agent escalation transfers (set by the composition root once SIP runs). */
  setPartyDialer(dialer: PartyDialer | null): void {
    this.partyDialer = dialer;
  }

  get size(): number {
    return this.live.size;
  }

  get(id: string): LiveSession | undefined {
    return this.live.get(id)?.session;
  }

  /**
   * The live session for `id`, opened on this node if it is not yet. Throws SessionNotFoundError
   * or SessionEndedError. Concurrent calls for one id share one open.
   */
  open(id: string): Promise<LiveSession> {
    const existing = this.live.get(id);
    if (existing) return Promise.resolve(existing.session);
    if (this.closing) return Promise.reject(new Error('node is shutting down'));
    let p = this.opening.get(id);
    if (!p) {
      p = this.doOpen(id).finally(() => {
        this.opening.delete(id);
        this.endedWhileOpening.delete(id);
      });
      this.opening.set(id, p);
    }
    return p;
  }

  private async doOpen(id: string): Promise<LiveSession> {
    const { db, config } = this.deps;
    const row = await getSessionRow(db, id);
    if (!row) throw new SessionNotFoundError(id);
    if (row.status === 'ended') throw new SessionEndedError(id);
    // Rows are written only by session create, which validates the mode; anything else is corruption.
    const mode = row.mode;
    if (!isSessionMode(mode)) throw new Error(`session ${id} has an unknown mode '${mode}'`);
    const owner = await this.deps.ownership?.take(id);
    if (owner) throw new SessionOwnedElsewhereError(id, owner);
    let lastSequence: number;
    let engines: Engines;
    try {
      lastSequence = await lastTranscriptSequence(db, id);
      engines = this.deps.enginesFor ? await this.deps.enginesFor(row.org_id) : this.deps.engines;
      await setSessionOwner(db, id, config.nodeId);
    } catch (err) {
      this.releaseClaim(id);
      throw err;
    }
    const log = this.log.child({ session_id: id });
    const agents = this.deps.agents;
    let agentDef = null;
    if (agents && AGENT_MODES.has(mode)) {
      try {
        agentDef = await agents.loadSessionAgent(db, row.org_id, row.ai_agent);
      } catch (err) {
        this.releaseClaim(id);
        throw err;
      }
      if (!agentDef && row.ai_agent) log.warn({ agent_id: row.ai_agent.id }, 'the session names an agent that no longer exists: transcribing only');
    }
    const session: LiveSession = new LiveSession({
      id,
      orgId: row.org_id,
      mode,
      sourceLanguage: row.source_language,
      targetLanguage: row.target_language,
      // An agent's voice (or its per-session override) speaks in agent sessions.
      voice: agentDef?.voice ? { ...row.voice, ...agentDef.voice } : row.voice,
      engines,
      defaultLanguage: config.engines.stt.defaultLanguage,
      clock: this.clock,
      awaitsLeg: awaitsPhoneLeg(row),
      lastSequence,
      vad: this.deps.vad,
      pacer: { liveMinMarginFrames: config.liveMinMarginFrames, liveMaxMarginFrames: config.liveMaxMarginFrames },
      logger: log,
      agent:
        agents && agentDef
          ? {
              createRuntime: (host) => agents.runtime(agentDef, mode, host, log),
              language: agentDef.language ?? row.target_language ?? config.engines.stt.defaultLanguage,
              bargeInMinSpeechMs: config.agents.bargeInMinSpeechMs,
              earlyPartial: config.agents.earlyPartial,
            }
          : undefined,
      hooks: {
        // One INSERT is its own transaction: no BEGIN/COMMIT round trips around it.
        recordEvent: (type, data) => insertEvent(db, row.org_id, type as WebhookEventType, data).then(() => undefined),
        dialParty: async (req) => {
          if (!this.partyDialer) throw new Error('no telephony on this node');
          await this.partyDialer(id, row.org_id, req);
        },
        end: (reason) => void this.end(id, reason),
        firstAudio: () => this.activations.add(id),
        activity: () => this.onActivity(id),
        legsChanged: () => this.checkCarriers(id),
        languageDetected: (party, language) => {
          fillDetectedLanguage(db, id, party, language)
            .then(() => log.info({ party, language }, 'language detected'))
            .catch((err) => log.error({ err }, 'storing the detected language failed'));
        },
        storeTurn: (t) =>
          insertTranscriptTurn(db, {
            sessionId: id,
            orgId: row.org_id,
            sequence: t.sequence,
            speaker: t.speaker,
            language: t.language,
            text: t.text,
            translation: t.translation ?? null,
            confidence: t.confidence ?? null,
            startTime: t.startTime,
            endTime: t.endTime,
            interrupted: t.interrupted ?? false,
          }),
      },
    });
    const now = Date.now();
    this.live.set(id, { session, streams: 0, graceEndsAt: null, ending: false, lastActivity: now, lastTouch: 0, lastCarrier: null });
    session.once('ended', () => this.forget(id));
    log.info({ mode, languages: session.plan.languages }, 'live session opened');
    try {
      this.deps.onOpened?.(session, row);
    } catch (err) {
      log.error({ err }, 'onOpened hook failed');
    }
    const endedMeanwhile = this.endedWhileOpening.get(id);
    if (endedMeanwhile) {
      session.close(endedMeanwhile);
      throw new SessionEndedError(id);
    }
    return session;
  }

  /** A socket now carries the session: a pending reconnect-grace end is cancelled. */
  streamAttached(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    e.streams++;
    this.checkCarriers(id);
    e.session.carrierAttached();
  }

  /** The socket dropped without ending the session (see checkCarriers). */
  streamDetached(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    e.streams = Math.max(0, e.streams - 1);
    e.lastCarrier = 'stream';
    this.checkCarriers(id);
  }

  /**
   * SPEC "Limits": new audio may reconnect to a session within reconnectGraceSeconds after its
   * socket or call leg dropped. While nothing carries the session its grace runs; when the sweep
   * finds it run out the session ends with `stream_disconnected` (or `call_disconnected` when the
   * last carrier was a phone leg). A socket or leg that (re)attaches cancels it.
   */
  private checkCarriers(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    if (e.streams > 0 || e.session.legCount > 0) {
      e.graceEndsAt = null;
      if (e.session.legCount > 0) e.lastCarrier = 'leg';
      return;
    }
    if (e.graceEndsAt !== null || e.lastCarrier === null) return;
    e.graceEndsAt = Date.now() + this.deps.config.limits.reconnectGraceSeconds * 1000;
  }

  /** Ends a session and closes it here (see endAndClose). Returns false when the session does not exist. */
  async end(id: string, reason: string): Promise<boolean> {
    return (await this.endAndClose([{ id, reason }]))?.has(id) ?? true;
  }

  /**
   * Ends sessions (lifecycle.endSessions: rows, outbox and bus, one transaction per batch) and
   * closes them here at once rather than waiting for our own bus messages. Returns the ids that
   * exist, or null when the database failed (the sessions are closed here all the same).
   */
  private async endAndClose(ends: readonly SessionEnd[]): Promise<Set<string> | null> {
    const found = new Set<string>();
    let failed = false;
    for (let i = 0; i < ends.length; i += MAX_ENDS_PER_BATCH) {
      const batch = ends.slice(i, i + MAX_ENDS_PER_BATCH);
      try {
        const ended = await endSessions({ db: this.deps.db, redis: this.deps.redis, redisKeyPrefix: this.deps.config.redisKeyPrefix }, batch);
        // An already-ended row keeps its first reason; the live session reports that one.
        for (const { id, reason } of batch) this.get(id)?.close(ended.get(id)?.row.end_reason ?? reason);
        for (const id of ended.keys()) found.add(id);
      } catch (err) {
        failed = true;
        this.log.error({ err, sessions: batch.length, session_id: batch[0]?.id }, 'ending sessions failed');
        for (const { id, reason } of batch) this.get(id)?.close(reason);
      }
    }
    return failed ? null : found;
  }

  private onCommand(cmd: SessionCommand): void {
    if (cmd.kind !== 'end') return; // dial and hangup are telephony's
    if (this.opening.has(cmd.sessionId)) this.endedWhileOpening.set(cmd.sessionId, cmd.reason);
    this.get(cmd.sessionId)?.close(cmd.reason);
  }

  private onActivity(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    const now = Date.now();
    e.lastActivity = now;
    if (now - e.lastTouch < this.touchIntervalMs) return;
    e.lastTouch = now;
    this.touched.add(id);
  }

  /**
   * Writes last_activity_at for every session with activity since the last flush, in one statement:
   * a thousand live sessions cost one query every touchIntervalMs, not a burst of a thousand.
   */
  async flushTouches(): Promise<void> {
    if (this.touched.size === 0) return;
    const ids = [...this.touched];
    this.touched.clear();
    try {
      await touchSessions(this.deps.db, ids);
    } catch (err) {
      this.log.warn({ err, sessions: ids.length }, 'writing last activity failed');
    }
  }

  /**
   * Ends, together, the sessions whose reconnect grace ran out and those idle past
   * inactivitySeconds: the sessions of a mass hang-up reach their grace in the same second, and
   * ending them one transaction each stalled every live call on the host.
   */
  private async sweep(): Promise<void> {
    const idleLimitMs = this.deps.config.limits.inactivitySeconds * 1000;
    const now = Date.now();
    const ends: SessionEnd[] = [];
    for (const [id, e] of this.live) {
      if (e.ending) continue;
      if (e.graceEndsAt !== null && now >= e.graceEndsAt && e.streams === 0 && e.session.legCount === 0) {
        ends.push({ id, reason: e.lastCarrier === 'leg' ? 'call_disconnected' : 'stream_disconnected' });
      } else if (now - e.lastActivity >= idleLimitMs) {
        ends.push({ id, reason: 'inactivity' });
      } else continue;
      e.ending = true;
    }
    if (ends.length === 0) return;
    await this.endAndClose(ends);
    // A session the database failed to end is closed here all the same; one still live is retried.
    for (const { id } of ends) {
      const e = this.live.get(id);
      if (e) e.ending = false;
    }
  }

  private forget(id: string): void {
    this.live.delete(id);
    this.releaseClaim(id);
  }

  private releaseClaim(id: string): void {
    const ownership = this.deps.ownership;
    if (!ownership) return;
    const p = ownership
      .release(id)
      .catch((err) => this.log.warn({ err, session_id: id }, 'releasing session claim failed'))
      .finally(() => this.releases.delete(p));
    this.releases.add(p);
  }

  /** Ends every live session (`node_shutdown`) and leaves the bus; idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      if (this.sweepTimer) clearInterval(this.sweepTimer);
      if (this.touchTimer) clearInterval(this.touchTimer);
      if (this.claimTimer) clearInterval(this.claimTimer);
      await Promise.allSettled([...this.opening.values()]);
      // A session that started talking just now is active before it ends.
      await this.activations.flush();
      await this.endAndClose([...this.live.keys()].map((id) => ({ id, reason: 'node_shutdown' })));
      for (const e of this.live.values()) e.session.close('node_shutdown');
      await Promise.allSettled([...this.releases]);
      try {
        await this.unsubscribe?.();
      } catch {
        /* the connection may already be gone */
      }
      if (!this.deps.subscriber) this.subscriber?.disconnect();
    })());
  }
}
