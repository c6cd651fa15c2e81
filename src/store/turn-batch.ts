// Writes that arrive in one event-loop turn, made as one statement. The media clock plays out every
// leg in one callback and a BYE burst is read in one poll, so calls that start or end together — a
// burst of set-ups, a trunk failing over or dropping its calls — cost one commit and one NOTIFY
// instead of one each (each a backend round trip; 200 of them together stalled the whole host). A
// lone write waits one setImmediate, well under a millisecond.
import type { Logger } from 'pino';

/** Items per statement at most (a bound on one statement's size, not a limit on the burst). */
const MAX_BATCH = 500;

interface Turn<T> {
  items: T[];
  /** Settles when every statement of this turn has (a failure is logged, not thrown). */
  written: Promise<void>;
  settle: () => void;
}

export class TurnBatch<T> {
  private turn: Turn<T> | null = null;
  private scheduled: NodeJS.Immediate | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  /** `write` makes one statement of its items; `what` names it in the error log ("activating sessions"). */
  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Writes `item` with the others of this loop turn; settles once that write has (failures are logged). */
  add(item: T): Promise<void> {
    if (!this.turn) {
      let settle!: () => void;
      const written = new Promise<void>((resolve) => (settle = resolve));
      this.turn = { items: [], written, settle };
      this.scheduled = setImmediate(() => void this.flush());
    }
    this.turn.items.push(item);
    return this.turn.written;
  }

  /** Writes every pending item now, and waits for the writes already on their way (shutdown). */
  async flush(): Promise<void> {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const turn = this.turn;
    this.turn = null;
    if (turn) {
      const writes: Promise<void>[] = [];
      for (let i = 0; i < turn.items.length; i += MAX_BATCH) {
        const batch = turn.items.slice(i, i + MAX_BATCH);
        writes.push(
          this.write(batch).then(
            () => undefined,
            (err: unknown) => this.log.error({ err, items: batch.length }, `${this.what} failed`),
          ),
        );
      }
      const done = Promise.all(writes).then(turn.settle);
      this.inFlight.add(done);
      void done.finally(() => this.inFlight.delete(done));
    }
    await Promise.all(this.inFlight);
  }
}
