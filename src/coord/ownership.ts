// Session ownership across nodes (DESIGN.md "Scale-out": a session lives on one node). The node that
// opens a live session claims `owner:<session id>` in Redis with what the others need to send
// traffic there (its id, public HTTP URL and SIP contact), refreshes the claim while the session is
// live and releases it on close. A node that dies stops refreshing: its claims expire and another
// node may take the session (a reconnect) or, after the reconnect grace, end it (`node_lost`).
//
// `owners-seen` (a sorted set: session id → time of its owner's last refresh) remembers which
// sessions were ever claimed, so the node-lost sweeper finds expired claims without scanning keys.
import type { Redis } from 'ioredis';

export interface SipContact {
  address: string;
  port: number;
  /** SIP over TLS port; null or absent when the node has no TLS listener. */
  tlsPort?: number | null;
}

/** What `owner:<id>` holds: where the session's traffic must go. */
export interface OwnerClaim {
  node: string;
  /** The owner's public HTTP URL (config.publicUrl): REST and the stream socket. */
  url: string;
  /** The owner's SIP contact (advertised address, bound port); null when it runs no SIP. */
  sip: SipContact | null;
}

const ownerKey = (sessionId: string): string => `owner:${sessionId}`;
export const OWNERS_SEEN_KEY = 'owners-seen';

// KEYS[1] owner key, KEYS[2] owners-seen; ARGV: claim json, node id, ttl ms, now ms, session id.
// Returns nil when this node now holds the claim (fresh, or already its own), else the holder's claim.
const CLAIM = `local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, c = pcall(cjson.decode, cur)
  if ok and type(c) == 'table' and c.node ~= ARGV[2] then return cur end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
return false`;

// KEYS[1] owners-seen, KEYS[2..] owner keys; ARGV: ttl ms, node id, claim json, now ms, session ids.
// Refreshes our claims (re-taking one that expired while nobody else took it); returns the ids
// another node holds now.
const REFRESH_MANY = `local lost = {}
for i = 2, #KEYS do
  local id = ARGV[i + 3]
  local cur = redis.call('GET', KEYS[i])
  local mine = true
  if cur then
    local ok, c = pcall(cjson.decode, cur)
    mine = not (ok and type(c) == 'table' and c.node ~= ARGV[2])
  end
  if mine then
    redis.call('SET', KEYS[i], ARGV[3], 'PX', ARGV[1])
    redis.call('ZADD', KEYS[1], ARGV[4], id)
  else
    lost[#lost + 1] = id
  end
end
return lost`;

// KEYS[1] owner key, KEYS[2] owners-seen; ARGV: node id, session id.
const RELEASE = `local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, c = pcall(cjson.decode, cur)
  if ok and type(c) == 'table' and c.node == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('ZREM', KEYS[2], ARGV[2])
  end
else
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return 1`;

/** The claim on a session, or null when no live node owns it. */
export async function ownerOf(redis: Redis, sessionId: string): Promise<OwnerClaim | null> {
  const raw = await redis.get(ownerKey(sessionId));
  if (!raw) return null;
  try {
    return JSON.parse(raw) as OwnerClaim;
  } catch {
    return null;
  }
}

/** Sessions whose owner last refreshed its claim before `beforeMs` (oldest first). */
export async function claimsNotRefreshedSince(redis: Redis, beforeMs: number, limit: number): Promise<string[]> {
  return redis.zrangebyscore(OWNERS_SEEN_KEY, '-inf', beforeMs, 'LIMIT', 0, limit);
}

/** Drops sessions from the claim history (ended, or handled by the sweeper). */
export async function forgetClaimHistory(redis: Redis, sessionIds: string[]): Promise<void> {
  if (sessionIds.length) await redis.zrem(OWNERS_SEEN_KEY, ...sessionIds);
}

/** One node's claims: claim on open, refresh in batches while live, release on close. */
export class SessionOwnership {
  private sip: SipContact | null = null;
  private claimJson: string;

  constructor(
    private readonly redis: Redis,
    private readonly self: { node: string; url: string },
    readonly ttlMs: number,
  ) {
    this.claimJson = this.encode();
  }

  get nodeId(): string {
    return this.self.node;
  }

  /** This node's SIP contact, known once telephony has bound its port. */
  setSip(sip: SipContact | null): void {
    this.sip = sip;
    this.claimJson = this.encode();
  }

  get claim(): OwnerClaim {
    return { node: this.self.node, url: this.self.url, sip: this.sip };
  }

  private encode(): string {
    return JSON.stringify(this.claim);
  }

  /**
   * Claims the session for this node. Null when this node holds it now; otherwise the live claim of
   * the node that owns it. A claim held under our own node id (a restarted process) is taken over.
   */
  async take(sessionId: string): Promise<OwnerClaim | null> {
    const held = (await this.redis.eval(CLAIM, 2, ownerKey(sessionId), OWNERS_SEEN_KEY, this.claimJson, this.self.node, this.ttlMs, Date.now(), sessionId)) as
      string | null;
    if (!held) return null;
    try {
      return JSON.parse(held) as OwnerClaim;
    } catch {
      return null;
    }
  }

  /** Refreshes the claims on `sessionIds` (500 per script call); returns those another node took. */
  async refresh(sessionIds: string[]): Promise<string[]> {
    const lost: string[] = [];
    for (let i = 0; i < sessionIds.length; i += 500) {
      const batch = sessionIds.slice(i, i + 500);
      const r = (await this.redis.eval(
        REFRESH_MANY,
        batch.length + 1,
        OWNERS_SEEN_KEY,
        ...batch.map(ownerKey),
        this.ttlMs,
        this.self.node,
        this.claimJson,
        Date.now(),
        ...batch,
      )) as string[];
      lost.push(...r);
    }
    return lost;
  }

  /** Releases our claim (another node's is left alone) and forgets the session's claim history. */
  async release(sessionId: string): Promise<void> {
    await this.redis.eval(RELEASE, 2, ownerKey(sessionId), OWNERS_SEEN_KEY, this.self.node, sessionId);
  }
}
