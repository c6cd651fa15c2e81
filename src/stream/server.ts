// The streaming socket (SPEC "Streaming socket messages", "Stream token", "Socket close codes") on the
// gateway's HTTP server: `GET /v1/sessions/{id}/connect?token=kst_…` upgraded by `ws`.
//
// Connect failures are reported with close codes after the upgrade, never with an HTTP error on the
// upgrade: a browser sees neither the status nor the body of a refused upgrade, only a close code.
// Order of checks: token (4001) → connect flood (4029) → session exists (4004) → not ended (4010)
// → media path keeps time (1013 media_overloaded, for a session not live here) → no other stream
// anywhere (4009) → open the live session (4500 if that fails; 1013 naming the owner's stream URL
// when another live node owns the session, see README "Scale-out").
// Only the stream token is accepted; an API key in a header or the query is ignored.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { getSessionRow, type Db } from '../store/index.js';
import { ownerOf, resolveStreamToken } from '../coord/index.js';
import { SessionEndedError, SessionNotFoundError, SessionOwnedElsewhereError, sharedMediaClock, type SessionRegistry } from '../sessions/index.js';
import type { OverloadGuard } from '../media/index.js';
import { CLOSE } from './protocol.js';
import { allowConnect, claimStream, CLAIM_TTL_MS, refreshStreamClaims, releaseStream, replaceStream, streamHolder } from './stream-claims.js';
import { DirectTextSender } from './direct-send.js';
import { StreamConnection } from './stream-connection.js';
import { StreamTickReader } from './tick-reader.js';
import { boundUnsentBytes, tcpSendQueueAddon } from './tcp-send-queue.js';

export interface StreamServerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  registry: SessionRegistry;
  /** Server ping interval; a socket that missed the previous pong is dropped (default 15 s). */
  heartbeatMs?: number;
  /** The node's media overload guard: while it is overloaded, a session not live here yet is refused 1013. */
  overload?: Pick<OverloadGuard, 'overloaded'>;
}

export interface StreamServer {
  /** Connected streams on this node. */
  readonly connections: number;
  /** audio.output frames dropped since start because a socket was not keeping up (stream-connection.ts). */
  readonly outputDropped: number;
  /** Connects refused since start because the media path was overloaded (1013 `media_overloaded`). */
  readonly refusedOverloaded: number;
  /** Closes every socket with 1001 (going away) and stops listening for upgrades; idempotent. */
  close(): Promise<void>;
}

