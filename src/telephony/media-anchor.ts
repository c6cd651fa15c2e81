// rtpengine control over the ng protocol (rtpengine-client): offer/answer/delete around every leg,
// with codec flags that make rtpengine transcode so the gateway's own RTP endpoint only sees PCMU.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// rtpengine-client is CommonJS without types.
const { Client } = require('rtpengine-client') as { Client: new (o: { timeout?: number }) => NgClient };

interface NgClient {
  ping(port: number, host: string): Promise<{ result: string }>;
  offer(port: number, host: string, o: Record<string, unknown>): Promise<NgResult>;
  answer(port: number, host: string, o: Record<string, unknown>): Promise<NgResult>;
  delete(port: number, host: string, o: Record<string, unknown>): Promise<NgResult>;
  close?(): void;
}

interface NgResult {
  result: string;
  sdp?: string;
  'error-reason'?: string;
}

export class MediaServerUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MediaServerUnavailable';
  }
}

export interface MediaAnchorOptions {
  /** "host:port" of rtpengine's ng listener. */
  ng: string;
  timeoutMs: number;
}

const TO_GATEWAY_PCMU = { codec: { mask: ['all'], transcode: ['PCMU', 'telephone-event'] } };
// SRTP (RFC 4568 SDES) ends at rtpengine: the gateway's side of every leg is plain RTP/AVP, the
// peer's side keeps the profile it offered (answer) or the one we ask for (offer). ng's
// `transport-protocol` names the protocol towards the recipient of the SDP being rewritten.
const PLAIN_TO_GATEWAY = { 'transport-protocol': 'RTP/AVP' };
// Offered to a secure trunk: only RFC 4568's AES_CM_128 suites. rtpengine would also offer the NULL
// ciphers (no encryption) and AEAD/AES-192/256 ones, which some stacks accept but key wrongly
// (baresip 1.0 takes AEAD_AES_256_GCM and then cannot decrypt a packet).
const OTHER_SDES_SUITES = [
  'AEAD_AES_256_GCM',
  'AEAD_AES_128_GCM',
  'AES_256_CM_HMAC_SHA1_80',
  'AES_256_CM_HMAC_SHA1_32',
  'AES_192_CM_HMAC_SHA1_80',
  'AES_192_CM_HMAC_SHA1_32',
  'F8_128_HMAC_SHA1_80',
  'F8_128_HMAC_SHA1_32',
  'NULL_HMAC_SHA1_80',
  'NULL_HMAC_SHA1_32',
];
const SDES_TO_PEER = { 'transport-protocol': 'RTP/SAVP', DTLS: 'off', SDES: OTHER_SDES_SUITES.map((s) => `no-${s}`) };

export class MediaAnchor {
  private readonly host: string;
  private readonly port: number;
  private readonly client: NgClient;

  constructor(o: MediaAnchorOptions) {
    const i = o.ng.lastIndexOf(':');
    this.host = o.ng.slice(0, i);
    this.port = Number(o.ng.slice(i + 1));
    this.client = new Client({ timeout: o.timeoutMs });
  }

  async ping(): Promise<void> {
    await this.call(() => this.client.ping(this.port, this.host));
  }

  /**
   * Inbound leg, step 1: the carrier's offer goes in; out comes the offer our endpoint answers,
   * PCMU only (rtpengine transcodes whatever the carrier chose).
   */
  async offerFromPeer(callId: string, fromTag: string, sdp: string): Promise<string> {
    return this.sdpOf(
      await this.call(() =>
        this.client.offer(this.port, this.host, {
          'call-id': callId,
          'from-tag': fromTag,
          sdp,
          replace: ['origin', 'session-connection'],
          ...TO_GATEWAY_PCMU,
          ...PLAIN_TO_GATEWAY,
        }),
      ),
    );
  }

  /** Inbound leg, step 2: our answer goes in; out comes the answer for the carrier. */
  answerFromGateway(callId: string, fromTag: string, toTag: string, sdp: string): Promise<string> {
    return this.answer(callId, fromTag, toTag, sdp);
  }

  /**
   * Outbound leg, step 1: our PCMU offer goes in; out comes the offer for the carrier (PCMA and
   * wideband G.722 added after it, transcoded), as RTP/SAVP with a=crypto when `srtp` (a secure trunk).
   */
  async offerFromGateway(callId: string, fromTag: string, sdp: string, srtp = false): Promise<string> {
    return this.sdpOf(
      await this.call(() =>
        this.client.offer(this.port, this.host, {
          'call-id': callId,
          'from-tag': fromTag,
          sdp,
          replace: ['origin', 'session-connection'],
          codec: { transcode: ['PCMA', 'G722'] },
          ...(srtp ? SDES_TO_PEER : {}),
        }),
      ),
    );
  }

  /** Outbound leg, step 2: the carrier's answer goes in; out comes the answer for our endpoint. */
  answerFromPeer(callId: string, fromTag: string, toTag: string, sdp: string): Promise<string> {
    return this.answer(callId, fromTag, toTag, sdp);
  }

  /** An answer through rtpengine is the same command in both directions: the offer set each side's terms. */
  private async answer(callId: string, fromTag: string, toTag: string, sdp: string): Promise<string> {
    return this.sdpOf(
      await this.call(() =>
        this.client.answer(this.port, this.host, {
          'call-id': callId,
          'from-tag': fromTag,
          'to-tag': toTag,
          sdp,
          replace: ['origin', 'session-connection'],
        }),
      ),
    );
  }

  /** Releases the call's ports; failures are not the caller's problem (rtpengine times calls out). */
  async delete(callId: string, fromTag: string): Promise<void> {
    try {
      await this.client.delete(this.port, this.host, { 'call-id': callId, 'from-tag': fromTag });
    } catch {
      // rtpengine's own timeout will reap it.
    }
  }

  close(): void {
    try {
      this.client.close?.();
    } catch {
      // ignore
    }
  }

  private async call(fn: () => Promise<NgResult>): Promise<NgResult> {
    try {
      return await fn();
    } catch (err) {
      throw new MediaServerUnavailable(`rtpengine at ${this.host}:${this.port} unavailable: ${(err as Error).message}`);
    }
  }

  private sdpOf(r: NgResult): string {
    if (r.result !== 'ok' || !r.sdp) throw new MediaServerUnavailable(`rtpengine refused: ${r['error-reason'] ?? r.result}`);
    return r.sdp;
  }
}
