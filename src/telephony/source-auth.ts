// Source admission for inbound INVITEs: the number's connection must list the source address in
// its inbound CIDRs, or the caller must pass digest auth with the connection's credentials (a PBX).
// Digest failures feed the source guard (throttling, lockout per username); untrusted sources get
// the same challenge-then-403 whether or not the number exists (no enumeration).
import digest from 'sip/digest.js';
import type { SipRequest } from 'sip';
import type { Db } from '../store/index.js';
import * as repo from '../store/index.js';
import { cidrContains } from './cidr.js';
import { decryptSecret } from '../secrets/index.js';
import { SipError } from './sip/errors.js';
import type { IncomingInvite } from './sip/incoming-invite.js';
import type { SourceGuard } from './sip/source-guard.js';

const AUTH_TTL_MS = 60_000;

/** The parts of an INVITE the source check reads and answers. */
export type SourceAuthInvite = Pick<IncomingInvite, 'callId' | 'remote' | 'req' | 'reject'>;

export interface SourceAuthOptions {
  db: Db;
  secretKey: string;
  realm: string;
  guard: SourceGuard;
}

export class SourceAuth {
  private readonly authChallenges = new Map<string, { ctx: Record<string, unknown>; expires: number }>();

  constructor(private readonly o: SourceAuthOptions) {}

  /**
   * Source check: the number's connection (or, without one, any active connection of the org)
   * must list the source address in its inbound CIDRs, or the caller must pass digest auth
   * with the connection's username/password (a PBX). Returns the matched connection.
   */
  async check(inv: SourceAuthInvite, number: repo.PhoneNumberRecord, trusted: boolean): Promise<repo.ConnectionRecord | null | 'challenged'> {
    const connections = number.connection_id
      ? [await repo.getConnection(this.o.db, number.connection_id)].filter((c): c is repo.ConnectionRecord => c !== null && c.status === 'active')
      : await repo.listActiveConnections(this.o.db, number.org_id);
    const byCidr = connections.find((c) => c.inbound_cidrs.some((cidr) => cidrContains(cidr, inv.remote.address)));
    if (byCidr) return byCidr;
    const withAuth = connections.filter((c) => c.username && c.password_enc);
    if (withAuth.length === 0) {
      if (trusted) throw new SipError(403, 'Forbidden');
      return this.challengeOrRefuse(inv);
    }
    this.prune();
    const pending = this.authChallenges.get(inv.callId);
    if (pending && inv.req.headers.authorization) {
      const username = digestUsername(inv.req);
      // A locked-out username is refused without trying its password (guessing gains nothing).
      if (this.o.guard.isUserLocked(username)) {
        this.authChallenges.delete(inv.callId);
        throw new SipError(403, 'Forbidden');
      }
      for (const c of withAuth) {
        const ctx = { ...pending.ctx };
        let password: string;
        try {
          password = decryptSecret(this.o.secretKey, c.password_enc!);
        } catch {
          continue;
        }
        if (digest.authenticateRequest(ctx, inv.req, { user: c.username!, password })) {
          this.authChallenges.delete(inv.callId);
          this.o.guard.authSucceeded(username);
          return c;
        }
      }
      this.authChallenges.delete(inv.callId);
      this.o.guard.authFailed(inv.remote.address, username);
      throw new SipError(403, 'Forbidden');
    }
    return this.challenge(inv);
  }

  /** For an untrusted source and nothing it may reach: challenge first, refuse the answer (same as a wrong password). */
  challengeOrRefuse(inv: SourceAuthInvite): 'challenged' {
    const pending = this.authChallenges.get(inv.callId);
    if (pending && inv.req.headers.authorization) {
      this.authChallenges.delete(inv.callId);
      this.o.guard.authFailed(inv.remote.address, digestUsername(inv.req));
      throw new SipError(403, 'Forbidden');
    }
    return this.challenge(inv);
  }

  private challenge(inv: SourceAuthInvite): 'challenged' {
    this.prune();
    // RFC 3261 §22.2: challenge with 401 and WWW-Authenticate.
    const ctx: Record<string, unknown> = { realm: this.o.realm };
    const holder = { status: 401, reason: 'Unauthorized', headers: {} as Record<string, unknown> };
    digest.challenge(ctx, holder as never);
    this.authChallenges.set(inv.callId, { ctx, expires: Date.now() + AUTH_TTL_MS });
    inv.reject(401, 'Unauthorized', { 'www-authenticate': holder.headers['www-authenticate'] });
    return 'challenged';
  }

  private prune(): void {
    const now = Date.now();
    for (const [k, v] of this.authChallenges) if (v.expires < now) this.authChallenges.delete(k);
  }
}

/** The username of a digest Authorization header (quoted or not), '' when absent. */
function digestUsername(rq: SipRequest): string {
  const auth = rq.headers.authorization;
  const first = Array.isArray(auth) ? (auth[0] as Record<string, unknown> | undefined) : undefined;
  return String((first?.username as string | undefined) ?? '').replace(/^"|"$/g, '');
}
