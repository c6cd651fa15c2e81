// Managing webhook endpoints, shared by the REST routes and the operator CLI so both apply the same
// rules: URL guard (url-guard.ts), subscription expansion (events.ts), secrets sealed at rest and
// shown once, rotation with a grace period during which both secrets sign.
import type { Config } from '../config/index.js';
import {
  getWebhookEndpoint,
  insertTestEvent,
  insertWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type Db,
  type WebhookEndpointRow,
} from '../store/index.js';
import { expandSubscription, TEST_EVENT_TYPE } from './events.js';
import { newSigningSecret, sealSecret } from './secret-box.js';
import { resolveEndpointUrl, type UrlPolicy } from './url-guard.js';

export type WebhookSettings = Config['webhooks'];

export const urlPolicyOf = (s: WebhookSettings): UrlPolicy => ({ allowLoopback: s.allowLoopbackHttp, allowPrivate: s.allowPrivateNetworks });

export interface EndpointInput {
  url: string;
  events: string[];
  realtime?: boolean;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface EndpointChanges {
  url?: string;
  events?: string[];
  realtime?: boolean;
  enabled?: boolean;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
}

/** The API object (README "Webhooks"; the route's response schema is WebhookEndpointObject). */
export interface WebhookEndpointObject {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  description: string | null;
  events: string[];
  realtime: boolean;
  enabled: boolean;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  metadata: Record<string, string | number | boolean | null> | null;
  created_at: string;
  updated_at: string;
  /** Only on create and rotation. */
  secret?: string;
}

/** The event POST /v1/webhook_endpoints/{id}/test queued, as it will be sent. */
export interface WebhookTestEventObject {
  id: string;
  object: 'webhook_event';
  type: typeof TEST_EVENT_TYPE;
  api_version: 'v1';
  created_at: string;
  data: { endpoint_id: string; message: string };
}

export function presentEndpoint(row: WebhookEndpointRow, secret?: string): WebhookEndpointObject {
  const rotating = row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now();
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    events: row.events,
    realtime: row.realtime,
    enabled: row.enabled,
    status: row.enabled ? 'enabled' : 'disabled',
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    failing_since: row.failing_since?.toISOString() ?? null,
    previous_secret_expires_at: rotating ? row.previous_secret_expires_at!.toISOString() : null,
    // Written only from the validated create/update body (its metadata schema).
    metadata: row.metadata as WebhookEndpointObject['metadata'],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(secret !== undefined ? { secret } : {}),
  };
}

export class WebhookEndpoints {
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'secretKey' | 'webhooks'>,
  ) {}

  /** Throws UrlRefused or SubscriptionError on bad input. */
  async create(orgId: string, input: EndpointInput): Promise<{ row: WebhookEndpointRow; secret: string }> {
    const realtime = input.realtime ?? false;
    const sub = expandSubscription(input.events, realtime);
    await resolveEndpointUrl(input.url, urlPolicyOf(this.config.webhooks));
    const secret = newSigningSecret();
    const row = await insertWebhookEndpoint(this.db, {
      orgId,
      url: input.url,
      events: sub.events,
      eventTypes: sub.eventTypes,
      realtime,
      description: input.description ?? null,
      metadata: input.metadata ?? null,
      secretEnc: sealSecret(this.config.secretKey, secret),
    });
    return { row, secret };
  }

  /** `orgId` null: any organization (operator). Null when there is no such endpoint. */
  async update(
    orgId: string | null,
    id: string,
    changes: EndpointChanges,
    disabledReason = 'disabled by the organization',
  ): Promise<WebhookEndpointRow | null> {
    const existing = await getWebhookEndpoint(this.db, orgId, id);
    if (!existing) return null;
    let sub: { events: string[]; eventTypes: string[] } | undefined;
    if (changes.events !== undefined || changes.realtime !== undefined) {
      sub = expandSubscription(changes.events ?? existing.events, changes.realtime ?? existing.realtime);
    }
    if (changes.url !== undefined) await resolveEndpointUrl(changes.url, urlPolicyOf(this.config.webhooks));
    return updateWebhookEndpoint(this.db, orgId, id, {
      url: changes.url,
      realtime: changes.realtime,
      description: changes.description,
      metadata: changes.metadata,
      events: sub?.events,
      eventTypes: sub?.eventTypes,
      enabled: changes.enabled,
      disabledReason,
    });
  }

  async rotateSecret(orgId: string | null, id: string): Promise<{ row: WebhookEndpointRow; secret: string } | null> {
    const secret = newSigningSecret();
    const graceEnd = new Date(Date.now() + this.config.webhooks.secretRotationGraceSeconds * 1000);
    const row = await rotateWebhookSecret(this.db, orgId, id, sealSecret(this.config.secretKey, secret), graceEnd);
    return row ? { row, secret } : null;
  }

  /** Queues a `webhook.test` event for this endpoint only; resolves with the event as it will be sent. */
  async sendTest(row: WebhookEndpointRow): Promise<WebhookTestEventObject> {
    const data = { endpoint_id: row.id, message: 'This is a test event from voxbridge.' };
    const ev = await insertTestEvent(this.db, row.org_id, row.id, data);
    return { id: ev.id, object: 'webhook_event', type: TEST_EVENT_TYPE, api_version: 'v1', created_at: ev.created_at.toISOString(), data };
  }
}
