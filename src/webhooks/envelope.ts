// The event as sent (SPEC "Webhook delivery", envelope table): exactly id, type, api_version,
// created_at and data, where data is what the outbox row holds. The same event id on every retry.
import { signatureHeader, SIGNATURE_HEADER } from './signature.js';

export interface OutboxEvent {
  event_id: string;
  event_type: string;
  api_version: string;
  event_created_at: Date;
  data: Record<string, unknown>;
}

export function envelopeBody(e: OutboxEvent): string {
  return JSON.stringify({ id: e.event_id, type: e.event_type, api_version: e.api_version, created_at: e.event_created_at.toISOString(), data: e.data });
}

/** Request headers of one attempt; `secrets` are the endpoint's signing secrets, newest first. */
export function deliveryHeaders(e: OutboxEvent, body: string, secrets: readonly string[], nowMs = Date.now()): Record<string, string> {
  return {
    [SIGNATURE_HEADER]: signatureHeader(secrets, body, nowMs),
    'user-agent': 'voxbridge-webhooks/1',
    'voxbridge-event-id': e.event_id,
  };
}
