// mediasoup-style typed events (enhancedEvents.ts): an event map as a type, and an emit that
// catches listener errors so one faulty listener cannot break the media path of a session.
// Every plane's emitters (sessions, telephony, media, speech) extend this one base.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

/** Called when a listener throws; the default logs it (when a logger was given) and carries on. */
export type ListenerErrorHook = (err: unknown, event: string) => void;

export class SafeEmitter<E extends Record<keyof E, unknown[]>> extends EventEmitter<E> {
  private listenerErrorHook: ListenerErrorHook;

  constructor(protected readonly log?: Logger) {
    super();
    this.setMaxListeners(Infinity);
    this.listenerErrorHook = (err, event) => this.log?.error({ err, event }, 'event listener failed');
  }

  /** Replaces what happens when a listener throws (tests count, owners escalate). */
  onListenerError(hook: ListenerErrorHook): this {
    this.listenerErrorHook = hook;
    return this;
  }

  /** Emits to every listener; listener errors go to the hook, never thrown. 'error' without a listener is dropped. */
  safeEmit<K extends keyof E & string>(event: K, ...args: E[K]): boolean {
    const listeners = this.rawListeners(event as never) as unknown as Array<(...a: unknown[]) => void>;
    if (listeners.length === 0) return false;
    for (const fn of listeners) {
      try {
        fn.apply(this, args);
      } catch (err) {
        try {
          this.listenerErrorHook(err, event);
        } catch {
          // A failing hook must not turn a listener error into a thrown one.
        }
      }
    }
    return true;
  }
}
