// mediasoup-style typed events (enhancedEvents.ts): an event map as a type, and an emit that
// catches listener errors so one faulty listener cannot break the media path of a session.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

export class SafeEmitter<E extends Record<keyof E, unknown[]>> extends EventEmitter<E> {
  constructor(protected readonly log?: Logger) {
    super();
    this.setMaxListeners(Infinity);
  }

  /** Emits to every listener; listener errors are logged, never thrown. 'error' without a listener is dropped. */
  safeEmit<K extends keyof E & string>(event: K, ...args: E[K]): boolean {
    const listeners = this.rawListeners(event as never) as unknown as Array<(...a: unknown[]) => void>;
    if (listeners.length === 0) return false;
    for (const fn of listeners) {
      try {
        fn.apply(this, args);
      } catch (err) {
        this.log?.error({ err, event }, 'event listener failed');
      }
    }
    return true;
  }
}
