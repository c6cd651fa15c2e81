// The composition root: one process serves the roles it is given (api, media, worker), sharing
// PostgreSQL and Redis with the other nodes (DESIGN.md "Scale-out").
//   api    → the /v1 REST routes
//   media  → speech engines, live-session registry, the stream socket, the SIP/RTP front
//   worker → sweepers (inactivity, sessions of lost nodes), webhook delivery and its retention
// A live session is claimed by the node that opened it (coord/ownership.ts); REST dial/hangup
// received elsewhere are forwarded to the owner over the session bus (coord/session-rpc.ts).
// Every role shares the one HTTP listener (health, readiness, metrics, and the socket upgrade).
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import { createLogger } from './logger.js';
import { createPool, getOrgEngines, migrate, type Db } from './store/index.js';
import { buildApp, callCommandExecutor, callRoutes, metricsRegistry, type ExtraRoutes } from './api/index.js';
import { createEngines, EmbeddedEngines, EngineDirectory, PocketsphinxEngine, type Engines } from './speech/index.js';
import { secretResolver } from './secrets/index.js';
import { SessionRegistry, registerPacerMetrics, sharedMediaClock } from './sessions/index.js';
import { NodeHeartbeat, SessionOwnership, SessionRpc, createRedis, ownerOf } from './coord/index.js';
import {
  DEFAULT_MEDIA_SUBTICKS,
  registerMediaOverloadMetrics,
  registerMediaStageMetrics,
  SileroModel,
  startNodeOverloadGuard,
  overloadLimits,
  type OverloadGuard,
} from './media/index.js';
import { attachStreamServer, registerStreamMetrics, type StreamServer } from './stream/index.js';
import { registerTelephonyMetrics, startTelephony, type Telephony } from './telephony/index.js';
import { AgentServices, configSecretResolver, type SecretResolver } from './agents/index.js';
import { ConsoleCookieAuthenticator, SignInStore, consoleRoutes } from './console/index.js';
import { registerWebhookMetrics } from './webhooks/index.js';
import { deliveryQueueStats } from './store/index.js';
import { attachRecorder, createRecordingStorage, recordingsDir, type CallRecorder } from './recordings/index.js';
import {
  startAnalysisWorker,
  startInactivitySweeper,
  startNodeLostSweeper,
  startRecordingEncoder,
  startRecordingRetention,
  startSipCaptureRetention,
  startWebhookDelivery,
  startWebhookRetention,
  type InactivitySweeper,
  type NodeLostSweeper,
  type RecordingEncoder,
  type Sweeper,
  type WebhookDeliveryWorker,
} from './jobs/index.js';

export interface Gateway {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  app: FastifyInstance;
  /** Present with the media role. */
  engines?: Engines;
  registry?: SessionRegistry;
  stream?: StreamServer;
  /** Present with the media role when SIP is enabled. */
  telephony?: Telephony;
  sweeper?: InactivitySweeper;
  /** Present with the worker role: ends sessions whose owner node died (`node_lost`). */
  nodeLostSweeper?: NodeLostSweeper;
  /** Present with the worker role: sends the outbox's events to webhook endpoints. */
  webhooks?: WebhookDeliveryWorker;
  /** Present with the worker role: WAV → MP3 for ended sessions' recordings. */
  recordingEncoder?: RecordingEncoder;
  /** Present with the worker role: deletes expired recordings' audio. */
  recordingRetention?: Sweeper;
  /** Present with the worker role: runs requested analyses. */
  analysisWorker?: Sweeper;
  /** Present with the media role: this node's claims on its live sessions. */
  ownership?: SessionOwnership;
  /** Present with the media role when SIP is enabled: dial/hangup forwarding between nodes. */
  rpc?: SessionRpc;
  /** This node's record in Redis for the operator view (every role). */
  heartbeat: NodeHeartbeat;
  /** The HTTP address actually bound (port 0 in tests picks a free one). */
  httpUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Apply migrations before serving (the default for `voxbridge serve`). */
  migrate?: boolean;
  logger?: Logger;
  /** Engines built by the caller (tests, embedding); default: built from config.engines. */
  engines?: Engines;
  /** Resolves organizations' named secrets for the AI agents; default: the secrets store, then config.agents.secrets. */
  agentSecrets?: SecretResolver;
  /** How often the inactivity sweeper looks for idle sessions (default 30 s). */
  sweepIntervalMs?: number;
}

