// Where the media path's added latency is spent, as one histogram per stage on /metrics, so a
// regression shows which stage it comes from. Stages, in the order a frame meets them:
//   jitter_buffer  RTP packet arrival → the frame leaves the leg's jitter buffer
//   pipeline       the frame's synchronous trip through the session chain (bridge, VAD, STT feed)
//   pacer          queued in the session's output pacer → released on a media-clock tick
//   rtp_send       queued on the RTP endpoint → handed to the UDP socket
// The histograms live here (not in the API's registry) so media code records without knowing who
// serves /metrics; the composition root registers them once.
import { Histogram, type Registry } from 'prom-client';

export type MediaStage = 'jitter_buffer' | 'pipeline' | 'pacer' | 'rtp_send';

const BUCKETS_MS = [0.5, 1, 2, 5, 10, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500, 1000];

const stageHistogram = new Histogram({
  name: 'voxbridge_media_stage_ms',
  help: 'Time one 20 ms frame spends in each media stage (jitter_buffer, pipeline, pacer, rtp_send), milliseconds',
  labelNames: ['stage'] as const,
  buckets: BUCKETS_MS,
  registers: [],
});

// Pre-bound children: observe() on a labelled child skips the label hashing on the hot path.
const children: Record<MediaStage, { observe(v: number): void }> = {
  jitter_buffer: stageHistogram.labels('jitter_buffer'),
  pipeline: stageHistogram.labels('pipeline'),
  pacer: stageHistogram.labels('pacer'),
  rtp_send: stageHistogram.labels('rtp_send'),
};

/** Records `ms` spent by one frame in `stage`. */
export function observeStage(stage: MediaStage, ms: number): void {
  children[stage].observe(ms);
}

/** Adds the stage histogram to a registry (idempotent per registry). */
export function registerMediaStageMetrics(registry: Registry): void {
  if (!registry.getSingleMetric('voxbridge_media_stage_ms')) registry.registerMetric(stageHistogram);
}

/** Per-stage count and mean, for the benchmark (reads the histogram, resets nothing). */
export async function mediaStageSummary(): Promise<Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }>> {
  const data = await stageHistogram.get();
  const out: Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number; buckets: [number, number][] }> = {};
  for (const v of data.values) {
    const stage = String(v.labels.stage);
    out[stage] ??= { count: 0, meanMs: 0, p50Ms: 0, p99Ms: 0, buckets: [] };
    if (v.metricName?.endsWith('_count')) out[stage].count = v.value;
    else if (v.metricName?.endsWith('_sum')) out[stage].meanMs = v.value;
    else if (v.metricName?.endsWith('_bucket')) out[stage].buckets.push([Number((v.labels as Record<string, string | number>).le), v.value]);
  }
  const result: Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }> = {};
  for (const [stage, s] of Object.entries(out)) {
    const upper = (q: number) => s.buckets.find(([, c]) => c >= q * s.count)?.[0] ?? Infinity;
    result[stage] = { count: s.count, meanMs: s.count ? Math.round((s.meanMs / s.count) * 100) / 100 : 0, p50Ms: upper(0.5), p99Ms: upper(0.99) };
  }
  return result;
}
