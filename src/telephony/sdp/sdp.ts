// SDP offer/answer for narrowband telephone audio (RFC 3264, RFC 4566).
// We speak PCMU (0), PCMA (8) and telephone-event (RFC 4733); the answer picks the
// first codec of the offer that we support (RFC 3264 §6.1: the answerer should honour the offerer's order).

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface AudioCodec {
  payloadType: number;
  name: 'PCMU' | 'PCMA';
}

export interface SdpMedia {
  /** Connection address for the audio stream ("0.0.0.0" means hold per RFC 2543 style). */
  address: string;
  port: number;
  /** Payload types in the offer's order. */
  payloadTypes: number[];
  /** rtpmap names by payload type, upper-cased encoding name (e.g. PCMU, TELEPHONE-EVENT). */
  rtpmap: Map<number, { name: string; clockRate: number }>;
  direction: Direction;
  ptime?: number;
  protocol: string;
  /** a=rtcp-mux: the peer offers RTCP on the RTP port (RFC 5761 §5.1.1). */
  rtcpMux?: boolean;
}

export interface ParsedSdp {
  sessionId: string;
  sessionVersion: number;
  originAddress: string;
  audio: SdpMedia | null;
}

/** Why an SDP body is unusable: `malformed` is a bad request (400), the others are 488 (RFC 3261 §13.3.1.1). */
export type SdpErrorCode = 'malformed' | 'no_audio' | 'no_common_codec' | 'missing';

export class SdpError extends Error {
  constructor(
    message: string,
    readonly code: SdpErrorCode = 'malformed',
  ) {
    super(message);
    this.name = 'SdpError';
  }
}

const STATIC_NAMES: Record<number, { name: string; clockRate: number }> = {
  0: { name: 'PCMU', clockRate: 8000 },
  8: { name: 'PCMA', clockRate: 8000 },
  18: { name: 'G729', clockRate: 8000 },
  9: { name: 'G722', clockRate: 8000 },
};

const DIRECTIONS = new Set<Direction>(['sendrecv', 'sendonly', 'recvonly', 'inactive']);

/** Parses the parts of an SDP body a telephone gateway needs. Throws SdpError on a body it cannot use. */
export function parseSdp(text: string): ParsedSdp {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines[0] !== 'v=0') throw new SdpError('SDP must start with v=0');
  let sessionAddress = '';
  let sessionDirection: Direction = 'sendrecv';
  let sessionId = '';
  let sessionVersion = 0;
  let originAddress = '';
  let audio: SdpMedia | null = null;
  let current: SdpMedia | null = null;
  let inOtherMedia = false;

  for (const line of lines) {
    const type = line[0];
    const value = line.slice(2);
    if (line[1] !== '=') throw new SdpError(`malformed SDP line: ${line}`);
    if (type === 'o') {
      const [, id, version, , , address] = value.split(' ');
      if (id === undefined || address === undefined) throw new SdpError('malformed o= line');
      sessionId = id;
      sessionVersion = Number(version) || 0;
      originAddress = address;
    } else if (type === 'c') {
      const connection = value.split(' ')[2];
      if (connection === undefined) throw new SdpError('malformed c= line');
      const addr = connection.split('/')[0] ?? connection;
      if (current) current.address = addr;
      else if (!inOtherMedia) sessionAddress = addr;
    } else if (type === 'm') {
      const parts = value.split(' ');
      const [kind, portRaw, protocol] = parts;
      if (protocol === undefined || parts.length < 4) throw new SdpError('malformed m= line');
      current = null;
      inOtherMedia = true;
      if (kind === 'audio' && !audio) {
        const port = Number(portRaw);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SdpError('bad media port');
        const pts = parts.slice(3).map(Number);
        if (pts.some((p) => !Number.isInteger(p) || p < 0 || p > 127)) throw new SdpError('bad payload type');
        audio = current = {
          address: sessionAddress,
          port,
          payloadTypes: pts,
          rtpmap: new Map(),
          direction: sessionDirection,
          protocol,
        };
        inOtherMedia = false;
      }
    } else if (type === 'a') {
      const [attr, ...restParts] = value.split(':');
      const rest = restParts.join(':');
      if (DIRECTIONS.has(attr as Direction)) {
        if (current) current.direction = attr as Direction;
        else if (!inOtherMedia) sessionDirection = attr as Direction;
      } else if (current && attr === 'rtpmap') {
        const m = /^(\d+)\s+([^/\s]+)\/(\d+)/.exec(rest);
        if (m?.[2]) current.rtpmap.set(Number(m[1]), { name: m[2].toUpperCase(), clockRate: Number(m[3]) });
      } else if (current && attr === 'rtcp-mux') {
        current.rtcpMux = true;
      } else if (current && attr === 'ptime') {
        const p = Number(rest);
        if (p > 0) current.ptime = p;
      }
    }
  }
  if (audio) {
    for (const pt of audio.payloadTypes) {
      if (!audio.rtpmap.has(pt) && STATIC_NAMES[pt]) audio.rtpmap.set(pt, STATIC_NAMES[pt]);
    }
    if (!audio.address) throw new SdpError('no connection address for audio');
  }
  return { sessionId, sessionVersion, originAddress, audio };
}

