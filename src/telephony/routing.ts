// Routing resolution for a session (SPEC "Create-session request fields" → routing, rules 1–2):
// which telephony path a session uses and which carrier serves it. Exactly one method may be given:
// a managed phone number, a provider connection, SIP (type 'sip'), or none for the inherited default.
//
// The inherited default (routing omitted, or only `direction`):
//   - the organization's default provider connection when one is set (it must be active and its
//     credentials valid, otherwise no_default_provider);
//   - with no default connection: an organization with SIP enabled expects telephony, so it gets
//     no_default_provider; any other organization gets a socket-only session (provider `webrtc`).
import { TelephonyError } from './errors.js';
import { disallowedHeaderMessage, firstDisallowedHeader } from './custom-headers.js';
import { getOrgConnection, getOrgPhoneNumber, type DbClient, type RoutingConnection } from '../store/index.js';

export interface RoutingInput {
  phone_number?: string;
  connection_id?: string;
  type?: 'sip';
  sip?: { from_uri?: string; to_uri?: string; headers?: Record<string, string> };
  direction?: 'inbound' | 'outbound';
}

export interface RoutingOrg {
  id: string;
  sip_enabled: boolean;
  default_connection_id: string | null;
}

export type Provider = 'carrier_a' | 'carrier_b' | 'sip' | 'webrtc';

export interface ResolvedRouting {
  provider: Provider;
  phoneNumber?: string;
  connectionId?: string;
  sip?: { from_uri?: string; to_uri?: string; headers?: Record<string, string> };
  direction?: 'inbound' | 'outbound';
}

export interface ResolveOptions {
  /** Where clients can read the routing rules (returned as docs_url on routing_failed). */
  docsUrl?: string;
}

function routingFailed(message: string, opts: ResolveOptions): TelephonyError {
  return new TelephonyError('routing_failed', message, undefined, { param: 'routing', extra: opts.docsUrl ? { docs_url: opts.docsUrl } : undefined });
}

/** A connection named by the client: missing or disabled → connection_not_found; bad credentials → connection_invalid. */
async function usableConnection(db: DbClient, orgId: string, id: string, param: string): Promise<RoutingConnection> {
  const c = await getOrgConnection(db, orgId, id);
  if (!c || c.status !== 'active') {
    throw new TelephonyError('connection_not_found', `No active provider connection '${id}' in this organization.`, undefined, { param });
  }
  if (!c.credentials_valid) {
    throw new TelephonyError('connection_invalid', `The credentials of provider connection '${id}' are invalid or expired; update them and retry.`, undefined, {
      param,
    });
  }
  return c;
}

export async function resolveRouting(
  db: DbClient,
  org: RoutingOrg,
  routing: RoutingInput | null | undefined,
  opts: ResolveOptions = {},
): Promise<ResolvedRouting> {
  const r = routing ?? {};
  const direction = r.direction;
  const methods = [
    r.phone_number !== undefined ? 'phone_number' : null,
    r.connection_id !== undefined ? 'connection_id' : null,
    r.type === 'sip' ? "type 'sip'" : null,
  ].filter((m): m is string => m !== null);

  if (methods.length > 1) {
    throw routingFailed(`Supply exactly one routing method; got ${methods.join(' and ')}.`, opts);
  }
  if (r.sip !== undefined && r.type !== 'sip') {
    throw routingFailed("routing.sip is only valid with routing.type 'sip'.", opts);
  }

  if (r.type === 'sip') {
    if (!org.sip_enabled) {
      throw new TelephonyError('sip_not_enabled', 'SIP routing is not enabled for this organization.', undefined, { param: 'routing.type' });
    }
    const bad = firstDisallowedHeader(r.sip?.headers);
    if (bad !== undefined) {
      throw new TelephonyError('invalid_request', disallowedHeaderMessage(bad), undefined, { param: `routing.sip.headers.${bad}` });
    }
    return { provider: 'sip', ...(r.sip ? { sip: r.sip } : {}), ...(direction ? { direction } : {}) };
  }

  if (r.connection_id !== undefined) {
    const c = await usableConnection(db, org.id, r.connection_id, 'routing.connection_id');
    return { provider: c.provider, connectionId: c.id, ...(direction ? { direction } : {}) };
  }

  if (r.phone_number !== undefined) {
    const pn = await getOrgPhoneNumber(db, org.id, r.phone_number);
    if (!pn) {
      throw new TelephonyError('phone_number_not_found', `${r.phone_number} is not a managed number of this organization.`, undefined, {
        param: 'routing.phone_number',
      });
    }
    // A number bound to a connection is carried by it; an unbound managed number terminates on our SIP side.
    if (pn.connection_id) {
      const c = await usableConnection(db, org.id, pn.connection_id, 'routing.phone_number');
      return { provider: c.provider, phoneNumber: pn.number, connectionId: c.id, ...(direction ? { direction } : {}) };
    }
    return { provider: 'sip', phoneNumber: pn.number, ...(direction ? { direction } : {}) };
  }

  // The inherited default.
  if (org.default_connection_id) {
    const c = await getOrgConnection(db, org.id, org.default_connection_id);
    if (!c || c.status !== 'active' || !c.credentials_valid) {
      const why = !c ? 'no longer exists' : c.status !== 'active' ? 'is disabled' : 'has invalid credentials';
      throw new TelephonyError(
        'no_default_provider',
        `The organization's default provider connection ${org.default_connection_id} ${why}; pass routing explicitly or fix the connection.`,
        undefined,
        { param: 'routing' },
      );
    }
    return { provider: c.provider, connectionId: c.id, ...(direction ? { direction } : {}) };
  }
  if (org.sip_enabled) {
    throw new TelephonyError(
      'no_default_provider',
      "SIP is enabled for this organization but it has no default provider connection; pass routing.phone_number, routing.connection_id or routing.type 'sip'.",
      undefined,
      { param: 'routing' },
    );
  }
  return { provider: 'webrtc', ...(direction ? { direction } : {}) };
}
