// What telephony needs from the session layer, kept to one small interface so SIP legs can be
// tested against a fake and wired to sessions/index.ts in one adapter (see index.ts).
import type { PartyLeg, PcmFrame } from '../sessions/index.js';

export interface SessionAttachment {
  /** A decoded 20 ms frame spoken by the leg's party (the first one makes the session active); called detached. */
  readonly pushAudio: (frame: PcmFrame) => void;
  /** The leg is gone (hangup, RTP timeout); the session may wait for a replacement call. */
  detach(reason: string): void;
}

export interface TelephonySessionPort {
  /**
   * Attaches a phone leg to a live session on this node. The session plays frames addressed to
   * `leg.party` with `leg.playFrame` and calls `leg.close(reason)` when it ends.
   * Returns null when the session cannot take the leg (ended, not found).
   */
  attachLeg(sessionId: string, leg: PartyLeg): Promise<SessionAttachment | null>;
}
