// Webhook endpoint rows, scoped to the owning organization (another organization's endpoint is not
// found). Secrets arrive sealed (src/webhooks/secret-box.ts); this module never sees them in clear.
import { newId } from '../ids.js';
import type { Db, DbClient } from './db.js';
import { finishPage, pageClause, type Page, type PageRequest } from './page.js';

export interface WebhookEndpointRow {
  id: string;
  org_id: string;
  url: string;
  description: string | null;
  metadata: Record<string, unknown> | null;
  events: string[];
  event_types: string[];
  realtime: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Every WebhookEndpointRow column, for the named statement below. */
const WEBHOOK_ENDPOINT_COLUMNS =
  'id, org_id, url, description, metadata, events, event_types, realtime, enabled, disabled_reason, disabled_at, secret_enc, previous_secret_enc, previous_secret_expires_at, failing_since, created_at, updated_at';

export interface NewWebhookEndpoint {
  orgId: string;
  url: string;
  events: string[];
  eventTypes: string[];
  realtime: boolean;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  secretEnc: string;
}

export async function insertWebhookEndpoint(db: DbClient, e: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `INSERT INTO webhook_endpoints (id, org_id, url, events, event_types, realtime, description, metadata, secret_enc)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [newId('wh'), e.orgId, e.url, e.events, e.eventTypes, e.realtime, e.description ?? null, e.metadata ? JSON.stringify(e.metadata) : null, e.secretEnc],
  );
  const row = rows[0];
  if (!row) throw new Error('INSERT webhook_endpoints … RETURNING gave no row');
  return row;
}

/** `orgId` null: any organization (operator CLI). */
export async function getWebhookEndpoint(db: DbClient, orgId: string | null, id: string): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.query<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1 AND ($2::text IS NULL OR org_id = $2)', [id, orgId]);
  return rows[0] ?? null;
}

export async function listWebhookEndpoints(db: DbClient, orgId: string, page: PageRequest): Promise<Page<WebhookEndpointRow>> {
  const clause = pageClause(page, 2);
  const { rows } = await db.query<WebhookEndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE org_id = $1 AND ${clause.where} ORDER BY ${clause.order} LIMIT ${page.limit + 1}`,
    [orgId, ...clause.params],
  );
  return finishPage(page, rows);
}

export interface WebhookEndpointChanges {
  url?: string;
  events?: string[];
  eventTypes?: string[];
  realtime?: boolean;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  /** true re-enables (clears the reason and the failure clock); false disables with `disabledReason`. */
  enabled?: boolean;
  disabledReason?: string;
}

export async function updateWebhookEndpoint(db: DbClient, orgId: string | null, id: string, c: WebhookEndpointChanges): Promise<WebhookEndpointRow | null> {
  const sets: string[] = ['updated_at = now()'];
  const params: unknown[] = [id, orgId];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (c.url !== undefined) set('url', c.url);
  if (c.events !== undefined) set('events', c.events);
  if (c.eventTypes !== undefined) set('event_types', c.eventTypes);
  if (c.realtime !== undefined) set('realtime', c.realtime);
  if (c.description !== undefined) set('description', c.description);
  if (c.metadata !== undefined) set('metadata', c.metadata === null ? null : JSON.stringify(c.metadata));
  if (c.enabled === true) sets.push('enabled = true', 'disabled_reason = NULL', 'disabled_at = NULL', 'failing_since = NULL');
  if (c.enabled === false) {
    // Disabling an already disabled endpoint keeps its first reason and time (the right-hand sides read the old row).
    params.push(c.disabledReason ?? 'disabled');
    const reason = `$${params.length}`;
    sets.push(
      `disabled_reason = CASE WHEN enabled THEN ${reason} ELSE disabled_reason END`,
      'disabled_at = CASE WHEN enabled THEN now() ELSE disabled_at END',
      'enabled = false',
    );
  }
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = $1 AND ($2::text IS NULL OR org_id = $2) RETURNING *`,
    params,
  );
  return rows[0] ?? null;
}

/** The new secret signs from now on; the current one keeps signing until `previousExpiresAt`. */
export async function rotateWebhookSecret(
  db: DbClient,
  orgId: string | null,
  id: string,
  secretEnc: string,
  previousExpiresAt: Date,
): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET previous_secret_enc = secret_enc, previous_secret_expires_at = $3, secret_enc = $4, updated_at = now()
     WHERE id = $1 AND ($2::text IS NULL OR org_id = $2) RETURNING *`,
    [id, orgId, previousExpiresAt, secretEnc],
  );
  return rows[0] ?? null;
}

/** Deletes the endpoint; its pending deliveries and attempt log go with it. */
export async function deleteWebhookEndpoint(db: DbClient, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND org_id = $2', [id, orgId]);
  return rowCount === 1;
}

/** Operator view (CLI): every endpoint of an organization, oldest first. */
export async function listAllWebhookEndpoints(db: DbClient, orgId: string): Promise<WebhookEndpointRow[]> {
  const { rows } = await db.query<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE org_id = $1 ORDER BY id', [orgId]);
  return rows;
}

/** The delivery worker's lookup, once per batch: a named statement (db.ts). */
export async function webhookEndpointsByIds(db: Db, ids: string[]): Promise<WebhookEndpointRow[]> {
  const { rows } = await db.query<WebhookEndpointRow>({
    name: 'voxbridge_webhook_endpoints_by_ids',
    text: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ANY($1)`,
    values: [ids],
  });
  return rows;
}
