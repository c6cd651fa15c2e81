// The timer and bookkeeping every sweeper shares: one pass at a time per process (a caller asking
// during a pass shares it), a pass on every interval, and a stop that waits for the pass under way.

export interface Sweeper {
  /** Runs one pass now; resolves with the ids it ended. */
  sweep(): Promise<string[]>;
  /** Stops the timer and waits for a pass in progress; idempotent. */
  stop(): Promise<void>;
}

/** `pass` is handed a function telling whether stop() was called, to cut a long pass short. */
export function startPeriodicSweep(intervalMs: number, pass: (stopped: () => boolean) => Promise<string[]>, onError: (err: unknown) => void): Sweeper {
  let running: Promise<string[]> | null = null;
  let stopped = false;
  const isStopped = () => stopped;

  const sweep = (): Promise<string[]> => {
    running ??= pass(isStopped).finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => {
    sweep().catch(onError);
  }, intervalMs);
  timer.unref();

  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
