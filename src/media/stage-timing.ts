// Where the media path's added latency is spent, as one histogram per stage on /metrics, so a
// regression shows which stage it comes from. Stages, in the order a frame meets them:
//   jitter_buffer  RTP packet arrival → the frame leaves the leg's jitter buffer
//   pipeline       the frame's synchronous trip through the session chain (bridge, VAD, STT feed)
//   pacer          queued in the session's output pacer → released on a media-clock tick
//   rtp_send       queued on the RTP endpoint → handed to the UDP socket
//   socket_send    an audio.output message handed to the WebSocket → written into the kernel (the
//                  time it waited in Node's buffer because the client or its path was not keeping up)
// The histograms live here (not in the API's registry) so media code records without knowing who
// serves /metrics; the composition root registers them once.
//
// Recording happens several times per frame per leg (hundreds of thousands of times a second at
// capacity), so it is a bucket search and two additions into typed arrays rather than prom-client's
// Histogram.observe (label validation, a hash string and an object per call). The figures are turned
// into prom-client's shape only when /metrics is read.
import type { Metric, Registry } from 'prom-client';

export type MediaStage = 'jitter_buffer' | 'pipeline' | 'pacer' | 'rtp_send' | 'socket_send';
const STAGES: readonly MediaStage[] = ['jitter_buffer', 'pipeline', 'pacer', 'rtp_send', 'socket_send'];

const BUCKETS_MS = [0.5, 1, 2, 5, 10, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500, 1000];
const NAME = 'voxbridge_media_stage_ms';
const HELP = 'Time one 20 ms frame spends in each media stage (jitter_buffer, pipeline, pacer, rtp_send, socket_send), milliseconds';

/** One stage's histogram: per-bucket counts (the last slot is above every bound), sum and count. */
class StageCounts {
  readonly buckets = new Float64Array(BUCKETS_MS.length + 1);
  sum = 0;
  count = 0;

  observe(ms: number): void {
    // NaN and negative clock skew land in the first bucket rather than poisoning the sum.
    const v = ms > 0 ? ms : 0;
    let i = 0;
    while (i < BUCKETS_MS.length && v > (BUCKETS_MS[i] ?? Infinity)) i++;
    this.buckets[i] = (this.buckets[i] ?? 0) + 1;
    this.sum += v;
    this.count++;
  }

  /** Cumulative count at or below each bound, in bound order. */
  cumulative(): number[] {
    const out: number[] = [];
    let acc = 0;
    for (let i = 0; i < BUCKETS_MS.length; i++) {
      acc += this.buckets[i] ?? 0;
      out.push(acc);
    }
    return out;
  }

  reset(): void {
    this.buckets.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

const counts: Record<MediaStage, StageCounts> = {
  jitter_buffer: new StageCounts(),
  pipeline: new StageCounts(),
  pacer: new StageCounts(),
  rtp_send: new StageCounts(),
  socket_send: new StageCounts(),
};

/** Records `ms` spent by one frame in `stage`. */
export function observeStage(stage: MediaStage, ms: number): void {
  counts[stage].observe(ms);
}

interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

/** The stage histograms in prom-client's metric shape (what its Registry reads from a metric's get()). */
const stageMetric = {
  name: NAME,
  help: HELP,
  type: 'histogram',
  aggregator: 'sum',
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    for (const stage of STAGES) {
      const c = counts[stage];
      if (c.count === 0) continue;
      const cum = c.cumulative();
      BUCKETS_MS.forEach((le, i) => values.push({ value: cum[i] ?? 0, labels: { stage, le }, metricName: `${NAME}_bucket` }));
      values.push({ value: c.count, labels: { stage, le: '+Inf' }, metricName: `${NAME}_bucket` });
      values.push({ value: c.sum, labels: { stage }, metricName: `${NAME}_sum` });
      values.push({ value: c.count, labels: { stage }, metricName: `${NAME}_count` });
    }
    return Promise.resolve({ name: NAME, help: HELP, type: 'histogram', aggregator: 'sum', values });
  },
  reset(): void {
    for (const stage of STAGES) counts[stage].reset();
  },
};

/** Adds the stage histogram to a registry (idempotent per registry). */
export function registerMediaStageMetrics(registry: Registry): void {
  // The registry reads name, help, type and get() only; prom-client's Metric type names its own classes.
  if (!registry.getSingleMetric(NAME)) registry.registerMetric(stageMetric as unknown as Metric);
}

/** Empties the stage histograms (the benchmark, to measure a window; /metrics keeps counting otherwise). */
export function resetMediaStages(): void {
  stageMetric.reset();
}

/** Per-stage count, mean and bucket-bound p50/p99, for the benchmark (reads, resets nothing). */
export function mediaStageSummary(): Promise<Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }>> {
  const result: Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }> = {};
  for (const stage of STAGES) {
    const c = counts[stage];
    if (c.count === 0) continue;
    const cum = c.cumulative();
    const upper = (q: number): number => BUCKETS_MS[cum.findIndex((n) => n >= q * c.count)] ?? Infinity;
    result[stage] = { count: c.count, meanMs: Math.round((c.sum / c.count) * 100) / 100, p50Ms: upper(0.5), p99Ms: upper(0.99) };
  }
  return Promise.resolve(result);
}
