// When a failed delivery is tried again. The default schedule (seconds after the failed attempt)
// adds up to about 3.2 days; after the last retry fails the delivery is marked `failed`.
//   5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, then 12 h five times  → 15 attempts in all.
// Each delay gets ±20 % jitter so a receiver coming back is not hit by every node at once.

export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 43200, 43200, 43200, 43200, 43200];

export const RETRY_JITTER = 0.2;

/**
 * Delay in ms before retry number `failedAttempts` (1 after the first failure), or null when the
 * schedule is exhausted. `random` is injectable for tests.
 */
export function retryDelayMs(schedule: readonly number[], failedAttempts: number, random: () => number = Math.random): number | null {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return null;
  const factor = 1 - RETRY_JITTER + 2 * RETRY_JITTER * random();
  return Math.max(0, Math.round(base * 1000 * factor));
}
