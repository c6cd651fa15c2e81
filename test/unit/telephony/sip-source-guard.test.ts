import { describe, expect, it } from 'vitest';
import { DEFAULT_SOURCE_GUARD, SourceGuard } from '../../../src/telephony/sip/source-guard.js';

function guard(over: Partial<typeof DEFAULT_SOURCE_GUARD> = {}) {
  let now = 1_000_000;
  const bans: string[] = [];
  const g = new SourceGuard(
    { ...DEFAULT_SOURCE_GUARD, allowCidrs: [], ...over },
    (s, reason) => bans.push(`${s} ${reason}`),
    () => now,
  );
  return { g, bans, advance: (ms: number) => (now += ms) };
}

describe('SourceGuard', () => {
  it('lets a burst through, then limits with a Retry-After, and refills over time', () => {
    const { g, advance } = guard({ requestsPerSecond: 10, burst: 5, strikesBeforeBan: 100 });
    for (let i = 0; i < 5; i++) expect(g.check('203.0.113.5', undefined).kind).toBe('pass');
    const v = g.check('203.0.113.5', undefined);
    expect(v).toEqual({ kind: 'limit', retryAfterSeconds: 1 });
    expect(g.check('198.51.100.1', undefined).kind).toBe('pass'); // other sources unaffected
    advance(200); // 2 tokens
    expect(g.check('203.0.113.5', undefined).kind).toBe('pass');
  });

  it('bans a source after repeated strikes, logs it once, and lifts the ban after banSeconds', () => {
    const { g, bans, advance } = guard({ requestsPerSecond: 1, burst: 1, strikesBeforeBan: 3, banSeconds: 60 });
    expect(g.check('203.0.113.7', undefined).kind).toBe('pass');
    expect(g.check('203.0.113.7', undefined).kind).toBe('limit');
    expect(g.check('203.0.113.7', undefined).kind).toBe('limit');
    expect(g.check('203.0.113.7', undefined)).toEqual({ kind: 'drop', why: 'banned' });
    expect(bans).toEqual(['203.0.113.7 request rate']);
    advance(59_000);
    expect(g.check('203.0.113.7', undefined).kind).toBe('drop');
    advance(2_000);
    expect(g.check('203.0.113.7', undefined).kind).toBe('pass');
  });

  it('drops and bans known scanners by User-Agent, case-insensitively', () => {
    const { g, bans } = guard();
    expect(g.check('192.0.2.9', 'Friendly-Scanner')).toEqual({ kind: 'drop', why: 'scanner' });
    expect(g.check('192.0.2.9', 'Linphone/5')).toEqual({ kind: 'drop', why: 'banned' });
    expect(g.check('192.0.2.10', 'sipvicious 0.3')).toEqual({ kind: 'drop', why: 'scanner' });
    expect(g.check('192.0.2.11', 'VaxSIPUserAgent/3.1').kind).toBe('drop');
    expect(bans).toHaveLength(3);
  });

  it('never limits allow-listed carrier CIDRs', () => {
    const { g } = guard({ requestsPerSecond: 1, burst: 1, allowCidrs: ['198.51.100.0/24'] });
    for (let i = 0; i < 100; i++) expect(g.check('198.51.100.20', 'friendly-scanner').kind).toBe('pass');
  });

  it('locks a username out after digest failures, from any source, until banSeconds pass', () => {
    const { g, advance } = guard({ authFailuresBeforeLockout: 3, strikesBeforeBan: 100, banSeconds: 30 });
    g.authFailed('203.0.113.1', 'pbx');
    g.authFailed('203.0.113.2', 'pbx');
    expect(g.isUserLocked('pbx')).toBe(false);
    g.authFailed('203.0.113.3', 'pbx');
    expect(g.isUserLocked('pbx')).toBe(true);
    expect(g.isUserLocked('other')).toBe(false);
    advance(31_000);
    expect(g.isUserLocked('pbx')).toBe(false);
  });

  it('bans a source that keeps failing digest', () => {
    const { g } = guard({ strikesBeforeBan: 4, authFailuresBeforeLockout: 100 });
    for (let i = 0; i < 4; i++) g.authFailed('203.0.113.50', `user${i}`);
    expect(g.check('203.0.113.50', undefined)).toEqual({ kind: 'drop', why: 'banned' });
  });
});
