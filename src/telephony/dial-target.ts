// Where an outbound dial goes, from the session's routing and the dial request (pure; the DB
// lookups are passed in). Order as SPEC "Routing fields": SIP URI, connection, managed number's
// connection, then the organization's default connection.
import type { ConnectionRecord, PhoneNumberRecord, TelephonySessionRecord } from '../store/index.js';
import { TelephonyError } from './errors.js';
import { isCustomSipHeader } from './custom-headers.js';
import { transportOfTarget, type SipTransportName } from './sip/secure-transport.js';

export interface DialRequest {
  /** Destination: E.164 number (through a connection) or a full sip: URI (routing type sip). */
  to?: string;
  /** Caller id: E.164 number or sip: URI. */
  from?: string;
  /** Which party the leg carries; default `customer` for the first leg, else the free one. */
  party?: 'agent' | 'customer';
  ringTimeoutSeconds?: number;
  /** Extra `X-` SIP headers. */
  headers?: Record<string, string>;
}

export interface DialTarget {
  uri: string;
  from: string;
  to: string;
  headers: Record<string, string>;
  provider: string;
  /** sips: or ;transport=tls in the target, or a connection whose transport is tls, dial over TLS. */
  transport: SipTransportName;
  /** Offer SRTP (SDES) to the callee: the connection requires secure calls. */
  srtp: boolean;
  auth: { username: string; password: string } | null;
  /** RTP source latching of the connection dialled through (migration 008); absent: the endpoint default. */
  latching?: 'nat' | 'signalled';
}

export interface DialLookups {
  connection(id: string): Promise<ConnectionRecord | null>;
  number(number: string): Promise<PhoneNumberRecord | null>;
  decrypt(enc: string): string;
}

const E164 = /^\+[1-9]\d{6,14}$/;

export function xHeaders(h: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    // Only X- headers pass (SPEC: "arbitrary X- SIP headers"); values must not break the message.
    if (isCustomSipHeader(k) && typeof v === 'string' && !/[\r\n]/.test(v)) out[k.toLowerCase()] = v;
  }
  return out;
}

const asUri = (v: string, host: string): string => (v.startsWith('sip:') || v.startsWith('sips:') ? v : `sip:${v}@${host}`);

/** Values that go into the Request-URI and From/To: no whitespace, angle brackets or quotes (header injection). */
const SAFE_ADDRESS = /^[^\s<>"]+$/;

export async function resolveDialTarget(s: TelephonySessionRecord, req: DialRequest, advertisedAddress: string, look: DialLookups): Promise<DialTarget> {
  for (const [name, v] of [
    ['to', req.to],
    ['from', req.from],
  ] as const) {
    if (v !== undefined && !SAFE_ADDRESS.test(v))
      throw new TelephonyError('validation_error', `\`${name}\` must be an E.164 number or a sip: URI without spaces.`);
  }
  const routing = (s.routing ?? {}) as {
    type?: string;
    phone_number?: string;
    connection_id?: string;
    sip?: { to_uri?: string; from_uri?: string; headers?: Record<string, unknown> };
  };
  const headers = { ...xHeaders(routing.sip?.headers), ...xHeaders(req.headers) };

  if (routing.type === 'sip') {
    if (!s.sip_enabled) throw new TelephonyError('sip_not_enabled', 'SIP routing is not enabled for this organization.');
    const to = req.to ?? routing.sip?.to_uri;
    if (!to || !/^sips?:/.test(to)) throw new TelephonyError('validation_error', 'routing.sip.to_uri or a sip: URI in `to` is required for SIP routing.');
    const from = req.from ? asUri(req.from, advertisedAddress) : (routing.sip?.from_uri ?? `sip:voxbridge@${advertisedAddress}`);
    const transport = transportOfTarget(to, 'udp');
    return { uri: to.replace(/;transport=\w+/i, ''), from, to, headers, provider: 'sip', transport, srtp: false, auth: null };
  }

  let connectionId = routing.connection_id ?? s.connection_id ?? null;
  const managed = routing.phone_number ?? s.phone_number ?? null;
  if (!connectionId && managed) {
    const n = await look.number(managed);
    if (!n || n.org_id !== s.org_id) throw new TelephonyError('phone_number_not_found', `${managed} is not a managed number of this organization.`);
    connectionId = n.connection_id;
  }
  connectionId ??= s.default_connection_id;
  if (!connectionId) throw new TelephonyError('no_default_provider', 'No provider connection could be resolved for this session.');
  const c = await look.connection(connectionId);
  if (!c || c.org_id !== s.org_id || c.status !== 'active')
    throw new TelephonyError('connection_not_found', `Provider connection ${connectionId} does not exist or is inactive.`);
  if (!c.credentials_valid) throw new TelephonyError('connection_invalid', `Provider connection ${connectionId} has invalid credentials.`);
  const dest = req.to;
  if (!dest) throw new TelephonyError('validation_error', '`to` (an E.164 number) is required to dial through a provider connection.');
  if (!E164.test(dest) && !/^sips?:/.test(dest)) throw new TelephonyError('validation_error', '`to` must be an E.164 number such as +14155550100.');
  const callerId = req.from ?? managed ?? 'anonymous';
  let auth: DialTarget['auth'] = null;
  if (c.username && c.password_enc) {
    try {
      auth = { username: c.username, password: look.decrypt(c.password_enc) };
    } catch {
      throw new TelephonyError('connection_invalid', `Provider connection ${connectionId} credentials cannot be read.`);
    }
  }
  const hostPort = `${c.host}:${c.port}`;
  const uri = /^sips?:/.test(dest) ? dest : `sip:${dest}@${hostPort}`;
  return {
    uri,
    from: asUri(callerId, c.host),
    to: uri,
    headers,
    provider: c.provider,
    transport: /^sips?:/.test(dest) ? transportOfTarget(dest, c.transport) : c.transport,
    srtp: c.require_secure,
    auth,
    latching: c.rtp_latching,
  };
}
