// Webhook endpoint schemas: the management REST routes SPEC "Webhook endpoint management"
// leaves open. Event names are checked again (categories, aliases, realtime rule) in src/webhooks/events.ts.
import { Type } from '@sinclair/typebox';
import { Iso8601, MetadataSchema, NullableIso8601 } from './common.js';

const EventsField = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 50,
  description:
    "Event types (e.g. session.ended), category names (sessions, provider, transcripts, recordings, analysis, ai_agent) or '*' for all. transcript.segment is sent only when realtime is true.",
});
const UrlField = Type.String({
  minLength: 8,
  maxLength: 2048,
  description: 'HTTPS URL receiving the POSTs. Plain http only to loopback when WEBHOOKS_ALLOW_LOOPBACK_HTTP=true (development).',
});
const RealtimeField = Type.Boolean({ description: 'Also receive transcript.segment (high volume).' });
const DescriptionField = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]);

type Limits = { metadataMaxKeys: number; metadataMaxBytes: number };
const Metadata = (l: Limits) => Type.Union([MetadataSchema(l.metadataMaxKeys, l.metadataMaxBytes), Type.Null()]);

export const CreateWebhookEndpointBody = (l: Limits) =>
  Type.Object(
    {
      url: UrlField,
      events: EventsField,
      realtime: Type.Optional(RealtimeField),
      description: Type.Optional(DescriptionField),
      metadata: Type.Optional(Metadata(l)),
    },
    { additionalProperties: false },
  );

export const UpdateWebhookEndpointBody = (l: Limits) =>
  Type.Object(
    {
      url: Type.Optional(UrlField),
      events: Type.Optional(EventsField),
      realtime: Type.Optional(RealtimeField),
      enabled: Type.Optional(Type.Boolean({ description: 'false disables; true re-enables (also after an automatic disable) and resumes delivery.' })),
      description: Type.Optional(DescriptionField),
      metadata: Type.Optional(Metadata(l)),
    },
    { additionalProperties: false, minProperties: 1 },
  );

export const WebhookEndpointObject = Type.Object({
  id: Type.String({ description: 'wh_…' }),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  events: Type.Array(Type.String(), { description: 'The subscription as given (aliases resolved).' }),
  realtime: Type.Boolean(),
  enabled: Type.Boolean(),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the endpoint is disabled, e.g. after failing every delivery for 3 days.' }),
  disabled_at: NullableIso8601('When it was disabled.'),
  failing_since: NullableIso8601('First failed attempt since the last success; null while healthy.'),
  previous_secret_expires_at: NullableIso8601('During a rotation: until when the previous secret also signs.'),
  metadata: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), Type.Null()]),
  created_at: Iso8601('Creation time.'),
  updated_at: Iso8601('Last change.'),
  secret: Type.Optional(Type.String({ description: 'whsec_… signing secret; returned only by create and rotate_secret.' })),
});

export const WebhookEndpointDeleted = Type.Object({ id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) });

export const WebhookTestEvent = Type.Object({
  id: Type.String({ description: 'evt_…' }),
  object: Type.Literal('webhook_event'),
  type: Type.Literal('webhook.test'),
  api_version: Type.Literal('v1'),
  created_at: Iso8601('Event time.'),
  data: Type.Object({ endpoint_id: Type.String(), message: Type.String() }),
});

export const DeliveryAttemptObject = Type.Object({
  id: Type.String({ description: 'Attempt id (a cursor for ending_before/starting_after).' }),
  object: Type.Literal('webhook_delivery_attempt'),
  event_id: Type.String(),
  event_type: Type.String(),
  attempt: Type.Integer({ description: '1 for the first try.' }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retry'), Type.Literal('failed')], {
    description: 'retry: failed, tried again at next_retry_at; failed: the schedule is exhausted.',
  }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status received, null on a network error or timeout.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Network, TLS, timeout or address-check error.' }),
  duration_ms: Type.Integer(),
  attempted_at: Iso8601('When the attempt started.'),
  next_retry_at: NullableIso8601('When the next attempt is due (outcome retry).'),
});

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100 (default 20).' }),
    starting_after: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,19}$', description: 'Cursor (an attempt id): the attempts after it in the list, i.e. older ones. Newest first.' }),
    ),
  },
  { additionalProperties: false },
);
