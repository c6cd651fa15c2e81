// Console users in PostgreSQL: organization users (owner, developer, viewer) and gateway operators.
// Passwords are argon2id hashes (@node-rs/argon2); a user without one signs in only after using
// their one-time set-password link.
import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { newId } from '../ids.js';
import type { Db } from '../store/index.js';

export const ORG_ROLES = ['owner', 'developer', 'viewer'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export type ConsoleRole = OrgRole | 'operator';

export interface ConsoleUser {
  id: string;
  org_id: string | null;
  email: string;
  role: ConsoleRole;
  created_at: string;
  has_password: boolean;
}

interface UserRow {
  id: string;
  org_id: string | null;
  email: string;
  role: ConsoleRole;
  password_hash: string | null;
  created_at: Date;
}

const SET_PASSWORD_TTL_MS = 7 * 24 * 3600 * 1000;
const COLUMNS = 'id, org_id, email, role, password_hash, created_at';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function present(row: UserRow): ConsoleUser {
  return {
    id: row.id,
    org_id: row.org_id,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    has_password: row.password_hash !== null,
  };
}

let decoy: Promise<string> | undefined;
const timingDecoy = (): Promise<string> => (decoy ??= hash(randomBytes(16).toString('hex')));

export class EmailTakenError extends Error {}

export interface CreatedUser {
  user: ConsoleUser;
  /** Present when no password was given: the one-time token of the set-password link. */
  setPasswordToken?: string;
}

export async function createConsoleUser(db: Db, input: { orgId: string | null; email: string; role: ConsoleRole; password?: string }): Promise<CreatedUser> {
  const token = input.password === undefined ? randomBytes(24).toString('base64url') : undefined;
  const passwordHash = input.password === undefined ? null : await hash(input.password);
  try {
    const { rows } = await db.query<UserRow>(
      `INSERT INTO console_users (id, org_id, email, role, password_hash, set_password_token_hash, set_password_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [
        newId('usr'),
        input.orgId,
        input.email.trim(),
        input.role,
        passwordHash,
        token ? sha256(token) : null,
        token ? new Date(Date.now() + SET_PASSWORD_TTL_MS) : null,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error('INSERT console_users … RETURNING gave no row');
    return { user: present(row), setPasswordToken: token };
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new EmailTakenError(input.email);
    throw err;
  }
}

/** Checks an email and password; null when either is wrong (the caller does not say which). */
export async function verifyConsoleUser(db: Db, email: string, password: string): Promise<ConsoleUser | null> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM console_users WHERE lower(email) = lower($1)`, [email.trim()]);
  const row = rows[0];
  if (!row?.password_hash) {
    // Same work as a real check, so response time does not tell which emails have accounts.
    await verify(await timingDecoy(), password).catch(() => false);
    return null;
  }
  return (await verify(row.password_hash, password)) ? present(row) : null;
}

export async function getConsoleUser(db: Db, id: string): Promise<ConsoleUser | null> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM console_users WHERE id = $1`, [id]);
  return rows[0] ? present(rows[0]) : null;
}

export async function listOrgUsers(db: Db, orgId: string): Promise<ConsoleUser[]> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM console_users WHERE org_id = $1 ORDER BY id`, [orgId]);
  return rows.map(present);
}

/** Uses a one-time set-password token; returns the user, or null when the token is unknown or expired. */
export async function setPasswordWithToken(db: Db, token: string, password: string): Promise<ConsoleUser | null> {
  const passwordHash = await hash(password);
  const { rows } = await db.query<UserRow>(
    `UPDATE console_users SET password_hash = $2, set_password_token_hash = NULL, set_password_expires_at = NULL
      WHERE set_password_token_hash = $1 AND set_password_expires_at > now() RETURNING ${COLUMNS}`,
    [sha256(token), passwordHash],
  );
  return rows[0] ? present(rows[0]) : null;
}

export function setPasswordLink(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/$/, '')}/console/set-password#token=${token}`;
}
