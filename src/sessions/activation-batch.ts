// Sessions whose first audio arrived, activated together: every first audio of one event-loop turn
// goes in one statement (activateSessions). The media clock plays out every leg in one callback, so
// calls that start together — a burst of set-ups, a trunk failing over to this node — cost one commit
// and one NOTIFY instead of one each; a lone call waits one setImmediate, well under a millisecond.
import type { Logger } from 'pino';
import type { Db } from '../store/index.js';
import { activateSessions } from './lifecycle.js';

/** Ids per statement at most (a bound on one statement's size, not a limit on the burst). */
const MAX_BATCH = 500;

export class ActivationBatch {
  private pending = new Set<string>();
  private scheduled: NodeJS.Immediate | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Activates `id` with the others of this loop turn. */
  add(id: string): void {
    this.pending.add(id);
    this.scheduled ??= setImmediate(() => void this.flush());
  }

  /** Writes every pending activation now, and waits for those already on their way (shutdown). */
  async flush(): Promise<void> {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const ids = [...this.pending];
    this.pending = new Set();
    for (let i = 0; i < ids.length; i += MAX_BATCH) {
      const batch = ids.slice(i, i + MAX_BATCH);
      const write = activateSessions(this.db, batch).then(
        () => undefined,
        (err: unknown) => this.log.error({ err, sessions: batch.length }, 'activating sessions failed'),
      );
      this.inFlight.add(write);
      void write.finally(() => this.inFlight.delete(write));
    }
    await Promise.all(this.inFlight);
  }
}
