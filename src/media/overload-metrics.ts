// The node's admission (media clock, event loop) on /metrics, read from the node's guard at scrape time.
import { Gauge, type Registry } from 'prom-client';
import type { OverloadGuard } from './overload-guard.js';

const NAME = 'voxbridge_media_overload';

/** Registers the gauge, replacing that of a previous guard in this process (restart, tests). */
export function registerMediaOverloadMetrics(registry: Registry, guard: OverloadGuard): void {
  registry.removeSingleMetric(NAME);
  new Gauge({
    name: NAME,
    help: 'Admission by the media clock and the event loop (MEDIA_OVERLOAD_LATE_PERCENT, MEDIA_OVERLOAD_LOOP_PERCENT): enabled, overloaded (1 while new calls get 503 and new streams 1013), late_percent (share of the media clock runs that started a frame late in the last second, %), loop_busy_percent (share of the last second the event loop was busy, %), overloads (times it turned overloaded since start)',
    labelNames: ['stat'] as const,
    registers: [registry],
    collect() {
      const v = guard.view();
      this.set({ stat: 'enabled' }, Number(v.enabled));
      this.set({ stat: 'overloaded' }, Number(v.overloaded));
      this.set({ stat: 'late_percent' }, v.late_percent);
      this.set({ stat: 'loop_busy_percent' }, v.loop_busy_percent);
      this.set({ stat: 'overloads' }, v.overloads);
    },
  });
}
