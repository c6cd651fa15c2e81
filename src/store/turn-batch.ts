// Writes that arrive in one event-loop turn, made as one statement. The media clock plays out every
// leg in one callback and a BYE burst is read in one poll, so calls that start or end together — a
// burst of set-ups, a trunk failing over or dropping its calls — cost one commit and one NOTIFY
// instead of one each (each a backend round trip; 200 of them together stalled the whole host). A
// lone write waits one setImmediate, well under a millisecond.
import type { Logger } from 'pino';

/** Items per statement at most (a bound on one statement's size, not a limit on the burst). */
const MAX_BATCH = 500;

export class TurnBatch<T> {
  private pending: T[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  /** `write` makes one statement of its items; `what` names it in the error log ("activating sessions"). */
  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Writes `item` with the others of this loop turn. */
  add(item: T): void {
    this.pending.push(item);
    this.scheduled ??= setImmediate(() => void this.flush());
  }

  /** Writes every pending item now, and waits for the writes already on their way (shutdown). */
  async flush(): Promise<void> {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const items = this.pending;
    this.pending = [];
    for (let i = 0; i < items.length; i += MAX_BATCH) {
      const batch = items.slice(i, i + MAX_BATCH);
      const write = this.write(batch).then(
        () => undefined,
        (err: unknown) => this.log.error({ err, items: batch.length }, `${this.what} failed`),
      );
      this.inFlight.add(write);
      void write.finally(() => this.inFlight.delete(write));
    }
    await Promise.all(this.inFlight);
  }
}
