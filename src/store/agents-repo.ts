// Agent rows, always scoped to the owning organization (another organization's agent is not found).
import { newId } from '../ids.js';
import type { Db } from './db.js';
import { finishPage, pageClause, type Page, type PageRequest } from './page.js';

export interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  language: string | null;
  voice: Record<string, unknown> | null;
  greeting: string | null;
  instructions: string | null;
  brain: Record<string, unknown>;
  intents: unknown[];
  tools: unknown[];
  escalation: Record<string, unknown> | null;
  knowledge_base: unknown[];
  metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** Columns an agent write may set, all JSON-compatible values. */
export interface AgentValues {
  name?: string;
  description?: string | null;
  language?: string | null;
  voice?: Record<string, unknown> | null;
  greeting?: string | null;
  instructions?: string | null;
  brain?: Record<string, unknown>;
  intents?: unknown[];
  tools?: unknown[];
  escalation?: Record<string, unknown> | null;
  knowledge_base?: unknown[];
  metadata?: Record<string, unknown> | null;
}

const COLUMNS = [
  'name',
  'description',
  'language',
  'voice',
  'greeting',
  'instructions',
  'brain',
  'intents',
  'tools',
  'escalation',
  'knowledge_base',
  'metadata',
] as const;
const JSON_COLUMNS = new Set(['voice', 'brain', 'intents', 'tools', 'escalation', 'knowledge_base', 'metadata']);

// node-postgres turns JS arrays into PostgreSQL arrays; jsonb columns need the JSON text.
const param = (column: string, value: unknown): unknown => (JSON_COLUMNS.has(column) && value !== null && value !== undefined ? JSON.stringify(value) : value);

export async function insertAgent(db: Db, orgId: string, values: AgentValues & { name: string }): Promise<AgentRow> {
  const cols = ['id', 'org_id'];
  const params: unknown[] = [newId('agt'), orgId];
  for (const c of COLUMNS) {
    if (values[c] === undefined) continue;
    cols.push(c);
    params.push(param(c, values[c]));
  }
  const { rows } = await db.query<AgentRow>(
    `INSERT INTO agents (${cols.join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`,
    params,
  );
  const row = rows[0];
  if (!row) throw new Error('INSERT agents … RETURNING gave no row');
  return row;
}

export async function getAgent(db: Db, orgId: string, id: string): Promise<AgentRow | null> {
  const { rows } = await db.query<AgentRow>('SELECT * FROM agents WHERE id = $1 AND org_id = $2', [id, orgId]);
  return rows[0] ?? null;
}

export async function agentExists(db: Db, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM agents WHERE id = $1 AND org_id = $2', [id, orgId]);
  return rowCount === 1;
}

export async function updateAgent(db: Db, orgId: string, id: string, values: AgentValues): Promise<AgentRow | null> {
  const sets: string[] = [];
  const params: unknown[] = [id, orgId];
  for (const c of COLUMNS) {
    if (values[c] === undefined) continue;
    params.push(param(c, values[c]));
    sets.push(`${c} = $${params.length}`);
  }
  sets.push('updated_at = now()');
  const { rows } = await db.query<AgentRow>(`UPDATE agents SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2 RETURNING *`, params);
  return rows[0] ?? null;
}

export async function deleteAgent(db: Db, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM agents WHERE id = $1 AND org_id = $2', [id, orgId]);
  return rowCount === 1;
}

export async function listAgents(db: Db, orgId: string, page: PageRequest): Promise<Page<AgentRow>> {
  const clause = pageClause(page, 2);
  const { rows } = await db.query<AgentRow>(`SELECT * FROM agents WHERE org_id = $1 AND ${clause.where} ORDER BY ${clause.order} LIMIT ${page.limit + 1}`, [
    orgId,
    ...clause.params,
  ]);
  return finishPage(page, rows);
}
