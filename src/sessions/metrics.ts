// Prometheus figures of the sessions' output pacers, read at scrape time from the process-wide tally
// their live queues count into (no per-frame metric work).
import { Gauge, type Registry } from 'prom-client';
import { pacerLiveTotals } from './processors/pacer.js';

const NAME = 'voxbridge_pacer_live_frames';
const COUNTERS = { underruns: 'underruns', trimmed: 'trimmed', trimmedVoiced: 'trimmed_voiced', overflowed: 'overflowed' } as const;

/** Registers the gauge, replacing one registered before in this process (restart, tests). */
export function registerPacerMetrics(registry: Registry): void {
  registry.removeSingleMetric(NAME);
  new Gauge({
    name: NAME,
    help: 'Live (bridged) audio in the session pacers since start: underruns (a tick left empty by a late frame), trimmed (standing backlog removed, trimmed_voiced of it above the silence level), overflowed (beyond the 300 ms cap)',
    labelNames: ['counter'] as const,
    registers: [registry],
    collect() {
      for (const [key, counter] of Object.entries(COUNTERS)) this.set({ counter }, pacerLiveTotals[key as keyof typeof COUNTERS]);
    },
  });
}
