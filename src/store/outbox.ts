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