const CONNECT_PATH = /^\/v1\/sessions\/([^/?#]+)\/connect$/;

/**
 * The hard cap: `ws` reads a message up to this size (or 4x the ceiling, if larger) so anything
 * above `limits.socketMessageMaxBytes` is answered `message_too_large` with the socket kept open;
 * only a message above the cap is closed with 1009 (message too big). Far above any real audio chunk.
 */
export const SOCKET_MESSAGE_HARD_CAP_BYTES = 16 * 1024 * 1024;

export function socketMaxPayload(ceiling: number): number {
  return Math.max(SOCKET_MESSAGE_HARD_CAP_BYTES, ceiling * 4);
}

/**
 * `session_moved <owner's stream URL>` (the same token works there), or just `session_moved` when
 * the URL does not fit the 123 bytes a close reason may carry (RFC 6455 §5.5).
 */
export function movedReason(ownerPublicUrl: string, sessionId: string): string {
  const u = new URL(ownerPublicUrl);
  const reason = `session_moved ${u.protocol === 'https:' ? 'wss' : 'ws'}://${u.host}/v1/sessions/${encodeURIComponent(sessionId)}/connect`;
  return Buffer.byteLength(reason) <= 123 ? reason : 'session_moved';
}

export function attachStreamServer(httpServer: Server, deps: StreamServerDeps): StreamServer {
  const log = deps.logger.child({ component: 'stream' });
  const ceiling = deps.config.limits.socketMessageMaxBytes;
  // Messages up to the hard cap are read and refused politely; beyond it ws closes with 1009.
  const wss = new WebSocketServer({ noServer: true, maxPayload: socketMaxPayload(ceiling), perMessageDeflate: false });
  const live = new Map<WebSocket, { sessionId: string; holder: string; alive: boolean }>();
  let closing = false;
  let outputDropped = 0;
  let refusedOverloaded = 0;
  let unboundedLogged = false;
  tcpSendQueueAddon();
  let tickReader: StreamTickReader | null | undefined;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const rawId = CONNECT_PATH.exec(url.pathname)?.[1];
    if (rawId === undefined) {
      // Not ours: answer 404 unless another part of the gateway also listens for upgrades.
      if (httpServer.listenerCount('upgrade') <= 1) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      }
      return;
    }
    if (closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    let sessionId: string;
    try {
      sessionId = decodeURIComponent(rawId);
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'); // malformed %-escape
      return;
    }
    const token = url.searchParams.get('token') ?? '';
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.pause(); // nothing is read until the checks pass and the connection is wired
      void admit(ws, sessionId, token, req).catch((err) => {
        log.error({ err, session_id: sessionId }, 'stream connect failed');
        ws.resume();
        ws.close(CLOSE.serverError, 'internal_error');
      });
    });
  };

  async function admit(ws: WebSocket, sessionId: string, token: string, req: IncomingMessage): Promise<void> {
    const reject = (code: number, reason: string) => {
      log.info({ session_id: sessionId, code, reason, ip: req.socket.remoteAddress }, 'stream connect refused');
      ws.resume(); // the client's closing handshake must be read, or the close waits for ws's timeout
      ws.close(code, reason);
    };
    const tokenSession = token ? await resolveStreamToken(deps.redis, token) : null;
    if (tokenSession === null || tokenSession !== sessionId) return reject(CLOSE.tokenInvalid, 'stream_token_invalid');
    if (!(await allowConnect(deps.redis, sessionId, deps.config.limits.socketConnectsPerMinute))) {
      return reject(CLOSE.rateLimited, 'rate_limit_exceeded');
    }
    const row = await getSessionRow(deps.db, sessionId);
    if (!row) return reject(CLOSE.sessionNotFound, 'session_not_found');
    if (row.status === 'ended') return reject(CLOSE.sessionEnded, 'session_already_ended');
    if (await wouldOverload(sessionId)) {
      refusedOverloaded++;
      return reject(CLOSE.tryAgainLater, 'media_overloaded');
    }
    const holder = `${deps.config.nodeId}:${randomUUID()}`;
    if (!(await claimStream(deps.redis, sessionId, holder)) && !(await takeStaleStream(sessionId, holder))) {
      return reject(CLOSE.streamAlreadyActive, 'stream_already_connected');
    }

    let session;
    try {
      session = await deps.registry.open(sessionId);
    } catch (err) {
      await releaseStream(deps.redis, sessionId, holder).catch(() => undefined);
      if (err instanceof SessionNotFoundError) return reject(CLOSE.sessionNotFound, 'session_not_found');
      if (err instanceof SessionEndedError) return reject(CLOSE.sessionEnded, 'session_already_ended');
      if (err instanceof SessionOwnedElsewhereError) return reject(CLOSE.tryAgainLater, movedReason(err.owner.url, sessionId));
      throw err;
    }
    if (ws.readyState !== ws.OPEN || closing) {
      await releaseStream(deps.redis, sessionId, holder).catch(() => undefined);
      deps.registry.streamAttached(sessionId);
      deps.registry.streamDetached(sessionId); // the client left during connect: grace applies
      if (closing) {
        ws.resume();
        ws.close(CLOSE.goingAway, 'server_shutdown');
      }
      return;
    }
    live.set(ws, { sessionId, holder, alive: true });
    deps.registry.streamAttached(sessionId);
    ws.on('pong', () => {
      const c = live.get(ws);
      if (c) c.alive = true;
    });
    const bound = boundUnsentBytes(req.socket);
    if (!bound.bounded && !unboundedLogged) {
      unboundedLogged = true; // once per node: the reason is the same for every socket
      log.warn(
        { reason: bound.reason },
        'stream sockets: the kernel send queue is not bounded; audio.output to a client that falls behind may arrive late by seconds (set net.ipv4.tcp_notsent_lowat)',
      );
    }
    let droppedHere = 0;
    new StreamConnection({
      ws,
      session,
      registry: deps.registry,
      maxMessageBytes: ceiling,
      directSend: deps.config.streamDirectSend === false ? null : DirectTextSender.for(req.socket),
      logger: log.child({ session_id: sessionId }),
      onOutputDropped: () => {
        outputDropped++;
        // Once per connection: an operator sees which session's client fell behind; the count comes at close.
        if (droppedHere++ === 0) log.warn({ session_id: sessionId }, 'stream client falling behind: audio.output dropped');
      },
      onClosed: () => {
        log.info({ session_id: sessionId, output_dropped_frames: droppedHere }, 'stream disconnected');
        live.delete(ws);
        releaseStream(deps.redis, sessionId, holder).catch((err) => log.warn({ err, session_id: sessionId }, 'releasing stream claim failed'));
        if (!session.closed) deps.registry.streamDetached(sessionId);
      },
    });
    log.info({ session_id: sessionId }, 'stream connected');
    // Read at the media clock's sub-ticks where it can be (config read per connection, as streamDirectSend).
    const reader = deps.config.streamTickRead === false ? null : (tickReader ??= StreamTickReader.on(sharedMediaClock));
    if (!reader?.take(ws)) ws.resume();
  }

  /**
   * While the media clock runs late (media/overload-guard.ts), a session that would go live here is
   * refused, as a new call is with 503: it would make every live stream and call on the node worse.
   * A session already live here (its reconnect grace, a phone leg) is existing load and is let in;
   * one live on another node is left to registry.open, which names the owner (session_moved).
   */
  async function wouldOverload(sessionId: string): Promise<boolean> {
    if (!deps.overload?.overloaded || deps.registry.get(sessionId)) return false;
    const owner = await ownerOf(deps.redis, sessionId);
    return !owner || owner.node === deps.config.nodeId;
  }

  /**
   * A stream claim outlives a node that died by up to its TTL. Its holder names the node; when that
   * node no longer owns the session (its owner claim expired: README "Scale-out"), the socket is
   * gone with it and a reconnect here may take the stream over at once.
   */
  async function takeStaleStream(sessionId: string, holder: string): Promise<boolean> {
    const current = await streamHolder(deps.redis, sessionId);
    if (current === null) return claimStream(deps.redis, sessionId, holder);
    const holderNode = current.slice(0, current.lastIndexOf(':'));
    if (holderNode === deps.config.nodeId) return false; // our own socket, or our own claim being set up
    const owner = await ownerOf(deps.redis, sessionId);
    if (owner && owner.node === holderNode) return false;
    return replaceStream(deps.redis, sessionId, current, holder);
  }

  httpServer.on('upgrade', onUpgrade);

  // One timer for all sockets: heartbeat (drop half-open TCP so a reconnect is not refused with 4009)
  // and refresh of the Redis stream claims.
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const heartbeat = setInterval(() => {
    for (const [ws, c] of live) {
      if (!c.alive) {
        ws.terminate();
        continue;
      }
      c.alive = false;
      ws.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();
  const refresher = setInterval(() => {
    refreshStreamClaims(
      deps.redis,
      [...live.values()].map((c) => [c.sessionId, c.holder] as [string, string]),
    ).catch((err) => log.warn({ err }, 'refreshing stream claims failed'));
  }, CLAIM_TTL_MS / 3);
  refresher.unref();

  let closed: Promise<void> | null = null;
  return {
    get connections() {
      return live.size;
    },
    get outputDropped() {
      return outputDropped;
    },
    get refusedOverloaded() {
      return refusedOverloaded;
    },
    close(): Promise<void> {
      return (closed ??= (async () => {
        closing = true;
        httpServer.off('upgrade', onUpgrade);
        clearInterval(heartbeat);
        clearInterval(refresher);
        const claims = [...live.values()];
        for (const ws of live.keys()) ws.close(CLOSE.goingAway, 'server_shutdown');
        await Promise.allSettled(claims.map((c) => releaseStream(deps.redis, c.sessionId, c.holder)));
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        for (const ws of wss.clients) ws.terminate();
      })());
    },
  };
}
