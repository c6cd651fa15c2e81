// Makes the process's media clock run late, as a saturated host would: a tick listener holds the event
// loop 45 ms every third frame, so the next run starts 25 ms late (over a frame) whatever the clock's
// sub-ticks, and a quarter of the loop's time is left for everything else. Returns the release.
import { processMediaClock } from '../../src/media/index.js';

export function holdTheMediaClock(): () => void {
  let runs = 0;
  return processMediaClock.subscribe(() => {
    if (runs++ % 3 !== 0) return;
    const until = performance.now() + 45;
    while (performance.now() < until) {
      // busy: the media clock's next runs start late
    }
  });
}
