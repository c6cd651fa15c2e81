// Session resource schemas (SPEC "Session object", "Create-session request fields", "Transcript object").
import { Type, type Static } from '@sinclair/typebox';
import { Iso8601, MetadataSchema, NullableIso8601, VoiceInput } from './common.js';
import { AgentOverrides } from './agents.js';

import { SESSION_MODES } from '../../sessions/index.js';

export const E164 = '^\\+[1-9][0-9]{1,14}$';
export const SIP_URI = '^sips?:[^\\s]+$';

export const SipRouting = Type.Object(
  {
    from_uri: Type.Optional(Type.String({ pattern: SIP_URI, maxLength: 512, description: 'sip: or sips: URI used as From.' })),
    to_uri: Type.Optional(Type.String({ pattern: SIP_URI, maxLength: 512, description: 'sip: or sips: URI to call (Request-URI and To).' })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1024, pattern: '^[^\\r\\n]*$' }), {
        maxProperties: 20,
        description: 'Custom SIP headers; names must start with X- (RFC 3261 §7.3 token characters), values one line.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SessionRouting = Type.Object(
  {
    phone_number: Type.Optional(Type.String({ pattern: E164, description: 'Managed number of the organization, E.164 (+14155550123).' })),
    connection_id: Type.Optional(Type.String({ pattern: '^pcon_[0-9a-z]+$', description: 'External provider connection (pcon_…).' })),
    type: Type.Optional(Type.Literal('sip', { description: "Set to 'sip' for SIP trunk calls; omit for number or connection routing." })),
    sip: Type.Optional(SipRouting),
    direction: Type.Optional(Type.Union([Type.Literal('inbound'), Type.Literal('outbound')], { description: 'Hint: inbound or outbound.' })),
  },
  {
    additionalProperties: false,
    description:
      "Exactly one method: phone_number, connection_id, type 'sip', or none of them for the organization's default route. " +
      "The default route is the organization's default provider connection when one is set; with none, a session of an organization " +
      'without SIP is a socket-only session (provider webrtc), and one of an organization with SIP enabled fails with no_default_provider.',
  },
);

export const AudioInput = Type.Object(
  {
    sample_rate_hz: Type.Optional(Type.Union([Type.Literal(8000)], { description: 'Only 8000 is accepted (telephone band; the socket carries 8 kHz).' })),
    encoding: Type.Optional(Type.Union([Type.Literal('mulaw')], { description: "Only 'mulaw' is accepted (the socket's audio.input encoding)." })),
    channels: Type.Optional(Type.Union([Type.Literal(1)], { description: 'Only 1 (mono) is accepted.' })),
  },
  { additionalProperties: false, description: 'Defaults 8000 Hz, mulaw, 1 channel; these are also the only accepted values.' },
);

export const RecordingInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    // A plain enum, so a refused value is reported with every allowed one ("must be one of: …").
    mode: Type.Optional(
      Type.Unsafe<'dual_channel' | 'mixed'>({
        type: 'string',
        enum: ['dual_channel', 'mixed'],
        description: 'dual_channel (agent and customer files plus a mix; default) or mixed (one mixed file). See README "Recordings".',
      }),
    ),
    consent_required: Type.Optional(Type.Boolean({ description: 'When true, recordings are only served once consent_status is granted. Default false.' })),
    consent_status: Type.Optional(
      Type.Union([Type.Literal('granted'), Type.Literal('denied'), Type.Literal('pending'), Type.Literal('not_required')], {
        description: 'Default: pending when consent_required, otherwise not_required.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AiAgentInput = Type.Object(
  {
    id: Type.String({ pattern: '^agt_[0-9a-z]+$', description: 'agt_… id of an agent of the organization.' }),
    overrides: Type.Optional(AgentOverrides),
  },
  { additionalProperties: false, description: 'Required in ai_agent mode, optional in help_chat_voice, refused in translation modes.' },
);

export function CreateSessionBody(limits: { metadataMaxKeys: number; metadataMaxBytes: number }) {
  return Type.Object(
    {
      mode: Type.String({ description: `One of: ${SESSION_MODES.join(', ')}. Another value gives unsupported_mode.` }),
      configuration_mode: Type.Optional(Type.String({ maxLength: 100, description: 'Echoed back; not interpreted.' })),
      // null is accepted as well: the session object shows null for an auto-detected language.
      source_language: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'ISO 639-1 code of Party A; auto-detected when omitted or null.' }),
      ),
      target_language: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'ISO 639-1 code of Party B; auto-detected when omitted or null.' }),
      ),
      routing: Type.Optional(SessionRouting),
      audio: Type.Optional(AudioInput),
      voice: Type.Optional(VoiceInput),
      recording: Type.Optional(RecordingInput),
      ai_agent: Type.Optional(AiAgentInput),
      metadata: Type.Optional(Type.Union([MetadataSchema(limits.metadataMaxKeys, limits.metadataMaxBytes), Type.Null()])),
    },
    { additionalProperties: false, description: 'A top-level provider is refused: telephony is chosen only through routing.' },
  );
}
export type CreateSessionInput = Static<ReturnType<typeof CreateSessionBody>>;

