// One validated configuration object, built once at start-up and passed down.
// Sources, later wins: config/default.json, config/<VOXBRIDGE_ENV>.json, environment variables.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });

export const ConfigSchema = Type.Object({
  nodeId: Type.String({ minLength: 1 }),
  roles: Type.Array(Type.Union([Type.Literal('api'), Type.Literal('media'), Type.Literal('worker')]), { minItems: 1 }),
  httpHost: Type.String(),
  httpPort: Port,
  publicUrl: Type.String({ pattern: '^https?://' }),
  apiEnvironment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  databaseUrl: Type.String({ pattern: '^postgres(ql)?://' }),
  databaseSchema: Type.String({ pattern: '^[a-z_][a-z0-9_]*$' }),
  redisUrl: Type.String({ pattern: '^rediss?://' }),
  redisKeyPrefix: Type.String(),
  /**
   * V8 grows the old generation by this percentage past what a full collection left (0: V8's own factor,
   * which on a media node settled near 10 % and ran a full collection about once a second under socket load).
   */
  heapGrowingPercent: Type.Integer({ minimum: 0, maximum: 400 }),
  /** audio.output written to the stream socket by the addon while Node's buffer is empty (src/stream/direct-send.ts); default true. */
  streamDirectSend: Type.Optional(Type.Boolean()),
  /** Stream sockets read at the media clock's sub-ticks, their clients' text frames parsed by the gateway (src/stream/tick-reader.ts); default true. */
  streamTickRead: Type.Optional(Type.Boolean()),
  /**
   * The smallest margin the session pacer's live queue keeps against late frames, in 20 ms frames
   * (src/media/live-queue.ts): 0 (default) while frames arrive in time, 1 to keep one frame always.
   */
  liveMinMarginFrames: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
  /** The largest margin repeated underruns may raise it to, in frames (1 keeps it at the floor or one frame). */
  liveMaxMarginFrames: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  dataDir: Type.String({ minLength: 1 }),
  secretKey: Type.String({ minLength: 16 }),
  limits: Type.Object({
    defaultRateLimit: PositiveInt,
    defaultRateWindowSeconds: PositiveInt,
    defaultMaxConcurrentSessions: PositiveInt,
    metadataMaxKeys: PositiveInt,
    metadataMaxBytes: PositiveInt,
    bodyLimitBytes: PositiveInt,
    socketMessageMaxBytes: PositiveInt,
    streamTokenTtlSeconds: PositiveInt,
    reconnectGraceSeconds: PositiveInt,
    inactivitySeconds: PositiveInt,
    idempotencyTtlSeconds: PositiveInt,
    socketConnectsPerMinute: PositiveInt,
    /** A node's claim on a live session (`owner:<id>` in Redis) lives this long unless refreshed (every third of it). */
    ownerClaimTtlSeconds: PositiveInt,
    /** In-process reuse of a verified API key; revocation and org changes apply within it. 0 = off. */
    authCacheTtlMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
    /** Every node publishes its heartbeat record (coord/node-heartbeat.ts) this often; it expires after 3 periods. */
    nodeHeartbeatMs: Type.Integer({ minimum: 100, maximum: 60_000 }),
  }),
  sip: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String(),
    port: Port,
    transports: Type.Array(Type.Union([Type.Literal('udp'), Type.Literal('tcp')]), { minItems: 1 }),
    advertisedAddress: Type.String({ minLength: 1 }),
    rtpPortMin: Port,
    rtpPortMax: Port,
    rtpTimeoutSeconds: PositiveInt,
    /** RTP socket worker threads (0: sockets on the main thread; see README "The media path"). */
    mediaWorkers: Type.Optional(Type.Integer({ minimum: 0, maximum: 16 })),
    /**
     * RTP socket I/O: native (batched once per media tick through the addon; README "The media path"),
     * dgram (one libuv read per packet), or auto: native when the addon builds and loads, else dgram.
     */
    mediaIo: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('dgram'), Type.Literal('native')])),
    /** Batched RTP I/O through io_uring where the addon has it; false: one recvmmsg per socket and one sendto per packet. */
    mediaIoUring: Type.Optional(Type.Boolean()),
    /** Batched RTP sends from the addon's own thread; false: the main thread waits for the kernel's sends. */
    mediaIoSendThread: Type.Optional(Type.Boolean()),
    /** Batched RTP reads on the addon's own thread, taken at the tick; false (default): the main thread reads at the tick. */
    mediaIoRecvThread: Type.Optional(Type.Boolean()),
    /** Batched RTP sockets connected to their leg's source once it is settled (RtpEndpointOptions.connectSettled); default true. */
    mediaIoConnect: Type.Optional(Type.Boolean()),
    /** Legs' jitter buffers drop a standing frame their frames' waits show unneeded (JitterBufferOptions.trimSlack); default true. */
    jitterTrimSlack: Type.Optional(Type.Boolean()),
    /**
     * Sub-ticks per 20 ms frame of the media clock (1, 2 or 4): a leg plays out in the sub-tick after its
     * packets arrive (media/playout-phase.ts) instead of at one instant per frame shared by every leg.
     */
    mediaSubTicks: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(4)])),
    maxConcurrentCalls: PositiveInt,
    /**
     * Turns new calls away (SIP 503 + Retry-After, dials media_server_unavailable) while more than this
     * share (%) of the media clock's runs in a second start a frame late (media/overload-guard.ts);
     * config/default.json: 5; 0: off.
     */
    overloadLatePercent: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    /**
     * The same while the event loop was busy more than this share (%) of a second with live media: the
     * headroom the clock's lateness shows only once it is gone (media/overload-guard.ts);
     * config/default.json: 90; 0: off.
     */
    overloadLoopPercent: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    realm: Type.String({ minLength: 1 }),
    /** On shutdown (SIGTERM), live calls may run this long while new INVITEs get 503 + Retry-After. */
    drainSeconds: Type.Integer({ minimum: 0, maximum: 86_400 }),
    /** Input caps of the SIP front, checked before any parsing (src/telephony/sip/framing.ts). */
    limits: Type.Object({
      maxDatagramBytes: Type.Integer({ minimum: 1500, maximum: 65_535 }),
      maxHeaderBytes: Type.Integer({ minimum: 1024, maximum: 262_144 }),
      maxLineBytes: Type.Integer({ minimum: 256, maximum: 262_144 }),
      maxHeaderCount: Type.Integer({ minimum: 16, maximum: 1024 }),
      maxBodyBytes: Type.Integer({ minimum: 1024, maximum: 1_048_576 }),
    }),
    /** Per-source flood and scanner defences (src/telephony/sip/source-guard.ts). */
    guard: Type.Object({
      requestsPerSecond: PositiveInt,
      burst: PositiveInt,
      strikesBeforeBan: PositiveInt,
      strikeWindowSeconds: PositiveInt,
      banSeconds: PositiveInt,
      allowCidrs: Type.Array(Type.String()),
      scannerUserAgents: Type.Array(Type.String({ minLength: 1 })),
      authFailuresBeforeLockout: PositiveInt,
    }),
    /**
     * SO_RCVBUF of the SIP UDP socket: requests that arrive while the event loop is busy wait here
     * instead of being dropped (and retransmitted 500 ms later). The kernel caps it at net.core.rmem_max.
     */
    udpReceiveBufferBytes: Type.Integer({ minimum: 65_536, maximum: 67_108_864 }),
    /**
     * Time (ms) per event-loop turn spent handling SIP UDP datagrams before the media clock gets the loop
     * back; 0 handles each datagram as it is read (src/telephony/sip/ingress-queue.ts).
     */
    udpIngressBudgetMs: Type.Integer({ minimum: 0, maximum: 100 }),
    /** Datagrams waiting for their turn at most; more are dropped like a full receive buffer's. */
    udpIngressQueueMax: Type.Integer({ minimum: 16, maximum: 1_000_000 }),
    /** TCP connection defences of the SIP front (src/telephony/sip/transports.ts). */
    stream: Type.Object({
      tcpIdleTimeoutMs: PositiveInt,
      tcpMessageTimeoutMs: PositiveInt,
      maxConnectionsPerSource: PositiveInt,
      maxConnections: PositiveInt,
    }),
    /** Secure trunks: SIP over TLS on its own port, on when a certificate and key are given (src/telephony/sip/transports.ts). */
    tls: Type.Object({
      port: Port,
      /** PEM file paths. */
      certFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
      keyFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
      /** CAs for client certificates (mutual TLS) and for carriers' server certificates when dialing out; null: system CAs. */
      caFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
      /** Check the carrier's certificate when dialing out over TLS. */
      verifyServer: Type.Boolean(),
    }),
    /** Kamailio edge (sip/kamailio/): SIP only from these addresses/CIDRs, the caller's address from `sourceHeader`. Empty: no edge. */
    trustedEdge: Type.Object({
      cidrs: Type.Array(Type.String({ minLength: 1 })),
      sourceHeader: Type.String({ pattern: '^[A-Za-z0-9-]+$' }),
      /** Dial out through the edge: `host:port` of its SIP (UDP) port, put in a Route of every dial. Null: dial carriers directly. */
      outboundProxy: Type.Optional(Type.Union([Type.String({ pattern: '^[A-Za-z0-9.:\\[\\]-]+:[0-9]+$' }), Type.Null()])),
    }),
  }),
  /** SIP capture: every SIP message of a call, kept for a while, optionally sent to Homer. */
  sipCapture: Type.Object({
    enabled: Type.Boolean(),
    /** Captured messages are deleted after this many hours (default 24). */
    retentionHours: PositiveInt,
    /** Messages waiting for the database; beyond this they are dropped and counted (the call path never waits). */
    queueSize: PositiveInt,
    /** Rows per INSERT. */
    batchSize: PositiveInt,
    /** A Homer/sipcapture collector (HEP v3 over UDP), host:port; null: no export. */
    hepAddress: Type.Union([Type.String({ pattern: '^.+:\\d+$' }), Type.Null()]),
    /** HEP capture agent id. */
    hepAgentId: Type.Integer({ minimum: 0, maximum: 4_294_967_295 }),
  }),
  rtpengine: Type.Object({
    ng: Type.Union([Type.String({ pattern: '^[^:]+:\\d+$' }), Type.Null()]),
    timeoutMs: PositiveInt,
  }),
  /** Webhook delivery (README "Webhooks"). */
  webhooks: Type.Object({
    /** Development only: endpoints on loopback addresses, plain http allowed to them. */
    allowLoopbackHttp: Type.Boolean(),
    /** Endpoints on private, link-local or shared (CGNAT) addresses; metadata addresses stay refused. */
    allowPrivateNetworks: Type.Boolean(),
    /** A 2xx must arrive within this (SPEC "Limits": 30 s). */
    timeoutMs: PositiveInt,
    /** Seconds before each retry; after the last one the delivery is failed (README "Retry schedule"). */
    retryScheduleSeconds: Type.Array(Type.Number({ minimum: 0 }), { minItems: 1, maxItems: 50 }),
    /** An endpoint failing every delivery this long is disabled. */
    disableAfterSeconds: PositiveInt,
    /** Deliveries of one endpoint in flight at once, across all nodes. */
    endpointConcurrency: PositiveInt,
    /** Safety-net poll; new events wake the workers at once through LISTEN/NOTIFY. */
    pollIntervalMs: PositiveInt,
    /** New events are fanned out into deliveries at most this often: a burst's NOTIFYs share one fan-out. */
    fanOutIntervalMs: PositiveInt,
    /** Delivered events and attempt logs are deleted after this many days. */
    retentionDays: PositiveInt,
    /** How long the previous secret keeps signing after a rotation. */
    secretRotationGraceSeconds: PositiveInt,
  }),
  /**
   * Voice activity detection: `silero` (neural, the default: no false starts on noise that begins
   * mid-call, ends speech sooner; one model per process in a worker thread) or `energy` (no model
   * file, a fraction of the CPU); bench/speech/vad.ts, README "VAD".
   */
  vad: Type.Object({
    engine: Type.Union([Type.Literal('energy'), Type.Literal('silero')]),
    sileroModel: Type.String(),
  }),
  engines: Type.Object({
    stt: Type.Object({
      provider: Type.Union([Type.Literal('pocketsphinx'), Type.Literal('vosk'), Type.Literal('openai'), Type.Literal('deepgram'), Type.Literal('none')]),
      url: Type.Optional(Type.String()),
      defaultLanguage: Type.String({ minLength: 2, maxLength: 2 }),
      poolSize: PositiveInt,
      timeoutMs: PositiveInt,
      /** openai: the `model` field (whisper-1, Systran/faster-whisper-small …). */
      model: Type.String({ minLength: 1 }),
      /** openai: bearer key, given in clear (prefer apiKeySecret). */
      apiKey: Type.Optional(Type.String()),
      /** openai: name of a node-wide secret (`voxbridge admin secret set`) holding the key. */
      apiKeySecret: Type.Optional(Type.String()),
      /** openai: re-transcribe the growing utterance for a partial after this much new audio (0: no partials). */
      partialIntervalMs: Type.Integer({ minimum: 0 }),
      retries: Type.Integer({ minimum: 0, maximum: 10 }),
      /** deepgram: languages offered to planning (default: defaultLanguage); openai: default Whisper's list. */
      languages: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 2 }))),
    }),
    translate: Type.Object({
      provider: Type.Union([Type.Literal('apertium'), Type.Literal('libretranslate'), Type.Literal('none')]),
      url: Type.Optional(Type.String()),
      timeoutMs: PositiveInt,
    }),
    tts: Type.Object({
      provider: Type.Union([Type.Literal('espeak-ng'), Type.Literal('openai'), Type.Literal('elevenlabs'), Type.Literal('none')]),
      timeoutMs: PositiveInt,
      url: Type.Optional(Type.String()),
      model: Type.String({ minLength: 1 }),
      /** openai: voice used when the session's voice.voice_id names none. */
      voice: Type.String({ minLength: 1 }),
      apiKey: Type.Optional(Type.String()),
      apiKeySecret: Type.Optional(Type.String()),
      retries: Type.Integer({ minimum: 0, maximum: 10 }),
      /** openai/elevenlabs: languages offered to planning (openai default: Whisper's list; elevenlabs: the STT default language). */
      languages: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 2 }))),
    }),
    pocketsphinx: Type.Object({ hmm: Type.String(), lm: Type.String(), dict: Type.String() }),
    // Speech engines: when a remote engine fails, the stage falls back to the embedded
    // engine (pocketsphinx / apertium / espeak-ng) where it serves the language; `none` reports the error only.
    fallback: Type.Union([Type.Literal('embedded'), Type.Literal('none')]),
  }),
  /** The web console (web/, served at /console/) and its cookie sign-in (src/console/). */
  console: Type.Object({
    enabled: Type.Boolean(),
    /** Signed-in browser sessions live this long without use (sliding). */
    sessionTtlSeconds: PositiveInt,
    /** Failed sign-ins for one email (or one address) before it is locked out. */
    loginMaxFailures: PositiveInt,
    lockoutSeconds: PositiveInt,
    /** Mark cookies Secure; default: when publicUrl is https. */
    secureCookies: Type.Union([Type.Boolean(), Type.Null()]),
  }),
  /** Post-call work (src/recordings, src/analysis, their jobs in src/jobs). */
  postCall: Type.Object({
    /** How often the worker looks for recordings and analyses to process (ms); new work also kicks it at once. */
    jobIntervalMs: PositiveInt,
    /** An encoder or analyser holds a row this long; a crashed worker's rows are resumed after it. */
    leaseSeconds: PositiveInt,
    /** A recording whose node died mid-call is encoded from the WAV on disk this long after its session ended. */
    captureGraceSeconds: PositiveInt,
    /** How often expired recordings are deleted (ms). */
    retentionIntervalMs: PositiveInt,
    /** MP3 bitrate for lame (kbps; 8 kHz mono MPEG-2.5 allows 8–64). */
    mp3BitrateKbps: Type.Integer({ minimum: 8, maximum: 64 }),
    /** Who writes an analysis's summary (README "Analysis"): the embedded extractive one, or an LLM. */
    summary: Type.Object({
      /** `openai_compatible`: any chat-completions API (OpenAI, Ollama, vLLM …); extractive when it fails. */
      engine: Type.Union([Type.Literal('extractive'), Type.Literal('openai_compatible')]),
      /** e.g. https://api.openai.com/v1 (the request goes to `<baseUrl>/chat/completions`). */
      baseUrl: Type.String(),
      model: Type.String(),
      /** Sent as `Authorization: Bearer …` when set. */
      apiKey: Type.String(),
      /** No complete answer by then: the extractive summary is used. */
      timeoutMs: PositiveInt,
    }),
  }),
  /** Where encoded recordings (MP3) are kept (src/recordings/storage.ts; README "Recordings"). */
  recordings: Type.Object({
    /** `directory`: <dataDir>/recordings/mp3; `s3`: an S3-compatible bucket (the `s3` block). */
    storage: Type.Union([Type.Literal('directory'), Type.Literal('s3')]),
    s3: Type.Object({
      /** Base URL of an S3-compatible server (MinIO, Ceph, s3rver …); empty: AWS for `region`. */
      endpoint: Type.String(),
      bucket: Type.String(),
      region: Type.String(),
      /** Bucket in the path (`endpoint/bucket/key`), as most S3-compatible servers need. */
      forcePathStyle: Type.Boolean(),
      accessKeyId: Type.String(),
      secretAccessKey: Type.String(),
      /** Prepended to every object key (e.g. `voxbridge/`). */
      keyPrefix: Type.String(),
    }),
  }),
  agents: Type.Object({
    /** A tool webhook that has not answered by then is reported to the brain as failed. */
    toolTimeoutMs: PositiveInt,
    /** The agent says a filler ("one moment") when a tool takes longer. */
    fillerAfterMs: PositiveInt,
    /** Customer speech needed, while the agent talks, before it is cut off (barge-in). */
    bargeInMinSpeechMs: PositiveInt,
    /**
     * Start the reply from the recognizer's settled hypothesis, before the final (README "AI agents",
     * early answering); the final confirms or replaces it.
     */
    earlyPartial: Type.Boolean(),
    /**
     * With earlyPartial: play the early reply before the final confirms it (else it is prepared and
     * held until then). Faster, but a final that asks something else cuts a reply already heard.
     */
    earlySpeak: Type.Boolean(),
    /** openai_compatible brains: no first byte / no progress for this long fails the turn. */
    llmTimeoutMs: PositiveInt,
    /**
     * Named secrets (e.g. brain.api_key_secret, tool_signing), the same for every organization,
     * until a per-organization secrets store is wired in (README "AI agents").
     */
    secrets: Type.Record(Type.String(), Type.String()),
  }),
});

