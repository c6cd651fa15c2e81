// Adapter from the session registry (sessions/index.ts) to the one method telephony needs.
import type { SessionRegistry, PartyLeg } from '../sessions/index.js';
import type { SessionAttachment, TelephonySessionPort } from './session-port.js';

export function sessionPortFromRegistry(registry: Pick<SessionRegistry, 'open'>): TelephonySessionPort {
  return {
    async attachLeg(sessionId: string, leg: PartyLeg): Promise<SessionAttachment | null> {
      let session;
      try {
        session = await registry.open(sessionId);
      } catch {
        return null; // not found or ended
      }
      const detach = session.attachLeg(leg);
      return {
        pushAudio: (frame) => session.pushAudio(leg.party, frame),
        detach: () => {
          detach();
          // What the caller said before hanging up is finalized rather than lost.
          session.endUtterances();
        },
      };
    },
  };
}