export const StreamObject = Type.Object({
  url: Type.String({ description: 'ws(s)://{host}/v1/sessions/{id}/connect' }),
  token: Type.String({ description: 'kst_… stream token, valid for 5 minutes, checked at connect only.' }),
  expires_at: Iso8601('Token expiry.'),
});

export const SessionRecording = Type.Object({
  enabled: Type.Boolean(),
  mode: Type.String(),
  consent_required: Type.Boolean(),
  consent_status: Type.String(),
});

/** RTP/RTCP quality of a phone leg: live for an active leg, final once it ended. */
export const CallQualityObject = Type.Object(
  {
    packets_sent: Type.Integer(),
    packets_received: Type.Integer(),
    packets_lost: Type.Integer({ description: 'Expected from the phone but never received (RFC 3550 §A.3).' }),
    loss_percent: Type.Number(),
    jitter_ms: Type.Number({ description: 'Interarrival jitter of what the gateway receives (RFC 3550 §A.8).' }),
    rtt_ms: Type.Union([Type.Number(), Type.Null()], { description: 'Round trip from RTCP (null until the phone reported on our SR).' }),
    remote: Type.Union([Type.Object({ loss_percent: Type.Number(), jitter_ms: Type.Number() }), Type.Null()], {
      description: "The phone's view of our stream, from its RTCP reports.",
    }),
    mos: Type.Number({ description: 'MOS estimate 1–4.5 (ITU-T G.107 simplified E-model).' }),
    rtcp: Type.Object({ sent: Type.Integer(), received: Type.Integer(), mux: Type.Boolean() }),
  },
  { description: 'RTP/RTCP quality of the leg: so far while it is live, final once it ended (additive to SPEC).' },
);

export const CallObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('call'),
  provider: Type.String(),
  call_sid: Type.String({ description: 'Provider call identifier (the SIP Call-ID for SIP legs).' }),
  direction: Type.String(),
  status: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.Union([Type.String(), Type.Null()]),
  quality: Type.Optional(CallQualityObject),
});

const Metadata = Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), Type.Null()]);

const sessionFields = {
  id: Type.String({ description: 'sess_…' }),
  object: Type.Literal('session'),
  status: Type.Union([Type.Literal('created'), Type.Literal('active'), Type.Literal('ended')]),
  mode: Type.Union(SESSION_MODES.map((m) => Type.Literal(m))),
  configuration_mode: Type.Union([Type.String(), Type.Null()]),
  source_language: Type.Union([Type.String(), Type.Null()]),
  target_language: Type.Union([Type.String(), Type.Null()]),
  provider: Type.String({ description: 'Resolved carrier: carrier_a, carrier_b, sip or webrtc.' }),
  phone_number: Type.Optional(Type.String()),
  recording: SessionRecording,
  metadata: Metadata,
  created_at: Iso8601('Creation time.'),
};

export const SessionCreated = Type.Object({ ...sessionFields, stream: StreamObject }, { description: 'The new session with its stream details.' });

export const SessionRetrieved = Type.Object(
  {
    ...sessionFields,
    call: Type.Optional(CallObject),
    stream: Type.Optional(StreamObject),
    started_at: NullableIso8601('When the session became active.'),
    ended_at: NullableIso8601('When the session ended.'),
  },
  { description: 'The session; stream (with a fresh token) only while active; call when a telephony leg exists.' },
);

export const SessionEnded = Type.Object({
  id: Type.String(),
  object: Type.Literal('session'),
  status: Type.Literal('ended'),
  duration_seconds: Type.Number(),
  ended_at: Iso8601('When the session ended.'),
});

export const TranscriptTurn = Type.Object({
  sequence: Type.Integer({ minimum: 1 }),
  speaker: Type.String({ description: 'agent or customer.' }),
  language: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  translation: Type.Optional(Type.Object({ language: Type.String(), text: Type.String() })),
  timestamp: Iso8601('When the turn was final.'),
});

export const TranscriptObject = Type.Object({
  id: Type.String({ description: 'trn_ followed by the session id.' }),
  object: Type.Literal('transcript'),
  session_id: Type.String(),
  status: Type.Union([Type.Literal('in_progress'), Type.Literal('completed')]),
  turns: Type.Array(TranscriptTurn),
  metadata: Type.Object({
    total_turns: Type.Integer(),
    duration_seconds: Type.Number(),
    languages_detected: Type.Array(Type.String()),
  }),
});
