// Cross-node session commands over Redis pub/sub (DESIGN.md "Scale-out"): the node that owns a
// live session acts on them; the others ignore them. Channel names carry the deployment's prefix.
import type { Redis } from 'ioredis';

export type SessionCommand =
  | { kind: 'end'; sessionId: string; reason: string }
  | { kind: 'dial'; sessionId: string; requestId: string; payload: unknown }
  | { kind: 'hangup'; sessionId: string; requestId: string; payload: unknown };

export const sessionChannel = (prefix: string): string => `${prefix}session-commands`;

export async function publishSessionCommand(redis: Redis, prefix: string, cmd: SessionCommand): Promise<void> {
  await redis.publish(sessionChannel(prefix), JSON.stringify(cmd));
}

/**
 * Subscribes `handler` to session commands. `subscriber` must be a dedicated connection
 * (a Redis connection in subscribe mode can do nothing else). Returns an unsubscribe function.
 */
export async function subscribeSessionCommands(
  subscriber: Redis,
  prefix: string,
  handler: (cmd: SessionCommand) => void,
): Promise<() => Promise<void>> {
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
