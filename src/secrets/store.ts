// Named secrets in PostgreSQL (migration 009), encrypted with config.secretKey before they are
// written. org null = node-wide. Listing returns names and dates only, never values.
import type pg from 'pg';
import { decryptSecret, encryptSecret } from './crypto.js';

type Queryable = Pick<pg.Pool, 'query'>;

export const SECRET_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

export interface SecretInfo {
  org_id: string | null;
  name: string;
  created_at: string;
  updated_at: string;
}

export async function setSecret(db: Queryable, secretKey: string, orgId: string | null, name: string, value: string): Promise<SecretInfo> {
  if (!SECRET_NAME.test(name)) throw new RangeError(`secret name must match ${SECRET_NAME}`);
  const enc = encryptSecret(secretKey, value);
  // The unique index is on an expression (COALESCE(org_id, '')): update first, insert when absent.
  const updated = await db.query<SecretInfo>(
    `UPDATE secrets SET value_enc = $3, updated_at = now() WHERE org_id IS NOT DISTINCT FROM $1 AND name = $2
     RETURNING org_id, name, created_at, updated_at`,
    [orgId, name, enc],
  );
  const row =
    updated.rows[0] ??
    (
      await db.query<SecretInfo>(`INSERT INTO secrets (org_id, name, value_enc) VALUES ($1, $2, $3) RETURNING org_id, name, created_at, updated_at`, [
        orgId,
        name,
        enc,
      ])
    ).rows[0];
  if (!row) throw new Error('secret upsert: neither UPDATE nor INSERT … RETURNING gave a row');
  return present(row);
}

export async function listSecrets(db: Queryable, orgId: string | null): Promise<SecretInfo[]> {
  const { rows } = await db.query<SecretInfo>('SELECT org_id, name, created_at, updated_at FROM secrets WHERE org_id IS NOT DISTINCT FROM $1 ORDER BY name', [
    orgId,
  ]);
  return rows.map(present);
}

export async function deleteSecret(db: Queryable, orgId: string | null, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM secrets WHERE org_id IS NOT DISTINCT FROM $1 AND name = $2', [orgId, name]);
  return (rowCount ?? 0) > 0;
}

export async function getSecret(db: Queryable, secretKey: string, orgId: string | null, name: string): Promise<string | null> {
  const { rows } = await db.query<{ value_enc: string }>('SELECT value_enc FROM secrets WHERE org_id IS NOT DISTINCT FROM $1 AND name = $2', [orgId, name]);
  return rows[0] ? decryptSecret(secretKey, rows[0].value_enc) : null;
}

function present(r: SecretInfo): SecretInfo {
  const iso = (d: unknown): string => (d instanceof Date ? d.toISOString() : String(d));
  return { org_id: r.org_id, name: r.name, created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
}
