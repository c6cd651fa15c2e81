// AI agent test helpers: an agent row and an agent session for a stream test gateway, a local
// tool webhook server that records each signed request and answers with JSON, and a phone's RTP end.
import dgram from 'node:dgram';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { insertAgent, type AgentValues } from '../../src/store/index.js';
import type { StreamTestGateway } from './stream.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from '../../src/media/g711.js';

export async function createAgentSession(
  t: StreamTestGateway,
  agent: AgentValues & { name: string },
  opts: { mode?: 'ai_agent' | 'help_chat_voice'; overrides?: Record<string, unknown>; routing?: Record<string, unknown> } = {},
): Promise<{ id: string; token: string; agentId: string }> {
  const row = await insertAgent(t.gw.db, t.org.orgId, agent);
  const { id, token } = await t.createSession({
    mode: opts.mode ?? 'ai_agent',
    source_language: 'en',
    target_language: 'en',
    ...(opts.routing ? { routing: opts.routing } : {}),
  });
  await t.gw.db.query('UPDATE sessions SET ai_agent = $2 WHERE id = $1', [id, { id: row.id, ...(opts.overrides ? { overrides: opts.overrides } : {}) }]);
  return { id, token, agentId: row.id };
}

export interface ToolRequest {
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: any;
  receivedAt: number;
}

/** An HTTP tool webhook: `reply` decides status, body and delay per request. */
export class ToolWebhookServer {
  readonly requests: ToolRequest[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(reply: (req: ToolRequest) => { status?: number; body: unknown; delayMs?: number }): Promise<ToolWebhookServer> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const r: ToolRequest = { headers: req.headers, rawBody, body: JSON.parse(rawBody || 'null'), receivedAt: performance.now() };
        self.requests.push(r);
        const out = reply(r);
        setTimeout(() => {
          res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out.body));
        }, out.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const self = new ToolWebhookServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`);
    return self;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface HeardFrame {
  /** performance.now() when the packet arrived. */
  at: number;
  rms: number;
}

const frameRms = (f: Int16Array): number => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / Math.max(1, f.length));

/**
 * A phone's media end for SIP tests: a UDP socket the SIP scenario's SDP points at. Once the
 * gateway's first packet arrives (symmetric RTP: it sends from the port it listens on, and tells
 * the payload type it chose), it sends a continuous 20 ms stream like a phone does — silence, or
 * queued speech — and records the level of every packet it hears.
 */
export class RtpPhone {
  readonly heard: HeardFrame[] = [];
  private gatewayPort = 0;
  private payloadType = -1;
  private queue: Array<{ frame: Int16Array; onSent?: (at: number) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (m, rinfo) => {
      const p = parseRtp(m);
      if (!p || (p.payloadType !== 0 && p.payloadType !== 8)) return;
      this.heard.push({ at: performance.now(), rms: frameRms(p.payloadType === 8 ? alawDecode(p.payload) : mulawDecode(p.payload)) });
      if (this.gatewayPort === 0) {
        this.gatewayPort = rinfo.port;
        this.payloadType = p.payloadType;
        this.startStream();
      }
    });
  }

  static async open(): Promise<RtpPhone> {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    return new RtpPhone(s);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** True once the gateway's media has reached this phone. */
  get connected(): boolean {
    return this.gatewayPort > 0;
  }

  /**
   * Queues speech; resolves when its last frame has been sent, with the send time of its first
   * loud frame (the speech onset, performance.now()).
   */
  speak(pcm: Int16Array, loud = 300): Promise<{ onsetAt: number }> {
    const frames: Int16Array[] = [];
    for (let i = 0; i + 160 <= pcm.length; i += 160) frames.push(pcm.subarray(i, i + 160));
    const firstLoud = Math.max(
      0,
      frames.findIndex((f) => frameRms(f) > loud),
    );
    let onsetAt = 0;
    return new Promise((resolve) => {
      frames.forEach((frame, i) =>
        this.queue.push({
          frame,
          onSent:
            i === firstLoud || i === frames.length - 1
              ? (at) => {
                  if (i === firstLoud) onsetAt = at;
                  if (i === frames.length - 1) resolve({ onsetAt });
                }
              : undefined,
        }),
      );
    });
  }

  /** Packets heard after `since` louder than `threshold` (speech, not the silence the gateway sends between turns). */
  loudSince(since: number, threshold = 300): HeardFrame[] {
    return this.heard.filter((h) => h.at >= since && h.rms > threshold);
  }

  close(): void {
    clearInterval(this.timer);
    this.socket.close();
  }

  /** Packets go out by elapsed time, not one per timer callback: a phone's clock does not drift like setInterval. */
  private startStream(): void {
    const start = performance.now();
    const quiet = new Int16Array(160);
    this.timer = setInterval(() => {
      const due = Math.floor((performance.now() - start) / 20) + 1;
      for (; this.sent < due; this.sent++) {
        const next = this.queue.shift();
        const pcm = next?.frame ?? quiet;
        const payload = this.payloadType === 8 ? alawEncode(pcm) : mulawEncode(pcm);
        this.socket.send(
          serializeRtp({
            marker: this.sent === 0,
            payloadType: this.payloadType,
            sequence: this.sent & 0xffff,
            timestamp: (this.sent * 160) >>> 0,
            ssrc: 0x5151,
            payload,
          }),
          this.gatewayPort,
          '127.0.0.1',
        );
        next?.onSent?.(performance.now());
      }
    }, 5);
  }
}
