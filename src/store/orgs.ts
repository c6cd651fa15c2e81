// Organizations and API keys: what the operator provisions (`voxbridge admin org|key`).
import { newId, newSecret } from '../ids.js';
import { createHash } from 'node:crypto';
import type { Db } from './db.js';

/** API keys are stored only as their SHA-256 hash. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export interface OrgRecord {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  credits: number;
  credits_used: number;
  max_concurrent_sessions: number;
  rate_limit: number;
  rate_window_seconds: number;
  features: string[];
  allowed_overrides: string[];
  sip_enabled: boolean;
  default_connection_id: string | null;
  created_at: string;
  updated_at: string;
}

export const ORG_FEATURES = ['ai_agent', 'sip', 'help_chat_voice', 'recording'] as const;

export interface CreateOrgInput {
  name: string;
  credits?: number;
  maxConcurrentSessions: number;
  rateLimit: number;
  rateWindowSeconds: number;
  features?: string[];
}

const iso = (row: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
};

export async function createOrg(db: Db, input: CreateOrgInput): Promise<OrgRecord> {
  const { rows } = await db.query(
    `INSERT INTO organizations (id, name, credits, max_concurrent_sessions, rate_limit, rate_window_seconds, features)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [newId('org'), input.name, input.credits ?? 1000, input.maxConcurrentSessions, input.rateLimit, input.rateWindowSeconds, input.features ?? []],
  );
  return iso(rows[0]) as unknown as OrgRecord;
}

export interface UpdateOrgInput {
  status?: 'active' | 'inactive';
  credits?: number;
  features?: string[];
  allowedOverrides?: string[];
  maxConcurrentSessions?: number;
  rateLimit?: number;
  rateWindowSeconds?: number;
  sipEnabled?: boolean;
  defaultConnectionId?: string | null;
}

const ORG_COLUMNS: Record<keyof UpdateOrgInput, string> = {
  status: 'status',
  credits: 'credits',
  features: 'features',
  allowedOverrides: 'allowed_overrides',
  maxConcurrentSessions: 'max_concurrent_sessions',
  rateLimit: 'rate_limit',
  rateWindowSeconds: 'rate_window_seconds',
  sipEnabled: 'sip_enabled',
  defaultConnectionId: 'default_connection_id',
};

/** Applies the given changes; returns null when the organization does not exist. */
export async function updateOrg(db: Db, id: string, changes: UpdateOrgInput): Promise<OrgRecord | null> {
  const sets: string[] = [];
  const values: unknown[] = [id];
  for (const [key, column] of Object.entries(ORG_COLUMNS) as Array<[keyof UpdateOrgInput, string]>) {
    if (changes[key] === undefined) continue;
    values.push(changes[key]);
    sets.push(`${column} = $${values.length}`);
  }
  sets.push('updated_at = now()');
  const { rows } = await db.query(`UPDATE organizations SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, values);
  return rows[0] ? (iso(rows[0]) as unknown as OrgRecord) : null;
}

export interface ApiKeyRecord {
  id: string;
  object: 'api_key';
  org_id: string;
  environment: 'live' | 'test';
  /** The secret, present only in the creation result: it is stored as a SHA-256 hash. */
  key?: string;
  key_hint: string;
  scopes: string[];
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export async function createApiKey(
  db: Db,
  input: { orgId: string; environment: 'live' | 'test'; scopes: string[]; expiresAt?: Date | null },
): Promise<ApiKeyRecord> {
  const key = newSecret(`sk_${input.environment}_`);
  const hint = `${key.slice(0, 12)}…${key.slice(-4)}`;
  const { rows } = await db.query(
    `INSERT INTO api_keys (id, org_id, environment, key_hash, key_hint, scopes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, org_id, environment, key_hint, scopes, expires_at, revoked_at, created_at`,
    [newId('key'), input.orgId, input.environment, hashApiKey(key), hint, input.scopes, input.expiresAt ?? null],
  );
  return { object: 'api_key', ...(iso(rows[0]) as object), key } as ApiKeyRecord;
}

/** Revokes a key; returns null when it does not exist. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, id: string): Promise<ApiKeyRecord | null> {
  const { rows } = await db.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1
     RETURNING id, org_id, environment, key_hint, scopes, expires_at, revoked_at, created_at`,
    [id],
  );
  return rows[0] ? ({ object: 'api_key', ...(iso(rows[0]) as object) } as ApiKeyRecord) : null;
}

/** Whether an organization with this id exists (the CLI checks before it provisions under one). */
export async function orgExists(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM organizations WHERE id = $1', [id]);
  return !!rowCount;
}

/** Whether the API key exists in this organization (another organization's key does not exist for it: the API's 404 rule). */
export async function apiKeyExistsInOrg(db: Db, id: string, orgId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM api_keys WHERE id = $1 AND org_id = $2', [id, orgId]);
  return !!rowCount;
}

/** Every column of an organization as stored (`SELECT *`: later migrations' columns too), timestamps as read. */
export type StoredOrgRow = Omit<OrgRecord, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

/** The organization's row, for the console's cookie sign-in to build the same AuthContext as an API key; null when it does not exist. */
export async function getOrg(db: Db, id: string): Promise<StoredOrgRow | null> {
  const { rows } = await db.query<StoredOrgRow>('SELECT * FROM organizations WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** An API key joined with its organization, as authentication reads it: the key's fields beside every organization column. */
export type ApiKeyWithOrgRow = Omit<OrgRecord, 'created_at' | 'updated_at'> & {
  key_id: string;
  environment: 'live' | 'test';
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
};

export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyWithOrgRow | undefined> {
  const { rows } = await db.query<ApiKeyWithOrgRow>(
    `SELECT k.id AS key_id, k.environment, k.scopes, k.expires_at, k.revoked_at, o.*
       FROM api_keys k JOIN organizations o ON o.id = k.org_id WHERE k.key_hash = $1`,
    [keyHash],
  );
  return rows[0];
}

export interface PostCallPolicy {
  id: string;
  recording_retention_days: number;
  compliance_rules: Record<string, unknown>;
}

/** Sets recording retention and compliance rules; a null field keeps its value. Null when no such organization. */
export async function setPostCallPolicy(
  db: Db,
  id: string,
  changes: { retentionDays: number | null; complianceRules: Record<string, unknown> | null },
): Promise<PostCallPolicy | null> {
  const { rows } = await db.query<PostCallPolicy>(
    `UPDATE organizations SET recording_retention_days = COALESCE($2, recording_retention_days), compliance_rules = COALESCE($3, compliance_rules), updated_at = now()
      WHERE id = $1 RETURNING id, recording_retention_days, compliance_rules`,
    [id, changes.retentionDays, changes.complianceRules],
  );
  return rows[0] ?? null;
}

/** The agent fields a session of this organization may override (empty when it has none or is gone). */
export async function orgAllowedOverrides(db: Db, orgId: string): Promise<string[]> {
  const { rows } = await db.query<{ allowed_overrides: string[] }>('SELECT allowed_overrides FROM organizations WHERE id = $1', [orgId]);
  return rows[0]?.allowed_overrides ?? [];
}
