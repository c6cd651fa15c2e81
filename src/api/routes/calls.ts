// POST /v1/sessions/{id}/dial and /hangup (SPEC leaves the payloads open; designed here and
// documented in the OpenAPI document). Dial waits for the callee's final answer (up to the ring
// timeout) so a refusal comes back as 502 dial_failed naming the SIP status.
// Scale-out: a node that does not own the live session forwards the command over the session bus to
// the owner and returns the owner's answer unchanged (503 service_unavailable when it does not answer).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../errors.js';
import { authOf, type ApiApp } from '../context.js';
import { ErrorBody, IdParams, withAuthErrors } from '../schemas/common.js';
import { CallQualityObject } from '../schemas/sessions.js';
import {
  TelephonyError,
  disallowedHeaderMessage,
  firstDisallowedHeader,
  type DialRequest,
  type Telephony,
  type TelephonyErrorCode,
} from '../../telephony/index.js';
import { RemoteCommandError, RemoteCommandTimeout, type CommandExecutor, type ForwardedCommand } from '../../coord/index.js';

const Party = Type.Union([Type.Literal('agent'), Type.Literal('customer')], { description: 'Which party of the session the phone leg carries.' });

export const DialBody = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 256,
        description:
          "Destination: an E.164 number (dialled through the session's provider connection) or, for routing type 'sip', a sip: URI overriding routing.sip.to_uri.",
      }),
    ),
    from: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 256,
        description: "Caller id: E.164 number or sip: URI. Default: routing.sip.from_uri, else the session's managed number.",
      }),
    ),
    party: Type.Optional(Party),
    ring_timeout_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 120, description: 'Seconds to wait for an answer before cancelling (default 30).' }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1024 }), {
        description: 'Custom SIP headers (names must start with X-), merged over routing.sip.headers.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const HangupBody = Type.Object(
  {
    call_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'The call to hang up (call id or SIP Call-ID); default: every live SIP leg of the session.' }),
    ),
    party: Type.Optional(Party),
  },
  { additionalProperties: false },
);

export const CallObject = Type.Object({
  id: Type.String({ description: 'call_… identifier of the leg.' }),
  object: Type.Literal('call'),
  session_id: Type.String(),
  provider: Type.String({ description: 'carrier_a, carrier_b or sip.' }),
  call_sid: Type.String({ description: 'The SIP Call-ID.' }),
  party: Party,
  direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
  status: Type.String({ description: 'in-progress or completed.' }),
  from: Type.String(),
  to: Type.String(),
  disconnect_reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  duration: Type.Optional(Type.Number({ description: 'Seconds since the leg connected.' })),
  quality: Type.Optional(CallQualityObject),
});

/** Forwarding to the owning node (coord/session-rpc.ts SessionRpc). */
export interface CallForwarder {
  /** The node owning the live session when that is another node; null when this node acts. */
  remoteOwner(sessionId: string): Promise<string | null>;
  request(to: string, cmd: Pick<ForwardedCommand, 'kind' | 'sessionId' | 'orgId' | 'payload'>, timeoutMs: number): Promise<unknown>;
  /** A node that can place calls, for nodes without telephony of their own. */
  anyCallNode(): Promise<string | null>;
}

/**
 * A node with telephony passes it (and a forwarder when it shares the store with other nodes); a
 * node with the api role alone passes only the forwarder and sends every call command elsewhere.
 */
export type CallRoutesOptions = { telephony: Telephony; forwarder?: CallForwarder } | { telephony?: undefined; forwarder: CallForwarder };

type HangupRequest = { call_id?: string; party?: 'agent' | 'customer' };
/** Hangup waits for the BYE exchange; dial for the ring timeout, plus this margin for setup. */
const FORWARD_MARGIN_MS = 10_000;

/** Carries out a command another node forwarded here (the owner side of CallForwarder.request). */
export function callCommandExecutor(telephony: Telephony): CommandExecutor {
  return (cmd) =>
    cmd.kind === 'dial'
      ? telephony.dial(cmd.sessionId, cmd.orgId, cmd.payload as DialRequest)
      : telephony.hangup(cmd.sessionId, cmd.orgId, cmd.payload as HangupRequest);
}

/** The owner's answer as this node would have given it: its catalog error, or 503 when it is silent. */
function fromRemote(err: unknown): unknown {
  if (err instanceof RemoteCommandTimeout) {
    return new ApiError('service_unavailable', { message: 'The node that holds this session did not answer; retry with backoff.' });
  }
  if (err instanceof RemoteCommandError) {
    if (err.code === 'internal_error') return new ApiError('internal_error');
    return new TelephonyError(err.code as TelephonyErrorCode, err.message, err.sipStatus);
  }
  return err;
}

