// The gateway child's garbage collections for the media bench, as running totals: scavenges, the bytes
// they moved into old space (every space but the young generation's, grown across each scavenge), and
// mark-compacts with their cost. What a call promotes is what the major collections then have to mark,
// and each of those stalls every call at once (BENCHMARKS.md, forty-second pass); unlike latency, the
// promoted bytes per call-second do not depend on how fast the host is that hour.
import { GCProfiler } from 'node:v8';

export interface GcTotalsReading {
  gcScavenges: number;
  gcPromotedBytes: number;
  gcMarkCompacts: number;
  /** Main-thread time of the mark-compacts (V8's `cost`), ms. */
  gcMarkCompactMs: number;
}

const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space']);

type Statistic = ReturnType<GCProfiler['stop']>['statistics'][number];

const oldBytes = (s: Statistic['beforeGC']): number =>
  s.heapSpaceStatistics.reduce((sum, space) => (YOUNG_SPACES.has(space.spaceName) ? sum : sum + space.spaceUsedSize), 0);

export class GcTotals {
  private profiler = new GCProfiler();
  private readonly totals: GcTotalsReading = { gcScavenges: 0, gcPromotedBytes: 0, gcMarkCompacts: 0, gcMarkCompactMs: 0 };

  constructor() {
    this.profiler.start();
  }

  /** Folds in the collections since the last reading and returns the totals since the process started. */
  take(): GcTotalsReading {
    const { statistics } = this.profiler.stop();
    this.profiler = new GCProfiler();
    this.profiler.start();
    const t = this.totals;
    for (const gc of statistics) {
      if (gc.gcType === 'Scavenge') {
        t.gcScavenges++;
        t.gcPromotedBytes += Math.max(0, oldBytes(gc.afterGC) - oldBytes(gc.beforeGC));
      } else if (gc.gcType === 'MarkSweepCompact') {
        t.gcMarkCompacts++;
        t.gcMarkCompactMs += gc.cost / 1000;
      }
    }
    return { ...t };
  }
}
