// Request/reply over the session bus (DESIGN.md "Scale-out": API commands for a session travel to
// the node that owns it). A node forwards a command with a request id and its reply channel; the
// owner carries it out and publishes the result (value or catalog error) on that channel. One
// subscriber connection per node serves both directions.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ownerOf } from './ownership.js';
import { publishSessionCommand, replyChannel, sessionChannel, type ForwardedCommand, type SessionCommand, type SessionReply } from './session-bus.js';

/** The owner answered with an error (`code` is a catalog code, e.g. dial_failed). */
export class RemoteCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly sipStatus?: number,
  ) {
    super(message);
    this.name = 'RemoteCommandError';
  }
}

/** The owner did not answer in time (it may have died, or the bus is down). */
export class RemoteCommandTimeout extends Error {
  constructor(readonly node: string) {
    super(`node ${node} did not answer in time`);
    this.name = 'RemoteCommandTimeout';
  }
}

export type CommandExecutor = (cmd: ForwardedCommand) => Promise<unknown>;

export interface SessionRpcOptions {
  redis: Redis;
  prefix: string;
  nodeId: string;
  logger: Logger;
  /** Carries out commands addressed to this node (its telephony); absent → refused. */
  execute?: CommandExecutor;
}

/** Nodes that carry out calls refresh their entry this often; entries older than 3 periods are stale. */
const ANNOUNCE_MS = 5_000;
const CALL_NODES_KEY = 'call-nodes';

interface Pending {
  resolve(v: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class SessionRpc {
  private readonly pending = new Map<string, Pending>();
  private readonly subscriber: Redis;
  private readonly log: Logger;
  private closed = false;
  private announceTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly o: SessionRpcOptions) {
    this.subscriber = o.redis.duplicate();
    this.log = o.logger.child({ component: 'session-rpc' });
  }

  static async start(o: SessionRpcOptions): Promise<SessionRpc> {
    const rpc = new SessionRpc(o);
    rpc.subscriber.on('message', rpc.onMessage);
    await rpc.subscriber.subscribe(sessionChannel(o.prefix), replyChannel(o.prefix, o.nodeId));
    if (o.execute) {
      // Announce this node as one that can place calls, for nodes without telephony (api role alone).
      const announce = () => o.redis.zadd(CALL_NODES_KEY, Date.now(), o.nodeId).catch((err) => rpc.log.warn({ err }, 'announcing call node failed'));
      await announce();
      rpc.announceTimer = setInterval(() => void announce(), ANNOUNCE_MS);
      rpc.announceTimer.unref();
    }
    return rpc;
  }

  /** A node that can place calls and announced itself recently (random among them), or null. */
  async anyCallNode(): Promise<string | null> {
    const nodes = await this.o.redis.zrangebyscore(CALL_NODES_KEY, Date.now() - 3 * ANNOUNCE_MS, '+inf');
    return nodes[Math.floor(Math.random() * nodes.length)] ?? null;
  }

  get nodeId(): string {
    return this.o.nodeId;
  }

  /** The node owning the live session when that is another node; null when this node should act. */
  async remoteOwner(sessionId: string): Promise<string | null> {
    const owner = await ownerOf(this.o.redis, sessionId);
    return owner && owner.node !== this.o.nodeId ? owner.node : null;
  }

  /** Sends `cmd` to node `to`; resolves with its value, rejects with RemoteCommandError or RemoteCommandTimeout. */
  request(to: string, cmd: Pick<ForwardedCommand, 'kind' | 'sessionId' | 'orgId' | 'payload'>, timeoutMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new RemoteCommandTimeout(to));
    const requestId = randomUUID();
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new RemoteCommandTimeout(to));
      }, timeoutMs);
      this.pending.set(requestId, { resolve, reject, timer });
      publishSessionCommand(this.o.redis, this.o.prefix, { ...cmd, requestId, to, replyTo: this.o.nodeId }).catch((err: Error) => {
        clearTimeout(timer);
        this.pending.delete(requestId);
        reject(err);
      });
    });
  }

  private readonly onMessage = (channel: string, raw: string): void => {
    let msg: unknown;
    try {
      msg = JSON.parse(raw);
    } catch {
      return; // a malformed message from another node is dropped, not fatal
    }
    if (channel === replyChannel(this.o.prefix, this.o.nodeId)) return this.onReply(msg as SessionReply);
    const cmd = msg as SessionCommand;
    if ((cmd.kind === 'dial' || cmd.kind === 'hangup') && cmd.to === this.o.nodeId) void this.serve(cmd);
  };

  private onReply(reply: SessionReply): void {
    const p = this.pending.get(reply.requestId);
    if (!p) return; // timed out already
    this.pending.delete(reply.requestId);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(new RemoteCommandError(reply.error.code, reply.error.message, reply.error.sipStatus));
  }

  private async serve(cmd: ForwardedCommand): Promise<void> {
    let reply: SessionReply;
    try {
      if (!this.o.execute || this.closed) throw Object.assign(new Error('This node cannot carry out calls.'), { code: 'media_server_unavailable' });
      reply = { requestId: cmd.requestId, ok: true, value: await this.o.execute(cmd) };
    } catch (err) {
      const e = err as { code?: unknown; message?: string; sipStatus?: number };
      if (typeof e.code !== 'string') this.log.error({ err, session_id: cmd.sessionId, kind: cmd.kind }, 'forwarded command failed');
      reply = {
        requestId: cmd.requestId,
        ok: false,
        error:
          typeof e.code === 'string'
            ? { code: e.code, message: e.message ?? '', ...(e.sipStatus !== undefined ? { sipStatus: e.sipStatus } : {}) }
            : { code: 'internal_error', message: 'The node that owns the session failed to carry out the command.' },
      };
    }
    await this.o.redis
      .publish(replyChannel(this.o.prefix, cmd.replyTo), JSON.stringify(reply))
      .catch((err) => this.log.warn({ err, session_id: cmd.sessionId }, 'publishing reply failed'));
  }

  /** Stops serving; requests still waiting fail as timeouts. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.announceTimer) {
      clearInterval(this.announceTimer);
      await this.o.redis.zrem(CALL_NODES_KEY, this.o.nodeId).catch(() => undefined);
    }
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new RemoteCommandTimeout('(shutting down)'));
      this.pending.delete(id);
    }
    this.subscriber.off('message', this.onMessage);
    this.subscriber.disconnect();
  }
}