export type Config = Static<typeof ConfigSchema>;

/** Environment variables and where they land in the config object. */
const ENV_MAP: Record<string, { path: string[]; kind: 'string' | 'int' | 'bool' | 'list' | 'nullable' | 'json' }> = {
  VOXBRIDGE_NODE_ID: { path: ['nodeId'], kind: 'string' },
  VOXBRIDGE_ROLES: { path: ['roles'], kind: 'list' },
  NODE_HEARTBEAT_MS: { path: ['limits', 'nodeHeartbeatMs'], kind: 'int' },
  HTTP_HOST: { path: ['httpHost'], kind: 'string' },
  HTTP_PORT: { path: ['httpPort'], kind: 'int' },
  PUBLIC_URL: { path: ['publicUrl'], kind: 'string' },
  API_ENVIRONMENT: { path: ['apiEnvironment'], kind: 'string' },
  DATABASE_URL: { path: ['databaseUrl'], kind: 'string' },
  DATABASE_SCHEMA: { path: ['databaseSchema'], kind: 'string' },
  REDIS_URL: { path: ['redisUrl'], kind: 'string' },
  REDIS_KEY_PREFIX: { path: ['redisKeyPrefix'], kind: 'string' },
  LOG_LEVEL: { path: ['logLevel'], kind: 'string' },
  HEAP_GROWING_PERCENT: { path: ['heapGrowingPercent'], kind: 'int' },
  STREAM_DIRECT_SEND: { path: ['streamDirectSend'], kind: 'bool' },
  STREAM_TICK_READ: { path: ['streamTickRead'], kind: 'bool' },
  LIVE_MIN_MARGIN_FRAMES: { path: ['liveMinMarginFrames'], kind: 'int' },
  LIVE_MAX_MARGIN_FRAMES: { path: ['liveMaxMarginFrames'], kind: 'int' },
  DATA_DIR: { path: ['dataDir'], kind: 'string' },
  SECRET_KEY: { path: ['secretKey'], kind: 'string' },
  CONSOLE_ENABLED: { path: ['console', 'enabled'], kind: 'bool' },
  CONSOLE_SESSION_TTL_SECONDS: { path: ['console', 'sessionTtlSeconds'], kind: 'int' },
  CONSOLE_LOGIN_MAX_FAILURES: { path: ['console', 'loginMaxFailures'], kind: 'int' },
  CONSOLE_LOCKOUT_SECONDS: { path: ['console', 'lockoutSeconds'], kind: 'int' },
  SIP_ENABLED: { path: ['sip', 'enabled'], kind: 'bool' },
  SIP_HOST: { path: ['sip', 'host'], kind: 'string' },
  SIP_PORT: { path: ['sip', 'port'], kind: 'int' },
  SIP_TRANSPORTS: { path: ['sip', 'transports'], kind: 'list' },
  SIP_ADVERTISED_ADDRESS: { path: ['sip', 'advertisedAddress'], kind: 'string' },
  RTP_PORT_MIN: { path: ['sip', 'rtpPortMin'], kind: 'int' },
  RTP_PORT_MAX: { path: ['sip', 'rtpPortMax'], kind: 'int' },
  RTP_TIMEOUT_SECONDS: { path: ['sip', 'rtpTimeoutSeconds'], kind: 'int' },
  MEDIA_WORKERS: { path: ['sip', 'mediaWorkers'], kind: 'int' },
  MEDIA_IO: { path: ['sip', 'mediaIo'], kind: 'string' },
  MEDIA_IO_URING: { path: ['sip', 'mediaIoUring'], kind: 'bool' },
  MEDIA_IO_SEND_THREAD: { path: ['sip', 'mediaIoSendThread'], kind: 'bool' },
  MEDIA_IO_RECV_THREAD: { path: ['sip', 'mediaIoRecvThread'], kind: 'bool' },
  MEDIA_IO_CONNECT: { path: ['sip', 'mediaIoConnect'], kind: 'bool' },
  JITTER_TRIM_SLACK: { path: ['sip', 'jitterTrimSlack'], kind: 'bool' },
  MEDIA_SUBTICKS: { path: ['sip', 'mediaSubTicks'], kind: 'int' },
  MEDIA_OVERLOAD_LATE_PERCENT: { path: ['sip', 'overloadLatePercent'], kind: 'int' },
  MEDIA_OVERLOAD_LOOP_PERCENT: { path: ['sip', 'overloadLoopPercent'], kind: 'int' },
  SIP_MAX_DATAGRAM_BYTES: { path: ['sip', 'limits', 'maxDatagramBytes'], kind: 'int' },
  SIP_MAX_HEADER_BYTES: { path: ['sip', 'limits', 'maxHeaderBytes'], kind: 'int' },
  SIP_MAX_BODY_BYTES: { path: ['sip', 'limits', 'maxBodyBytes'], kind: 'int' },
  SIP_UDP_RECEIVE_BUFFER_BYTES: { path: ['sip', 'udpReceiveBufferBytes'], kind: 'int' },
  SIP_UDP_INGRESS_BUDGET_MS: { path: ['sip', 'udpIngressBudgetMs'], kind: 'int' },
  SIP_UDP_INGRESS_QUEUE_MAX: { path: ['sip', 'udpIngressQueueMax'], kind: 'int' },
  SIP_TCP_IDLE_TIMEOUT_MS: { path: ['sip', 'stream', 'tcpIdleTimeoutMs'], kind: 'int' },
  SIP_TCP_MESSAGE_TIMEOUT_MS: { path: ['sip', 'stream', 'tcpMessageTimeoutMs'], kind: 'int' },
  SIP_MAX_CONNECTIONS_PER_SOURCE: { path: ['sip', 'stream', 'maxConnectionsPerSource'], kind: 'int' },
  SIP_DRAIN_SECONDS: { path: ['sip', 'drainSeconds'], kind: 'int' },
  SIP_RATE_PER_SECOND: { path: ['sip', 'guard', 'requestsPerSecond'], kind: 'int' },
  SIP_RATE_BURST: { path: ['sip', 'guard', 'burst'], kind: 'int' },
  SIP_BAN_SECONDS: { path: ['sip', 'guard', 'banSeconds'], kind: 'int' },
  SIP_ALLOW_CIDRS: { path: ['sip', 'guard', 'allowCidrs'], kind: 'list' },
  // Secure trunks
  SIP_TLS_PORT: { path: ['sip', 'tls', 'port'], kind: 'int' },
  SIP_TLS_CERT: { path: ['sip', 'tls', 'certFile'], kind: 'nullable' },
  SIP_TLS_KEY: { path: ['sip', 'tls', 'keyFile'], kind: 'nullable' },
  SIP_TLS_CA: { path: ['sip', 'tls', 'caFile'], kind: 'nullable' },
  SIP_TLS_VERIFY_SERVER: { path: ['sip', 'tls', 'verifyServer'], kind: 'bool' },
  // Kamailio edge
  SIP_TRUSTED_EDGE: { path: ['sip', 'trustedEdge', 'cidrs'], kind: 'list' },
  SIP_TRUSTED_EDGE_HEADER: { path: ['sip', 'trustedEdge', 'sourceHeader'], kind: 'string' },
  SIP_EDGE_OUTBOUND_PROXY: { path: ['sip', 'trustedEdge', 'outboundProxy'], kind: 'nullable' },
  RTPENGINE_NG: { path: ['rtpengine', 'ng'], kind: 'nullable' },
  // SIP capture (sipcore)
  SIP_CAPTURE_ENABLED: { path: ['sipCapture', 'enabled'], kind: 'bool' },
  SIP_CAPTURE_RETENTION_HOURS: { path: ['sipCapture', 'retentionHours'], kind: 'int' },
  SIP_CAPTURE_QUEUE_SIZE: { path: ['sipCapture', 'queueSize'], kind: 'int' },
  SIP_HEP_ADDRESS: { path: ['sipCapture', 'hepAddress'], kind: 'nullable' },
  SIP_HEP_AGENT_ID: { path: ['sipCapture', 'hepAgentId'], kind: 'int' },
  STT_PROVIDER: { path: ['engines', 'stt', 'provider'], kind: 'string' },
  STT_URL: { path: ['engines', 'stt', 'url'], kind: 'string' },
  STT_POOL_SIZE: { path: ['engines', 'stt', 'poolSize'], kind: 'int' },
  STT_DEFAULT_LANGUAGE: { path: ['engines', 'stt', 'defaultLanguage'], kind: 'string' },
  TRANSLATE_PROVIDER: { path: ['engines', 'translate', 'provider'], kind: 'string' },
  TRANSLATE_URL: { path: ['engines', 'translate', 'url'], kind: 'string' },
  TTS_PROVIDER: { path: ['engines', 'tts', 'provider'], kind: 'string' },
  WEBHOOKS_ALLOW_LOOPBACK_HTTP: { path: ['webhooks', 'allowLoopbackHttp'], kind: 'bool' },
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: { path: ['webhooks', 'allowPrivateNetworks'], kind: 'bool' },
  WEBHOOKS_TIMEOUT_MS: { path: ['webhooks', 'timeoutMs'], kind: 'int' },
  WEBHOOKS_DISABLE_AFTER_SECONDS: { path: ['webhooks', 'disableAfterSeconds'], kind: 'int' },
  WEBHOOKS_ENDPOINT_CONCURRENCY: { path: ['webhooks', 'endpointConcurrency'], kind: 'int' },
  WEBHOOKS_POLL_INTERVAL_MS: { path: ['webhooks', 'pollIntervalMs'], kind: 'int' },
  WEBHOOKS_FAN_OUT_INTERVAL_MS: { path: ['webhooks', 'fanOutIntervalMs'], kind: 'int' },
  WEBHOOKS_RETENTION_DAYS: { path: ['webhooks', 'retentionDays'], kind: 'int' },
  STT_MODEL: { path: ['engines', 'stt', 'model'], kind: 'string' },
  STT_LANGUAGES: { path: ['engines', 'stt', 'languages'], kind: 'list' },
  STT_API_KEY: { path: ['engines', 'stt', 'apiKey'], kind: 'string' },
  STT_API_KEY_SECRET: { path: ['engines', 'stt', 'apiKeySecret'], kind: 'string' },
  STT_PARTIAL_INTERVAL_MS: { path: ['engines', 'stt', 'partialIntervalMs'], kind: 'int' },
  STT_TIMEOUT_MS: { path: ['engines', 'stt', 'timeoutMs'], kind: 'int' },
  STT_RETRIES: { path: ['engines', 'stt', 'retries'], kind: 'int' },
  TTS_URL: { path: ['engines', 'tts', 'url'], kind: 'string' },
  TTS_MODEL: { path: ['engines', 'tts', 'model'], kind: 'string' },
  TTS_VOICE: { path: ['engines', 'tts', 'voice'], kind: 'string' },
  TTS_LANGUAGES: { path: ['engines', 'tts', 'languages'], kind: 'list' },
  TTS_API_KEY: { path: ['engines', 'tts', 'apiKey'], kind: 'string' },
  TTS_API_KEY_SECRET: { path: ['engines', 'tts', 'apiKeySecret'], kind: 'string' },
  TTS_TIMEOUT_MS: { path: ['engines', 'tts', 'timeoutMs'], kind: 'int' },
  TTS_RETRIES: { path: ['engines', 'tts', 'retries'], kind: 'int' },
  VAD_ENGINE: { path: ['vad', 'engine'], kind: 'string' },
  ENGINE_FALLBACK: { path: ['engines', 'fallback'], kind: 'string' },
  VAD_SILERO_MODEL: { path: ['vad', 'sileroModel'], kind: 'string' },
  POCKETSPHINX_HMM: { path: ['engines', 'pocketsphinx', 'hmm'], kind: 'string' },
  POSTCALL_JOB_INTERVAL_MS: { path: ['postCall', 'jobIntervalMs'], kind: 'int' },
  POSTCALL_LEASE_SECONDS: { path: ['postCall', 'leaseSeconds'], kind: 'int' },
  RECORDING_CAPTURE_GRACE_SECONDS: { path: ['postCall', 'captureGraceSeconds'], kind: 'int' },
  RECORDING_RETENTION_INTERVAL_MS: { path: ['postCall', 'retentionIntervalMs'], kind: 'int' },
  RECORDING_MP3_BITRATE_KBPS: { path: ['postCall', 'mp3BitrateKbps'], kind: 'int' },
  ANALYSIS_SUMMARY_ENGINE: { path: ['postCall', 'summary', 'engine'], kind: 'string' },
  ANALYSIS_LLM_BASE_URL: { path: ['postCall', 'summary', 'baseUrl'], kind: 'string' },
  ANALYSIS_LLM_MODEL: { path: ['postCall', 'summary', 'model'], kind: 'string' },
  ANALYSIS_LLM_API_KEY: { path: ['postCall', 'summary', 'apiKey'], kind: 'string' },
  ANALYSIS_LLM_TIMEOUT_MS: { path: ['postCall', 'summary', 'timeoutMs'], kind: 'int' },
  RECORDINGS_STORAGE: { path: ['recordings', 'storage'], kind: 'string' },
  RECORDINGS_S3_ENDPOINT: { path: ['recordings', 's3', 'endpoint'], kind: 'string' },
  RECORDINGS_S3_BUCKET: { path: ['recordings', 's3', 'bucket'], kind: 'string' },
  RECORDINGS_S3_REGION: { path: ['recordings', 's3', 'region'], kind: 'string' },
  RECORDINGS_S3_FORCE_PATH_STYLE: { path: ['recordings', 's3', 'forcePathStyle'], kind: 'bool' },
  RECORDINGS_S3_ACCESS_KEY_ID: { path: ['recordings', 's3', 'accessKeyId'], kind: 'string' },
  RECORDINGS_S3_SECRET_ACCESS_KEY: { path: ['recordings', 's3', 'secretAccessKey'], kind: 'string' },
  RECORDINGS_S3_KEY_PREFIX: { path: ['recordings', 's3', 'keyPrefix'], kind: 'string' },
  AGENT_TOOL_TIMEOUT_MS: { path: ['agents', 'toolTimeoutMs'], kind: 'int' },
  AGENT_FILLER_AFTER_MS: { path: ['agents', 'fillerAfterMs'], kind: 'int' },
  AGENT_BARGE_IN_MIN_SPEECH_MS: { path: ['agents', 'bargeInMinSpeechMs'], kind: 'int' },
  AGENT_EARLY_PARTIAL: { path: ['agents', 'earlyPartial'], kind: 'bool' },
  AGENT_EARLY_SPEAK: { path: ['agents', 'earlySpeak'], kind: 'bool' },
  AGENT_LLM_TIMEOUT_MS: { path: ['agents', 'llmTimeoutMs'], kind: 'int' },
  AGENT_SECRETS: { path: ['agents', 'secrets'], kind: 'json' },
};

