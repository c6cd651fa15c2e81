// The per-stage histograms: what observeStage records is what /metrics serves (cumulative buckets,
// +Inf, sum, count per stage) and what the benchmark's summary reads.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { mediaStageSummary, observeStage, registerMediaStageMetrics } from '../../../src/media/index.js';

describe('media stage histograms', () => {
  it('serve Prometheus histograms per stage and a summary with bucket-bound percentiles', async () => {
    const registry = new Registry();
    registerMediaStageMetrics(registry);
    registerMediaStageMetrics(registry); // idempotent

    // jitter_buffer: 98 frames at 40 ms, one at 0.3 ms, one at 2000 ms (above every bound).
    for (let i = 0; i < 98; i++) observeStage('jitter_buffer', 40);
    observeStage('jitter_buffer', 0.3);
    observeStage('jitter_buffer', 2000);
    observeStage('rtp_send', 0.1);
    observeStage('rtp_send', Number.NaN); // a frame without a timestamp counts as 0, never poisons the sum

    const text = await registry.metrics();
    const line = (labels: string): string | undefined => text.split('\n').find((l) => l.startsWith(`voxbridge_media_stage_ms${labels} `));
    expect(text).toContain('# TYPE voxbridge_media_stage_ms histogram');
    expect(line('_bucket{stage="jitter_buffer",le="0.5"}')).toBe('voxbridge_media_stage_ms_bucket{stage="jitter_buffer",le="0.5"} 1');
    expect(line('_bucket{stage="jitter_buffer",le="30"}')).toMatch(/ 1$/);
    expect(line('_bucket{stage="jitter_buffer",le="40"}')).toMatch(/ 99$/);
    expect(line('_bucket{stage="jitter_buffer",le="1000"}')).toMatch(/ 99$/);
    expect(line('_bucket{stage="jitter_buffer",le="+Inf"}')).toMatch(/ 100$/);
    expect(line('_count{stage="jitter_buffer"}')).toMatch(/ 100$/);
    expect(Number(line('_sum{stage="jitter_buffer"}')?.split(' ')[1])).toBeCloseTo(98 * 40 + 0.3 + 2000, 6);
    expect(line('_count{stage="rtp_send"}')).toMatch(/ 2$/);
    expect(Number(line('_sum{stage="rtp_send"}')?.split(' ')[1])).toBeCloseTo(0.1, 6);
    // A stage nothing was recorded for is not exported (as with prom-client's own histograms).
    expect(text).not.toContain('stage="pacer"');

    const summary = await mediaStageSummary();
    expect(summary.jitter_buffer).toEqual({ count: 100, meanMs: Math.round(((98 * 40 + 2000.3) / 100) * 100) / 100, p50Ms: 40, p99Ms: 40 });
    expect(summary.rtp_send?.count).toBe(2);
    expect(summary.pacer).toBeUndefined();
  });
});
