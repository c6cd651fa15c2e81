// A 20 ms tick source the test drives by hand, for pacers and live sessions.
import type { TickListener, TickSource } from '../../src/media/index.js';

export class ManualClock implements TickSource {
  listeners = new Set<TickListener>();
  n = 0;
  subscribe(fn: TickListener) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  tick(times = 1) {
    for (let i = 0; i < times; i++) {
      this.n++;
      for (const fn of [...this.listeners]) fn(this.n);
    }
  }
}