/**
 * Graceful shutdown in a fixed order, whatever order things were started in: stop sweeping, stop
 * taking forwarded commands, hang up phone legs, end live sessions (sockets hear `session.ended` with
 * reason `node_shutdown`; their owner claims are released), close the sockets, stop HTTP, stop
 * engines, remove the node's heartbeat record (the operator view stops listing it), then the stores. Each step runs once, even when another fails.
 */
const SHUTDOWN_ORDER = [
  'sweeper',
  'webhooks',
  'rpc',
  'telephony',
  'registry',
  'stream',
  'overload',
  'http',
  'engines',
  'heartbeat',
  'redis',
  'postgres',
] as const;
type ShutdownStep = (typeof SHUTDOWN_ORDER)[number];

class Shutdown {
  private readonly steps = new Map<ShutdownStep, () => unknown>();
  constructor(private readonly logger: Logger) {}
  add(step: ShutdownStep, fn: () => unknown): void {
    this.steps.set(step, fn);
  }
  async run(): Promise<void> {
    for (const step of SHUTDOWN_ORDER) {
      const fn = this.steps.get(step);
      this.steps.delete(step);
      try {
        await fn?.();
      } catch (err) {
        this.logger.error({ err, step }, 'shutdown step failed');
      }
    }
  }
}

/**
 * HEAP_GROWING_PERCENT: how far V8 lets the old generation grow past what a full collection left. V8's own
 * factor (near 10 % here) ran a full collection, 3–16 ms of pause, about once a second at 400 socket calls,
 * and each pause delays every call's frames of that tick; at 100 % the pauses are fewer and the p99 lower
 * (BENCHMARKS.md, twenty-fifth pass), for a larger heap between collections. A V8 flag read at every
 * collection, so setting it at start takes effect; it applies to the whole process.
 */
function applyHeapSettings(heapGrowingPercent: number, logger: Logger): void {
  // 0 is V8's own flag value (its dynamic factor): set too, so a later start in the same process can go back to it.
  v8.setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
  // The young generation's size is a node flag (scripts/lib/node-heap-flags.sh): say which one this process got.
  const semiSpace = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(' ')].find((a) => a.startsWith('--max-semi-space-size'));
  logger.info({ heapGrowingPercent, semiSpace: semiSpace ?? "V8's own" }, 'V8 heap settings');
}

