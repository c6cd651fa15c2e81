// Makes the process's media clock run late, as a saturated host would: a tick listener holds the event
// loop 45 ms every third frame, so the next run starts 25 ms late (over a frame) whatever the clock's
// sub-ticks, and a quarter of the loop's time is left for everything else. With a shorter hold every
// frame (14 ms of each 20) the loop is mostly busy while every run still starts within a frame of its
// time. Returns the release.
import { processMediaClock } from '../../src/media/index.js';

export function holdTheMediaClock({ holdMs = 45, everyFrames = 3 } = {}): () => void {
  let runs = 0;
  return processMediaClock.subscribe(() => {
    if (runs++ % everyFrames !== 0) return;
    const until = performance.now() + holdMs;
    while (performance.now() < until) {
      // busy: the loop has no time for anything else meanwhile
    }
  });
}