/**
 * Runs `local` here, or forwards to the node that owns the live session. Without local telephony
 * (api role alone) a session nobody owns goes to any node that can place calls.
 */
async function onOwner<T>(
  forwarder: CallForwarder | undefined,
  cmd: Pick<ForwardedCommand, 'kind' | 'sessionId' | 'orgId' | 'payload'>,
  timeoutMs: number,
  local: (() => Promise<T>) | null,
): Promise<T> {
  let target = await forwarder?.remoteOwner(cmd.sessionId);
  if (!target && local) return local();
  target ??= await forwarder?.anyCallNode();
  if (!target || !forwarder) {
    throw new ApiError('media_server_unavailable', { message: 'No node that can place calls is running.' });
  }
  try {
    return (await forwarder.request(target, cmd, timeoutMs)) as T;
  } catch (err) {
    throw fromRemote(err);
  }
}

export default async function callRoutes(app: ApiApp, opts: CallRoutesOptions): Promise<void> {
  const { telephony, forwarder } = opts;
  // Registered beside (not inside) the resource routes: make the shared error schema visible here.
  if (!app.getSchema('ErrorBody')) app.addSchema(ErrorBody);

  app.post(
    '/v1/sessions/:id/dial',
    {
      config: { scope: 'sessions:write' },
      schema: {
        tags: ['sessions'],
        summary: 'Dial a phone leg into a session',
        description:
          "Scope sessions:write. Places an outbound SIP call through the session's routing (routing type 'sip' → routing.sip.to_uri; a connection, a managed number's connection or the organization's default connection → `to` at the connection's host, with digest auth on 401/407). Responds once the callee answers; the leg then carries `party` (default customer, or agent when a customer leg is live). Events session.provider.connected/disconnected follow the leg.",
        params: IdParams,
        body: Type.Union([DialBody, Type.Null()], { description: 'Optional: without a body the routing decides everything.' }),
        response: {
          200: CallObject,
          ...withAuthErrors({
            400: [
              'invalid_request',
              'session_not_dialable',
              'sip_not_enabled',
              'no_default_provider',
              'connection_not_found',
              'connection_invalid',
              'phone_number_not_found',
              'validation_error',
            ],
            404: ['session_not_found'],
            502: ['dial_failed'],
            503: ['media_server_unavailable'],
          }),
        },
      },
    },
    async (req) => {
      const { id } = req.params;
      const b = req.body ?? {};
      const bad = firstDisallowedHeader(b.headers);
      if (bad !== undefined) throw new ApiError('invalid_request', { param: `headers.${bad}`, message: disallowedHeaderMessage(bad) });
      const dial: DialRequest = { to: b.to, from: b.from, party: b.party, ringTimeoutSeconds: b.ring_timeout_seconds, headers: b.headers };
      const orgId = authOf(req).orgId;
      const call = await onOwner(
        forwarder,
        { kind: 'dial', sessionId: id, orgId, payload: dial },
        (b.ring_timeout_seconds ?? 30) * 1000 + FORWARD_MARGIN_MS,
        telephony ? () => telephony.dial(id, orgId, dial) : null,
      );
      return { ...call, session_id: id };
    },
  );

  app.post(
    '/v1/sessions/:id/hangup',
    {
      config: { scope: 'sessions:write' },
      schema: {
        tags: ['sessions'],
        summary: "Hang up a session's SIP leg(s)",
        description:
          'Scope sessions:write. Sends BYE on the chosen live leg(s) (all by default). The session itself keeps running (end it with POST /v1/sessions/{id}/end); a new call may join within 5 minutes.',
        params: IdParams,
        body: Type.Union([HangupBody, Type.Null()], { description: 'Optional: without a body every live leg is hung up.' }),
        response: {
          200: Type.Object({ object: Type.Literal('list'), data: Type.Array(CallObject) }),
          ...withAuthErrors({ 400: ['session_not_dialable'], 404: ['session_not_found'] }),
        },
      },
    },
    async (req) => {
      const { id } = req.params;
      const b = req.body ?? {};
      const hangup: HangupRequest = { call_id: b.call_id, party: b.party };
      const orgId = authOf(req).orgId;
      const calls = await onOwner(
        forwarder,
        { kind: 'hangup', sessionId: id, orgId, payload: hangup },
        FORWARD_MARGIN_MS,
        telephony ? () => telephony.hangup(id, orgId, hangup) : null,
      );
      return { object: 'list' as const, data: calls.map((c) => ({ ...c, session_id: id })) };
    },
  );
}
