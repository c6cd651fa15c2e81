// Subscriptions (types, categories, '*', the realtime rule) and the retry schedule.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, expandSubscription, isSubscribed, retryDelayMs } from '../../../src/webhooks/index.js';

describe('expandSubscription', () => {
  it('expands categories, keeps what was given, resolves the analysis.complete alias', () => {
    const s = expandSubscription(['sessions', 'analysis.complete', 'recording.ready'], false);
    expect(s.events).toEqual(['sessions', 'analysis.completed', 'recording.ready']);
    expect(s.eventTypes.sort()).toEqual(['analysis.completed', 'recording.ready', 'session.created', 'session.ended', 'session.started']);
  });

  it("'*' covers every type except transcript.segment, which needs realtime", () => {
    const all = expandSubscription(['*'], false);
    expect(isSubscribed(all.eventTypes, false, 'ai_agent.tool_called')).toBe(true);
    expect(isSubscribed(all.eventTypes, false, 'transcript.segment')).toBe(false);
    expect(isSubscribed(all.eventTypes, true, 'transcript.segment')).toBe(true);
    const transcripts = expandSubscription(['transcripts'], false);
    expect(isSubscribed(transcripts.eventTypes, false, 'transcript.ready')).toBe(true);
    expect(isSubscribed(transcripts.eventTypes, false, 'transcript.segment')).toBe(false);
  });

  it('refuses unknown names and transcript.segment without realtime', () => {
    expect(() => expandSubscription(['session.exploded'], false)).toThrow(/unknown/);
    expect(() => expandSubscription(['transcript.segment'], false)).toThrow(/realtime/);
    expect(expandSubscription(['transcript.segment'], true).eventTypes).toEqual(['transcript.segment']);
  });
});

describe('retryDelayMs', () => {
  it('retries first within 10 s, reaches about 3 days, then gives up', () => {
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE_SECONDS, 1, () => 1)).toBeLessThanOrEqual(10_000);
    let total = 0;
    for (let n = 1; n <= DEFAULT_RETRY_SCHEDULE_SECONDS.length; n++) total += retryDelayMs(DEFAULT_RETRY_SCHEDULE_SECONDS, n, () => 0.5)!;
    expect(total / 86_400_000).toBeGreaterThan(2.9);
    expect(total / 86_400_000).toBeLessThan(3.5);
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE_SECONDS, DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1)).toBeNull();
  });

  it('jitters each delay by ±20 %', () => {
    expect(retryDelayMs([10], 1, () => 0)).toBe(8000);
    expect(retryDelayMs([10], 1, () => 1)).toBe(12000);
  });
});