export class ConfigError extends Error {}

type Json = Record<string, unknown>;

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b) ? deepMerge(b as Json, v as Json) : v;
  }
  return out;
}

function setPath(obj: Json, keys: string[], value: unknown): void {
  let cur = obj;
  const last = keys[keys.length - 1];
  if (last === undefined) throw new Error('setPath: empty key path');
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Json;
  cur[last] = value;
}

function fromEnv(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  for (const [name, { path: keys, kind }] of Object.entries(ENV_MAP)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (kind === 'int') {
      value = /^-?\d+$/.test(raw) ? Number(raw) : raw; // left as text so validation names it
    } else if (kind === 'bool') {
      value = raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw;
    } else if (kind === 'list') {
      value = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    } else if (kind === 'json') {
      try {
        value = JSON.parse(raw);
      } catch {
        value = raw; // left as text so validation names it
      }
    } else if (kind === 'nullable') {
      value = raw === 'none' || raw === 'off' ? null : raw;
    }
    setPath(out, keys, value);
  }
  return out;
}

function readJson(file: string): Json {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

const envNameOf = (keys: string[]): string => Object.entries(ENV_MAP).find(([, m]) => m.path.join('.') === keys.join('.'))?.[0] ?? '';

/**
 * Loads and validates the configuration. `overrides` (tests, embedding) apply last.
 * Throws ConfigError naming every bad setting and, where there is one, its environment variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Json = {}): Config {
  const dir = env.VOXBRIDGE_CONFIG_DIR ?? path.join(packageRoot, 'config');
  let merged = readJson(path.join(dir, 'default.json'));
  const profile = env.VOXBRIDGE_ENV;
  if (profile) {
    const file = path.join(dir, `${profile}.json`);
    if (!existsSync(file)) throw new ConfigError(`VOXBRIDGE_ENV=${profile} but ${file} does not exist`);
    merged = deepMerge(merged, readJson(file));
  }
  merged = deepMerge(deepMerge(merged, fromEnv(env)), overrides);
  if (!Value.Check(ConfigSchema, merged)) {
    const problems = [...Value.Errors(ConfigSchema, merged)].slice(0, 10).map((e) => {
      const keys = e.path.split('/').filter(Boolean);
      const envName = envNameOf(keys);
      return `  ${keys.join('.') || '(root)'}${envName ? ` (${envName})` : ''}: ${e.message}, got ${JSON.stringify(e.value)}`;
    });
    throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
  }
  const cfg = merged;
  if (cfg.sip.rtpPortMin >= cfg.sip.rtpPortMax) {
    throw new ConfigError(`invalid configuration: sip.rtpPortMin (RTP_PORT_MIN) must be below sip.rtpPortMax (RTP_PORT_MAX)`);
  }
  if (cfg.sip.mediaIo === 'native' && (cfg.sip.mediaWorkers ?? 0) > 0) {
    throw new ConfigError(
      'invalid configuration: sip.mediaIo (MEDIA_IO) native reads the RTP sockets on the main thread: set sip.mediaWorkers (MEDIA_WORKERS) to 0',
    );
  }
  if (!!cfg.sip.tls.certFile !== !!cfg.sip.tls.keyFile) {
    throw new ConfigError('invalid configuration: sip.tls.certFile (SIP_TLS_CERT) and sip.tls.keyFile (SIP_TLS_KEY) go together');
  }
  if (cfg.apiEnvironment === 'live' && cfg.secretKey.startsWith('dev-only')) {
    throw new ConfigError('invalid configuration: secretKey (SECRET_KEY) must be set to a private random value when API_ENVIRONMENT=live');
  }
  if (cfg.recordings.storage === 's3') {
    const missing = (['bucket', 'region', 'accessKeyId', 'secretAccessKey'] as const).filter((k) => !cfg.recordings.s3[k]);
    if (missing.length) {
      const names = missing.map((k) => `recordings.s3.${k} (${envNameOf(['recordings', 's3', k])})`);
      throw new ConfigError(
        `invalid configuration: recordings.storage (RECORDINGS_STORAGE) is s3 but ${names.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set`,
      );
    }
  }
  if (cfg.postCall.summary.engine === 'openai_compatible' && (!cfg.postCall.summary.baseUrl || !cfg.postCall.summary.model)) {
    throw new ConfigError(
      'invalid configuration: postCall.summary.engine (ANALYSIS_SUMMARY_ENGINE) is openai_compatible but postCall.summary.baseUrl (ANALYSIS_LLM_BASE_URL) and postCall.summary.model (ANALYSIS_LLM_MODEL) are not both set',
    );
  }
  cfg.engines.pocketsphinx.hmm = path.resolve(packageRoot, cfg.engines.pocketsphinx.hmm);
  cfg.vad.sileroModel = path.resolve(packageRoot, cfg.vad.sileroModel);
  // Only the media role runs a VAD: the CLI and api/worker nodes start without the model.
  if (cfg.vad.engine === 'silero' && cfg.roles.includes('media') && !existsSync(cfg.vad.sileroModel)) {
    throw new ConfigError(
      `invalid configuration: vad.sileroModel (VAD_SILERO_MODEL): ${cfg.vad.sileroModel} does not exist (scripts/fetch-vad-model.sh fetches it; VAD_ENGINE=energy needs no model)`,
    );
  }
  cfg.dataDir = path.resolve(packageRoot, cfg.dataDir);
  return cfg;
}