/** The stream a remote description asks for, as our RTP endpoint needs it. */
export interface NegotiatedMedia {
  remoteAddress: string;
  remotePort: number;
  codec: AudioCodec;
  /** Payload type the peer uses for telephone-event, if offered (RFC 4733). */
  dtmfPayloadType: number | null;
  /** Direction seen from the remote side. */
  remoteDirection: Direction;
  /** True when the peer put us on hold (sendonly/inactive, or c=0.0.0.0 per RFC 3264 §8.4 legacy). */
  onHold: boolean;
  /** RTCP multiplexed on the RTP port (offered, and accepted in our answer: RFC 5761 §5.1.1). */
  rtcpMux: boolean;
}

/**
 * Chooses the codec from a remote description: the first of its payload types that is PCMU or PCMA
 * (honouring its order), and its telephone-event payload type at 8000 Hz.
 */
/** An offer with a usable audio stream, whatever its codecs (rtpengine transcodes them for us). */
export function requireAudio(remote: ParsedSdp): void {
  if (!remote.audio || remote.audio.port === 0) throw new SdpError('no audio stream offered', 'no_audio');
}

export function negotiate(remote: ParsedSdp): NegotiatedMedia {
  const audio = remote.audio;
  if (!audio || audio.port === 0) throw new SdpError('no audio stream offered', 'no_audio');
  let codec: AudioCodec | null = null;
  let dtmf: number | null = null;
  for (const pt of audio.payloadTypes) {
    const map = audio.rtpmap.get(pt);
    if (!map) continue;
    if (!codec && map.clockRate === 8000 && (map.name === 'PCMU' || map.name === 'PCMA')) {
      codec = { payloadType: pt, name: map.name };
    } else if (dtmf === null && map.name === 'TELEPHONE-EVENT' && map.clockRate === 8000) {
      dtmf = pt;
    }
  }
  if (!codec) throw new SdpError('no common codec (PCMU or PCMA required)', 'no_common_codec');
  const zeroAddress = audio.address === '0.0.0.0';
  return {
    remoteAddress: audio.address,
    remotePort: audio.port,
    codec,
    dtmfPayloadType: dtmf,
    remoteDirection: audio.direction,
    onHold: zeroAddress || audio.direction === 'sendonly' || audio.direction === 'inactive',
    rtcpMux: audio.rtcpMux === true,
  };
}

/** RFC 3264 §6.1: the answer's direction mirrors the offer's. */
export function answerDirection(offered: Direction): Direction {
  switch (offered) {
    case 'sendonly':
      return 'recvonly';
    case 'recvonly':
      return 'sendonly';
    case 'inactive':
      return 'inactive';
    default:
      return 'sendrecv';
  }
}

export interface LocalSdpOptions {
  address: string;
  port: number;
  sessionId: string;
  sessionVersion: number;
  /** Codecs in our order of preference (an answer lists only the chosen one). */
  codecs: AudioCodec[];
  dtmfPayloadType: number | null;
  direction: Direction;
  ptime?: number;
  /** Adds a=rtcp-mux (in an answer only when the offer had it). */
  rtcpMux?: boolean;
}

const CODEC_NAME: Record<string, string> = { PCMU: 'PCMU/8000', PCMA: 'PCMA/8000' };

export function buildSdp(o: LocalSdpOptions): string {
  const pts = o.codecs.map((c) => c.payloadType);
  if (o.dtmfPayloadType !== null) pts.push(o.dtmfPayloadType);
  const lines = [
    'v=0',
    `o=voxbridge ${o.sessionId} ${o.sessionVersion} IN IP4 ${o.address}`,
    's=voxbridge',
    `c=IN IP4 ${o.address}`,
    't=0 0',
    `m=audio ${o.port} RTP/AVP ${pts.join(' ')}`,
  ];
  for (const c of o.codecs) lines.push(`a=rtpmap:${c.payloadType} ${CODEC_NAME[c.name]}`);
  if (o.dtmfPayloadType !== null) {
    lines.push(`a=rtpmap:${o.dtmfPayloadType} telephone-event/8000`, `a=fmtp:${o.dtmfPayloadType} 0-16`);
  }
  lines.push(`a=ptime:${o.ptime ?? 20}`, `a=${o.direction}`);
  if (o.rtcpMux) lines.push('a=rtcp-mux');
  return lines.join('\r\n') + '\r\n';
}

export const DEFAULT_CODECS: AudioCodec[] = [
  { payloadType: 0, name: 'PCMU' },
  { payloadType: 8, name: 'PCMA' },
];
export const DEFAULT_DTMF_PT = 101;

/** Builds our answer to a remote offer and returns what to configure on the RTP endpoint. */
export function answerOffer(
  offerText: string,
  local: { address: string; port: number; sessionId: string; sessionVersion: number },
): { sdp: string; media: NegotiatedMedia } {
  const offer = parseSdp(offerText);
  const media = negotiate(offer);
  const sdp = buildSdp({
    ...local,
    codecs: [media.codec],
    dtmfPayloadType: media.dtmfPayloadType,
    direction: answerDirection(offer.audio!.direction),
    rtcpMux: media.rtcpMux,
  });
  return { sdp, media };
}
