// Webhook outbox (DESIGN.md "Data"): an event row is written in the same transaction as the state change
// it announces, so nothing is announced that was not stored and nothing stored goes unannounced.
import { newId } from '../ids.js';
import type { DbClient } from './db.js';

export type WebhookEventType =
  | 'session.created'
  | 'session.started'
  | 'session.ended'
  | 'session.provider.connected'
  | 'session.provider.disconnected'
  | 'transcript.ready'
  | 'transcript.segment'
  | 'recording.ready'
  | 'recording.failed'
  | 'analysis.completed'
  | 'analysis.failed'
  | 'ai_agent.tool_called'
  | 'ai_agent.escalation_requested';

export async function insertEvent(client: DbClient, orgId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<string> {
  const id = newId('evt');
  await client.query('INSERT INTO webhook_events (id, org_id, type, data) VALUES ($1, $2, $3, $4)', [id, orgId, type, data]);
  return id;
}

export interface NewEvent {
  orgId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** insertEvent for several events in one statement (one NOTIFY for the delivery workers); ids in array order. */
export async function insertEvents(client: DbClient, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('evt'));
  await client.query(
    `INSERT INTO webhook_events (id, org_id, type, data)
     SELECT id, org_id, type, data FROM jsonb_to_recordset($1::jsonb) AS e(id text, org_id text, type text, data jsonb)`,
    [JSON.stringify(events.map((e, i) => ({ id: ids[i], org_id: e.orgId, type: e.type, data: e.data })))],
  );
  return ids;
}
