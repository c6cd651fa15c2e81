// A test gateway with the media role (server.ts starts the session registry and the stream server),
// plus a small WebSocket client that records every message it receives.
import { WebSocket } from 'ws';
import { testConfig, dropTestState, type TestOrg } from './gateway.js';
import { startGateway, type Gateway } from '../../src/server.js';
import { createApiKey, createOrg } from '../../src/store/index.js';
import { newId } from '../../src/ids.js';
import { issueStreamToken } from '../../src/coord/stream-tokens.js';
import { createEngines, buildEngines, type Engines } from '../../src/speech/index.js';
import type { SessionRegistry } from '../../src/sessions/index.js';
import type { StreamServer } from '../../src/stream/index.js';
import { toMulaw } from './speech-audio.js';

export type EngineChoice = 'embedded' | 'none' | Engines;

export interface StreamTestGateway {
  gw: Gateway;
  org: TestOrg;
  registry: SessionRegistry;
  stream: StreamServer;
  engines: Engines;
  wsUrl(sessionId: string, token: string | null): string;
  /** Inserts a session row for the test org and issues a stream token for it. */
  createSession(opts?: SessionOpts): Promise<{ id: string; token: string }>;
  issueToken(sessionId: string, ttlSeconds?: number): Promise<string>;
  /** fetch() against the gateway with `key` as Bearer token and a JSON body. */
  api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  connect(sessionId: string, token: string | null, headers?: Record<string, string>): Promise<TestSocket>;
  stop(): Promise<void>;
}

export interface SessionOpts {
  mode?: string;
  source_language?: string | null;
  target_language?: string | null;
  routing?: Record<string, unknown> | null;
  status?: 'created' | 'active' | 'ended';
  voice?: Record<string, unknown>;
  /** Resolved carrier; default as the API resolves explicit routing (`sip` for routing.type sip). */
  provider?: string | null;
}

