// Cross-node session commands over Redis pub/sub (DESIGN.md "Scale-out"): the node that owns a
// live session acts on them; the others ignore them. Channel names carry the deployment's prefix.
import type { Redis } from 'ioredis';

export type SessionCommand = { kind: 'end'; sessionId: string; reason: string } | ForwardedCommand;

/**
 * A REST command received by a node that does not own the live session, for the owner (`to`) to
 * carry out; the owner publishes a SessionReply with `requestId` on `replyChannel(prefix, replyTo)`.
 */
export interface ForwardedCommand {
  kind: 'dial' | 'hangup';
  sessionId: string;
  requestId: string;
  /** The owner node that should act. */
  to: string;
  /** The node waiting for the reply. */
  replyTo: string;
  orgId: string;
  payload: unknown;
}

export type SessionReply =
  { requestId: string; ok: true; value: unknown } | { requestId: string; ok: false; error: { code: string; message: string; sipStatus?: number } };

export const sessionChannel = (prefix: string): string => `${prefix}session-commands`;
export const replyChannel = (prefix: string, node: string): string => `${prefix}session-replies:${node}`;

export async function publishSessionCommand(redis: Redis, prefix: string, cmd: SessionCommand): Promise<void> {
  await redis.publish(sessionChannel(prefix), JSON.stringify(cmd));
}

/**
 * Subscribes `handler` to session commands. `subscriber` must be a dedicated connection
 * (a Redis connection in subscribe mode can do nothing else). Returns an unsubscribe function.
 */
export async function subscribeSessionCommands(subscriber: Redis, prefix: string, handler: (cmd: SessionCommand) => void): Promise<() => Promise<void>> {
  const channel = sessionChannel(prefix);
  const onMessage = (ch: string, raw: string) => {
    if (ch !== channel) return;
    try {
      handler(JSON.parse(raw) as SessionCommand);
    } catch {
      /* a malformed command from another node is dropped, not fatal */
    }
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off('message', onMessage);
    await subscriber.unsubscribe(channel);
  };
}
