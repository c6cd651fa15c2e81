// Public door of telephony/: the SIP/RTP front started by the composition root.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import type { Party } from '../sessions/index.js';
import { TelephonyService, type CallView, type TelephonyOptions } from './service.js';
import type { TelephonySessionPort } from './session-port.js';
import type { DialRequest } from './dial-target.js';
import type { CallQuality } from './rtp/call-quality.js';
import { MediaAnchor } from './media-anchor.js';
import { sessionPortFromRegistry } from './registry-port.js';
import {
  nativeRtpIoAddon,
  nativeRtpIoLoadError,
  tryNativeRtpIoAddon,
  useIoUringForRtp,
  useRecvThreadForRtp,
  useSendThreadForRtp,
  wantsNativeRtpIo,
} from './rtp/native-io.js';
import type { SessionRegistry } from '../sessions/index.js';

export { TelephonyError, type TelephonyErrorCode, type TelephonyErrorDetail } from './errors.js';
export { isCustomSipHeader, firstDisallowedHeader, disallowedHeaderMessage } from './custom-headers.js';
export type { CallView } from './service.js';
export type { CallQuality } from './rtp/call-quality.js';
export type { DialRequest } from './dial-target.js';
export type { TelephonySessionPort, SessionAttachment } from './session-port.js';
export { encryptSecret, decryptSecret } from '../secrets/index.js';
export { isValidCidr, normalizeCidr } from './cidr.js';
export { resolveRouting, type ResolvedRouting, type RoutingInput, type RoutingOrg, type ResolveOptions, type Provider } from './routing.js';
export { sessionPortFromRegistry } from './registry-port.js';
export { registerTelephonyMetrics } from './metrics.js';
export { renderLadder } from './capture/ladder.js';
export { encodeHep, decodeHep, HEP_CHUNK } from './capture/hep.js';

export interface TelephonyDeps {
  config: Config;
  logger: Logger;
  db: Db;
  /** The live-session registry (sessions/index.ts); or pass `sessions` directly (tests). */
  registry?: Pick<SessionRegistry, 'open'>;
  /** The session layer seen through the one method telephony needs (see session-port.ts). */
  sessions?: TelephonySessionPort;
  redis?: unknown;
  /** Scale-out: where to redirect an INVITE for a session another node owns (service.ts). */
  ownerElsewhere?: TelephonyOptions['ownerElsewhere'];
  /** The node's media overload guard, shared with the streaming socket (absent: telephony runs its own). */
  overload?: TelephonyOptions['overload'];
}

export interface Telephony {
  dial(sessionId: string, orgId: string, req: DialRequest): Promise<CallView>;
  hangup(sessionId: string, orgId: string, req: { call_id?: string; party?: Party }): Promise<CallView[]>;
  /** Live SIP legs of a session (for the session's `call` object). */
  calls(sessionId: string): CallView[];
  /** Live RTP/RTCP quality of a leg this node carries (GET /v1/sessions/{id}); null when it carries none. */
  callQuality(sessionId: string, callId: string): CallQuality | null;
  /** Hangs up every leg of a session (session ended). */
  endSession(sessionId: string, reason: string): void;
  readonly activeCalls: number;
  /** Media counters (loss, concealment, jitter): totals since start plus live legs. */
  mediaStats(): Record<string, number>;
  /** Call outcomes since start, keyed "direction:result". */
  callCounts(): Record<string, number>;
  /** Input the SIP front refused since start, by fault. */
  refusedCounts(): Record<string, number>;
  /** SIP requests taken in since start, by method (behind an edge: what the edge let through). */
  requestCounts(): Record<string, number>;
  /** SIP capture since start: captured, written, dropped (queue full or write failed), queued, hep_sent, hep_failed. */
  captureCounts(): Record<string, number>;
  /** The SIP port bound (config.sip.port, or the one chosen when it is 0). */
  readonly sipPort: number;
  /** The SIP-over-TLS port, or null when TLS is off. */
  readonly sipTlsPort: number | null;
  close(): Promise<void>;
}

/**
 * Starts the SIP user agent (config.sip) and, when config.rtpengine.ng is set, checks rtpengine.
 * A missing rtpengine does not stop start-up: dials then fail with media_server_unavailable.
 */
export async function startTelephony(deps: TelephonyDeps): Promise<Telephony> {
  if (deps.config.rtpengine.ng) {
    const probe = new MediaAnchor({ ng: deps.config.rtpengine.ng, timeoutMs: deps.config.rtpengine.timeoutMs });
    await probe.ping().catch((err) => deps.logger.warn({ err: String(err) }, 'rtpengine not reachable at start-up'));
    probe.close();
  }
  // Built and loaded now, so a missing compiler or header fails the start (native) or shows in the log
  // (auto), not at the first call.
  const { mediaIo = 'auto', mediaIoUring = true, mediaIoSendThread = true, mediaIoRecvThread = false, mediaIoConnect = true } = deps.config.sip;
  const wanted = wantsNativeRtpIo(deps.config.sip);
  const addon = !wanted ? null : mediaIo === 'native' ? nativeRtpIoAddon() : tryNativeRtpIoAddon();
  useIoUringForRtp(mediaIoUring);
  useSendThreadForRtp(mediaIoSendThread);
  useRecvThreadForRtp(mediaIoRecvThread);
  if (addon)
    deps.logger.info(
      { mediaIo, ioUring: mediaIoUring && addon.ioUringReady(), sendThread: mediaIoSendThread, recvThread: mediaIoRecvThread, connect: mediaIoConnect },
      'RTP sockets: batched I/O',
    );
  else if (wanted) deps.logger.warn({ err: String(nativeRtpIoLoadError()) }, 'MEDIA_IO=auto: the batched RTP I/O addon is unavailable; RTP sockets use dgram');
  const sessions = deps.sessions ?? (deps.registry ? sessionPortFromRegistry(deps.registry) : null);
  if (!sessions) throw new Error('startTelephony needs the session registry');
  const svc = await TelephonyService.start({
    config: deps.config,
    logger: deps.logger,
    db: deps.db,
    sessions,
    ownerElsewhere: deps.ownerElsewhere,
    overload: deps.overload,
  });
  return {
    dial: (sessionId, orgId, req) => svc.dial(sessionId, orgId, req),
    hangup: (sessionId, orgId, req) => svc.hangup(sessionId, orgId, req),
    calls: (sessionId) =>
      svc.legsOf(sessionId).map((l) => ({
        id: l.id,
        object: 'call',
        provider: l.provider,
        call_sid: l.callSid,
        party: l.party,
        direction: l.direction,
        status: 'in-progress',
        from: l.from,
        to: l.to,
        quality: l.callQuality,
      })),
    callQuality: (sessionId, callId) => svc.legsOf(sessionId).find((l) => l.id === callId)?.callQuality ?? null,
    endSession: (sessionId, reason) => {
      for (const leg of svc.legsOf(sessionId)) leg.close(reason);
    },
    get activeCalls() {
      return svc.activeLegs;
    },
    sipPort: svc.sipPort,
    sipTlsPort: svc.ua.tlsPort,
    mediaStats: () => svc.mediaStats(),
    callCounts: () => ({ ...svc.callCounts }),
    refusedCounts: () => ({ ...svc.refusals.counts }),
    requestCounts: () => ({ ...svc.ua.requestCounts }),
    captureCounts: () => svc.captureCounts(),
    // Shutdown drains first (config.sip.drainSeconds; 0 ends calls at once), then ends what is left.
    close: async () => {
      await svc.drain(deps.config.sip.drainSeconds * 1000);
      await svc.close();
    },
  };
}