export async function startStreamGateway(opts: { engines?: EngineChoice; overrides?: Record<string, unknown> } = {}): Promise<StreamTestGateway> {
  // The media role, as in production: server.ts builds the registry and the stream server around
  // the given engines. SIP is off: these tests carry audio over the socket only.
  const config = testConfig({ roles: ['api', 'media', 'worker'], sip: { enabled: false }, ...opts.overrides });
  const choice = opts.engines ?? 'none';
  const engines = choice === 'embedded' ? await createEngines(config.engines) : choice === 'none' ? buildEngines(null, null, null) : choice;
  const gw = await startGateway(config, { engines });
  const { registry, stream } = gw;
  if (!registry || !stream) throw new Error('the media role did not start the session registry and stream server');
  const orgRow = await createOrg(gw.db, {
    name: `stream_${Date.now().toString(36)}`,
    credits: 1000,
    maxConcurrentSessions: 1000,
    rateLimit: 100_000,
    rateWindowSeconds: 60,
    features: ['ai_agent', 'sip'],
  });
  const key = await createApiKey(gw.db, { orgId: orgRow.id, environment: config.apiEnvironment, scopes: ['sessions:read', 'sessions:write'] });
  const org: TestOrg = { orgId: orgRow.id, key: key.key!, keyId: key.id };
  const wsBase = gw.httpUrl.replace(/^http/, 'ws');

  const issueToken = async (sessionId: string, ttl = gw.config.limits.streamTokenTtlSeconds) => (await issueStreamToken(gw.redis, sessionId, ttl)).token;
  const createSession = async (s: SessionOpts = {}) => {
    const id = newId('sess');
    const routing = s.routing ?? null;
    const provider = s.provider !== undefined ? s.provider : routing?.type === 'sip' ? 'sip' : null;
    // The row as POST /v1/sessions writes it (recording with its resolved fields, provider, number).
    await gw.db.query(
      `INSERT INTO sessions (id, org_id, status, mode, source_language, target_language, provider, phone_number, connection_id,
                             routing, audio, voice, recording, ended_at, end_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        id,
        org.orgId,
        s.status ?? 'created',
        s.mode ?? 'bidirectional_translation',
        s.source_language === undefined ? 'en' : s.source_language,
        s.target_language === undefined ? 'es' : s.target_language,
        provider,
        (routing?.phone_number as string | undefined) ?? null,
        (routing?.connection_id as string | undefined) ?? null,
        routing,
        { sample_rate_hz: 8000, encoding: 'mulaw', channels: 1 },
        { stability: 0.5, similarity_boost: 0.75, speed: 1, ...s.voice },
        { enabled: false, mode: 'dual_channel', consent_required: false, consent_status: 'not_required' },
        s.status === 'ended' ? new Date() : null,
        s.status === 'ended' ? 'api_request' : null,
      ],
    );
    return { id, token: await issueToken(id) };
  };
  const wsUrl = (sessionId: string, token: string | null) =>
    `${wsBase}/v1/sessions/${sessionId}/connect${token === null ? '' : `?token=${encodeURIComponent(token)}`}`;
  const connect = (sessionId: string, token: string | null, headers?: Record<string, string>) => TestSocket.open(wsUrl(sessionId, token), headers);
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const stop = async () => {
    await gw.close();
    await engines.close();
    await dropTestState(config);
  };
  return { gw, org, registry, stream, engines, wsUrl, createSession, issueToken, api, connect, stop };
}

export interface ReceivedMessage {
  type: string;
  [k: string]: any;
  /** performance.now() when it arrived. */
  receivedAt: number;
}

/** A recording WebSocket client: every message is kept; waits scan the whole history. */
export class TestSocket {
  readonly messages: ReceivedMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as ReceivedMessage;
      msg.receivedAt = performance.now();
      this.messages.push(msg);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake();
      });
    });
  }

  static open(url: string, headers?: Record<string, string>): Promise<TestSocket> {
    const ws = new WebSocket(url, { headers });
    const s = new TestSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(s));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  get isClosed(): boolean {
    return this.ws.readyState === WebSocket.CLOSED;
  }

  of(type: string): ReceivedMessage[] {
    return this.messages.filter((m) => m.type === type);
  }

  /** The first message (from the start of the history) matching `pred`. */
  async waitFor(pred: (m: ReceivedMessage) => boolean, timeoutMs = 20_000, what = 'message'): Promise<ReceivedMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.messages.find(pred);
      if (hit) return hit;
      if (this.isClosed) throw new Error(`socket closed while waiting for ${what}; got: ${this.summary()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got: ${this.summary()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  waitForType(type: string, timeoutMs?: number): Promise<ReceivedMessage> {
    return this.waitFor((m) => m.type === type, timeoutMs, type);
  }

  /** Waits until `count` messages of `type` have arrived. */
  async waitForCount(type: string, count: number, timeoutMs = 20_000): Promise<ReceivedMessage[]> {
    await this.waitFor(() => this.of(type).length >= count, timeoutMs, `${count} x ${type}`);
    return this.of(type);
  }

  summary(): string {
    const counts = new Map<string, number>();
    for (const m of this.messages) counts.set(m.type, (counts.get(m.type) ?? 0) + 1);
    const finals = this.of('transcript.final')
      .map((f) => `${f.speaker}:"${f.text}"`)
      .join(', ');
    return `${[...counts].map(([t, n]) => `${t} x${n}`).join(', ') || 'nothing'}${finals ? ` finals: ${finals}` : ''}`;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /**
   * Streams PCM as `audio.input` mu-law chunks of `chunkMs` (default 100 ms). `pace` 1 is real time,
   * 4 is four times faster; 0 sends everything at once.
   */
  async sendAudio(pcm: Int16Array, opts: { speaker?: string; chunkMs?: number; pace?: number } = {}): Promise<void> {
    const chunk = ((opts.chunkMs ?? 100) * 8000) / 1000;
    const pace = opts.pace ?? 4;
    const bytes = toMulaw(pcm);
    const start = performance.now();
    let seq = 0;
    for (let off = 0; off < bytes.length; off += chunk) {
      const part = bytes.subarray(off, off + chunk);
      this.send({
        type: 'audio.input',
        sequence: ++seq,
        timestamp_ms: Math.round((off / 8000) * 1000),
        ...(opts.speaker ? { speaker: opts.speaker } : {}),
        audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: Buffer.from(part).toString('base64') },
      });
      if (pace > 0) {
        const due = start + (((off + chunk) / 8000) * 1000) / pace;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  close(code?: number): Promise<{ code: number; reason: string }> {
    if (!this.isClosed) this.ws.close(code);
    return this.closed;
  }
}
