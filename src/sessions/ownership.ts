// What the session layer reports when another live node owns a session (DESIGN.md "Scale-out"):
// callers redirect there (socket close reason, SIP 302, forwarded REST command).
import type { OwnerClaim } from '../coord/index.js';

export class SessionOwnedElsewhereError extends Error {
  constructor(
    readonly sessionId: string,
    readonly owner: OwnerClaim,
  ) {
    super(`session ${sessionId} is live on node ${owner.node}`);
    this.name = 'SessionOwnedElsewhereError';
  }
}
