// In-process cache of authenticated API keys (key row joined with its organization), keyed by the
// key's SHA-256 hash. It removes one PostgreSQL round trip per request on hot paths.
//
// What it allows: for at most `ttlMs`, a request sees the key and organization as they were when
// cached — a revoked key, a deactivated organization, changed scopes, limits or credits take effect
// on each node within `ttlMs` (a few seconds at most by configuration). Expiry (expires_at) is
// still checked against the clock on every request. Failed look-ups are never cached. With ttlMs 0
// the cache is off and every request reads PostgreSQL.
export class AuthCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(keyHash: string, now = Date.now()): T | undefined {
    const hit = this.entries.get(keyHash);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return hit.value;
  }

  set(keyHash: string, value: T, now = Date.now()): void {
    if (!this.enabled) return;
    // Bounded: a flood of distinct valid keys cannot grow memory; dropping everything is cheap and safe.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(keyHash, { value, until: now + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }
}
