// Flood and scanner defences per source address, applied to every request before any lookup:
// a token bucket per source (over it: 503 + Retry-After), a temporary ban after repeated strikes
// (rate overruns, refused input, digest failures), known scanner User-Agents dropped and banned,
// digest failures locked out per source and per username. Carrier CIDRs on the allow-list are exempt.
import { cidrContains } from '../cidr.js';

export interface SourceGuardOptions {
  /** Sustained requests a second per source, and the burst above it. */
  requestsPerSecond: number;
  burst: number;
  /** Strikes (503s, refused messages, failed digests) within `strikeWindowSeconds` that ban a source. */
  strikesBeforeBan: number;
  strikeWindowSeconds: number;
  banSeconds: number;
  /** Sources never limited or banned (the operator's carriers and SBC). */
  allowCidrs: string[];
  /** Case-insensitive substrings of User-Agent values that mark a scanner. */
  scannerUserAgents: string[];
  /** Failed digest answers before a username is locked out (from everywhere) for `banSeconds`. */
  authFailuresBeforeLockout: number;
}

export const DEFAULT_SOURCE_GUARD: SourceGuardOptions = {
  requestsPerSecond: 20,
  burst: 60,
  strikesBeforeBan: 20,
  strikeWindowSeconds: 60,
  banSeconds: 600,
  allowCidrs: ['127.0.0.0/8'],
  scannerUserAgents: ['friendly-scanner', 'sipvicious', 'sipcli', 'vaxsipuseragent', 'sip-scan', 'sipsak', 'iWar', 'sundayddr', 'pplsip', 'cafe-scanner'],
  authFailuresBeforeLockout: 5,
};

export type Verdict = { kind: 'pass' } | { kind: 'drop'; why: 'banned' | 'scanner' } | { kind: 'limit'; retryAfterSeconds: number };

interface SourceState {
  tokens: number;
  refilledAt: number;
  strikes: number;
  strikesSince: number;
  bannedUntil: number;
}

const MAX_TRACKED = 100_000;

export class SourceGuard {
  private readonly sources = new Map<string, SourceState>();
  private readonly lockedUsers = new Map<string, { failures: number; until: number }>();
  private readonly scanners: string[];

  constructor(
    private readonly o: SourceGuardOptions,
    private readonly onBan: (address: string, reason: string, seconds: number) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    this.scanners = o.scannerUserAgents.map((s) => s.toLowerCase());
  }

  isAllowListed(address: string): boolean {
    return this.o.allowCidrs.some((c) => cidrContains(c, address));
  }

  /** Decides on one request from `address` (User-Agent as received, if any). */
  check(address: string, userAgent: string | undefined): Verdict {
    if (this.isAllowListed(address)) return { kind: 'pass' };
    const now = this.now();
    const s = this.state(address, now);
    if (s.bannedUntil > now) return { kind: 'drop', why: 'banned' };
    if (userAgent) {
      const ua = userAgent.toLowerCase();
      if (this.scanners.some((x) => ua.includes(x))) {
        this.ban(address, s, now, 'scanner user-agent');
        return { kind: 'drop', why: 'scanner' };
      }
    }
    const rate = this.o.requestsPerSecond;
    s.tokens = Math.min(this.o.burst, s.tokens + ((now - s.refilledAt) / 1000) * rate);
    s.refilledAt = now;
    if (s.tokens >= 1) {
      s.tokens -= 1;
      return { kind: 'pass' };
    }
    this.strike(address, 'request rate');
    if (s.bannedUntil > now) return { kind: 'drop', why: 'banned' };
    return { kind: 'limit', retryAfterSeconds: Math.max(1, Math.ceil(1 / rate)) };
  }

  /** Counts a fault against a source (refused input, rate overrun, failed digest); bans past the limit. */
  strike(address: string, reason: string): void {
    if (this.isAllowListed(address)) return;
    const now = this.now();
    const s = this.state(address, now);
    if (s.bannedUntil > now) return;
    if (now - s.strikesSince > this.o.strikeWindowSeconds * 1000) {
      s.strikes = 0;
      s.strikesSince = now;
    }
    if (++s.strikes >= this.o.strikesBeforeBan) this.ban(address, s, now, reason);
  }

  /** A failed digest answer: strikes the source and counts against the username. */
  authFailed(address: string, username: string): void {
    this.strike(address, 'digest failures');
    const now = this.now();
    const u = this.lockedUsers.get(username) ?? { failures: 0, until: 0 };
    if (u.until <= now && ++u.failures >= this.o.authFailuresBeforeLockout) {
      u.until = now + this.o.banSeconds * 1000;
      u.failures = 0;
      this.onBan(`user:${username}`, 'digest failures', this.o.banSeconds);
    }
    this.lockedUsers.set(username, u);
  }

  authSucceeded(username: string): void {
    this.lockedUsers.delete(username);
  }

  /** True while a username is locked out: its digest answers are refused without checking. */
  isUserLocked(username: string): boolean {
    return (this.lockedUsers.get(username)?.until ?? 0) > this.now();
  }

  get bannedCount(): number {
    const now = this.now();
    let n = 0;
    for (const s of this.sources.values()) if (s.bannedUntil > now) n++;
    return n;
  }

  private ban(address: string, s: SourceState, now: number, reason: string): void {
    s.bannedUntil = now + this.o.banSeconds * 1000;
    s.strikes = 0;
    this.onBan(address, reason, this.o.banSeconds);
  }

  private state(address: string, now: number): SourceState {
    let s = this.sources.get(address);
    if (!s) {
      if (this.sources.size >= MAX_TRACKED) this.prune(now);
      s = { tokens: this.o.burst, refilledAt: now, strikes: 0, strikesSince: now, bannedUntil: 0 };
      this.sources.set(address, s);
    }
    return s;
  }

  /** Forgets sources that are neither banned nor recently active (bounded memory under spoofed floods). */
  private prune(now: number): void {
    for (const [k, s] of this.sources) {
      if (s.bannedUntil <= now && now - s.refilledAt > 60_000) this.sources.delete(k);
    }
    if (this.sources.size >= MAX_TRACKED) {
      const drop = Math.ceil(MAX_TRACKED / 10);
      let i = 0;
      for (const k of this.sources.keys()) {
        if (i++ >= drop) break;
        this.sources.delete(k);
      }
    }
  }
}