export async function startGateway(config: Config, opts: StartOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config);
  applyHeapSettings(config.heapGrowingPercent, logger);
  const has = (role: Config['roles'][number]) => config.roles.includes(role);
  if (opts.migrate !== false) await migrate(config.databaseUrl, config.databaseSchema, (m) => logger.debug(m));

  const shutdown = new Shutdown(logger);
  try {
    const db = createPool(config.databaseUrl, config.databaseSchema, logger);
    shutdown.add('postgres', () => db.end());
    const redis = createRedis(config.redisUrl, config.redisKeyPrefix, logger);
    shutdown.add('redis', () => redis.disconnect());

    let recordingEncoder: RecordingEncoder | undefined;
    let recordingRetention: Sweeper | undefined;
    let analysisWorker: Sweeper | undefined;
    let engines: Engines | undefined;
    let enginesFor: ((orgId: string) => Promise<Engines>) | undefined;
    let registry: SessionRegistry | undefined;
    let telephony: Telephony | undefined;
    let ownership: SessionOwnership | undefined;
    let rpc: SessionRpc | undefined;
    let overload: OverloadGuard | undefined;
    // Sessions live on this node, for the heartbeat's list of live legs.
    const liveSessionIds = new Set<string>();
    if (has('media')) {
      const onListenerError = (err: unknown): void => logger.error({ err }, 'speech engine listener failed');
      // The embedded engines start on first use and are shared: the node's embedded stages, the
      // organizations that choose them, and the fallback of remote engines (engines.fallback).
      const embedded = new EmbeddedEngines(config.engines, { onListenerError });
      engines =
        opts.engines ??
        (await createEngines(config.engines, {
          onListenerError,
          embedded,
          // Engine API keys named by STT_API_KEY_SECRET / TTS_API_KEY_SECRET are node-wide secrets.
          resolveSecret: (name) => secretResolver(db, config.secretKey)(null, name),
        }));
      const ownedEngines = engines;
      // Organizations' own engines (`admin org update --stt …`), built on first use and cached.
      const directory = new EngineDirectory({
        config: config.engines,
        node: engines,
        embedded,
        onListenerError,
        load: (orgId) => getOrgEngines(db, orgId),
        resolveSecret: (orgId, name) => secretResolver(db, config.secretKey)(orgId, name),
      });
      enginesFor = (orgId) => directory.forOrg(orgId);
      shutdown.add('engines', async () => {
        await Promise.allSettled([directory.close(), ownedEngines.close()]);
        await embedded.close();
      });
      registerMediaStageMetrics(metricsRegistry);
      registerPacerMetrics(metricsRegistry);
      // One clock for session pacers and RTP endpoints (media/processMediaClock).
      sharedMediaClock.onListenerError((err) => logger.error({ err }, 'media clock listener failed'));
      // Set before any leg or pacer listens (a process runs one gateway; tests' servers all ask the same).
      const subTicks = config.sip.mediaSubTicks ?? DEFAULT_MEDIA_SUBTICKS;
      if (sharedMediaClock.subTicks !== subTicks) sharedMediaClock.setSubTicks(subTicks);
      // Admission by the media clock and the loop's headroom, for calls and streams alike (MEDIA_OVERLOAD_*).
      const guard = startNodeOverloadGuard(sharedMediaClock, overloadLimits(config.sip), logger.child({ component: 'media' }), () => ({
        sessions: liveSessionIds.size,
      }));
      overload = guard;
      shutdown.add('overload', () => guard.stop());
      registerMediaOverloadMetrics(metricsRegistry, guard);
      ownership = new SessionOwnership(redis, { node: config.nodeId, url: config.publicUrl }, config.limits.ownerClaimTtlSeconds * 1000);
      const wavDir = recordingsDir(config.dataDir);
      const recorders = new Set<CallRecorder>();
      // Agents' named secrets: the organization's (then the node-wide) secret from the encrypted store
      // (`voxbridge admin secret set`), else one from configuration (AGENT_SECRETS).
      const storedSecrets = secretResolver(db, config.secretKey);
      const configSecrets = configSecretResolver(config.agents.secrets);
      const agents = new AgentServices({
        ...config.agents,
        secrets: opts.agentSecrets ?? (async (orgId, name) => (await storedSecrets(orgId, name)) ?? configSecrets(orgId, name)),
      });
      if (config.vad.engine === 'silero') SileroModel.shared(config.vad.sileroModel).preload();
      registry = new SessionRegistry({
        config,
        logger,
        db,
        redis,
        engines,
        enginesFor,
        ownership,
        agents,
        vad: { engine: config.vad.engine, sileroModel: config.vad.sileroModel },
        // Recorder taps (src/recordings): a session that ends hands its WAVs to the encoder job.
        onOpened: (session, row) => {
          liveSessionIds.add(session.id);
          session.once('ended', () => liveSessionIds.delete(session.id));
          const recorder = attachRecorder(session, row, { db, logger, wavDir, captured: () => recordingEncoder?.kick() });
          if (recorder) {
            recorders.add(recorder);
            session.once('ended', () => void recorder.finish().finally(() => recorders.delete(recorder)));
          }
        },
      });
      await registry.start();
      const ownedRegistry = registry;
      // Ending the sessions closes their recordings; wait for the WAVs to be closed and handed on.
      shutdown.add('registry', async () => {
        await ownedRegistry.close();
        await Promise.allSettled([...recorders].map((r) => r.finish()));
      });
      if (config.sip.enabled) {
        const ownerElsewhere = async (sessionId: string) => {
          const owner = await ownerOf(redis, sessionId);
          return owner && owner.node !== config.nodeId ? owner : null;
        };
        telephony = await startTelephony({ config, logger, db, redis, registry, ownerElsewhere, overload });
        const dialer = telephony;
        registry.setPartyDialer(async (sessionId, orgId, req) => void (await dialer.dial(sessionId, orgId, { to: req.to, party: req.party })));
        registerTelephonyMetrics(metricsRegistry, telephony);
        const ownedTelephony = telephony;
        shutdown.add('telephony', () => ownedTelephony.close());
        ownership.setSip({ address: config.sip.advertisedAddress, port: telephony.sipPort, tlsPort: telephony.sipTlsPort });
        rpc = await SessionRpc.start({ redis, prefix: config.redisKeyPrefix, nodeId: config.nodeId, logger, execute: callCommandExecutor(telephony) });
        const ownedRpc = rpc;
        shutdown.add('rpc', () => ownedRpc.close());
      }
    }

    if (!rpc && has('api')) {
      // The api role alone: call commands go to the owning node, or to any node that can place calls.
      rpc = await SessionRpc.start({ redis, prefix: config.redisKeyPrefix, nodeId: config.nodeId, logger });
      const ownedRpc = rpc;
      shutdown.add('rpc', () => ownedRpc.close());
    }
    const extra: ExtraRoutes[] = telephony
      ? [{ plugin: callRoutes, opts: { telephony, forwarder: rpc } }]
      : rpc
        ? [{ plugin: callRoutes, opts: { forwarder: rpc } }]
        : [];
    // The web console (api role): cookie sign-in stands in for an API key on the same /v1 routes.
    const signIns =
      config.console.enabled && has('api')
        ? new SignInStore(redis, {
            ttlSeconds: config.console.sessionTtlSeconds,
            maxFailures: config.console.loginMaxFailures,
            lockoutSeconds: config.console.lockoutSeconds,
          })
        : undefined;
    if (signIns) extra.push({ plugin: consoleRoutes, opts: { config, db, redis, store: signIns } });
    const cookieAuth = signIns ? new ConsoleCookieAuthenticator(db, signIns) : undefined;
    const liveTelephony = telephony;
    const liveCallQuality = liveTelephony ? (sessionId: string, callId: string) => liveTelephony.callQuality(sessionId, callId) : undefined;
    const app = await buildApp(
      { config, logger, db, redis, engines, enginesFor, authCacheTtlMs: config.limits.authCacheTtlMs, cookieAuth, liveCallQuality },
      extra,
      { resources: has('api') },
    );
    shutdown.add('http', () => app.close());
    const stream = registry ? attachStreamServer(app.server, { config, logger, db, redis, registry, overload }) : undefined;
    if (stream) {
      registerStreamMetrics(metricsRegistry, stream);
      shutdown.add('stream', () => stream.close());
    }

    let sweeper: InactivitySweeper | undefined;
    let nodeLostSweeper: NodeLostSweeper | undefined;
    let webhooks: WebhookDeliveryWorker | undefined;
    if (has('worker')) {
      sweeper = startInactivitySweeper({
        db,
        redis,
        redisKeyPrefix: config.redisKeyPrefix,
        logger,
        inactivitySeconds: config.limits.inactivitySeconds,
        intervalMs: opts.sweepIntervalMs ?? 30_000,
      });
      const claimTtlMs = config.limits.ownerClaimTtlSeconds * 1000;
      nodeLostSweeper = startNodeLostSweeper({
        db,
        redis,
        redisKeyPrefix: config.redisKeyPrefix,
        logger,
        claimTtlMs,
        graceMs: config.limits.reconnectGraceSeconds * 1000,
        intervalMs: Math.min(30_000, Math.max(500, claimTtlMs / 2)),
      });
      const retention = startWebhookRetention({ db, logger, retentionDays: config.webhooks.retentionDays });
      const storage = createRecordingStorage(config);
      const pc = config.postCall;
      recordingEncoder = startRecordingEncoder({
        db,
        logger,
        storage,
        intervalMs: pc.jobIntervalMs,
        leaseSeconds: pc.leaseSeconds,
        captureGraceSeconds: pc.captureGraceSeconds,
        bitrateKbps: pc.mp3BitrateKbps,
      });
      recordingEncoder.kick(); // resumes what a previous run left `processing`
      recordingRetention = startRecordingRetention({ db, logger, storage, intervalMs: pc.retentionIntervalMs });
      analysisWorker = startAnalysisWorker({ db, logger, intervalMs: pc.jobIntervalMs, leaseSeconds: pc.leaseSeconds, summary: pc.summary });
      // SIP capture retention (sipcore): runs on worker nodes whether or not this node captures.
      const sipCaptureRetention = startSipCaptureRetention({ db, logger, retentionHours: config.sipCapture.retentionHours });
      const ownedSweepers: Sweeper[] = [sweeper, nodeLostSweeper, retention, recordingEncoder, recordingRetention, analysisWorker, sipCaptureRetention];
      shutdown.add('sweeper', async () => {
        await Promise.all(ownedSweepers.map((s) => s.stop()));
        storage.close?.();
      });
      const metrics = registerWebhookMetrics(metricsRegistry, () => deliveryQueueStats(db));
      webhooks = await startWebhookDelivery({ db, config, logger, metrics });
      const ownedWebhooks = webhooks;
      shutdown.add('webhooks', () => ownedWebhooks.stop());
    }

    // Every role beats; the media role adds its sessions, legs and STT pool.
    const sessionsHere = registry;
    const stt = engines?.stt;
    const nodeOverload = overload;
    const heartbeat = new NodeHeartbeat({
      redis,
      logger,
      periodMs: config.limits.nodeHeartbeatMs,
      self: {
        id: config.nodeId,
        roles: config.roles,
        url: config.publicUrl,
        sip: liveTelephony ? { address: config.sip.advertisedAddress, port: liveTelephony.sipPort } : null,
      },
      sources: {
        liveSessions: sessionsHere ? () => sessionsHere.size : undefined,
        liveCalls: liveTelephony ? () => liveTelephony.activeCalls : undefined,
        mediaOverload: nodeOverload ? () => nodeOverload.view() : undefined,
        legs: liveTelephony
          ? () =>
              [...liveSessionIds].flatMap((id) =>
                liveTelephony
                  .calls(id)
                  .map((c) => ({ id: c.id, session_id: id, call_sid: c.call_sid, party: c.party, direction: c.direction, quality: c.quality ?? null })),
              )
          : undefined,
        sttPool:
          stt instanceof PocketsphinxEngine
            ? () => {
                const { busy, decoders, waiting } = stt.stats();
                return { busy, size: decoders, waiting };
              }
            : undefined,
      },
    });
    shutdown.add('heartbeat', () => heartbeat.stop());
    await heartbeat.start();

    const address = await app.listen({ host: config.httpHost, port: config.httpPort });
    const httpUrl = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
    logger.info({ httpUrl, roles: config.roles, sip: telephony ? `${config.sip.host}:${config.sip.port}` : 'off' }, 'voxbridge listening');

    let closed: Promise<void> | undefined;
    const close = (): Promise<void> => (closed ??= shutdown.run());
    return {
      config,
      logger,
      db,
      redis,
      app,
      engines,
      registry,
      stream,
      telephony,
      sweeper,
      nodeLostSweeper,
      webhooks,
      recordingEncoder,
      recordingRetention,
      analysisWorker,
      ownership,
      rpc,
      heartbeat,
      httpUrl,
      close,
    };
  } catch (err) {
    await shutdown.run();
    throw err;
  }
}
