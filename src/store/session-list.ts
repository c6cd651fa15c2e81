// The console's sessions list (GET /console/api/sessions): one organization's sessions, keyset-paged
// on the time-ordered id (index sessions_org_id, migration 013), with optional filters.
import type { Db } from './db.js';
import { finishPage, pageClause, type Page, type PageRequest } from './page.js';
import type { SessionView } from './sessions-repo.js';

export interface SessionFilter {
  status?: 'created' | 'active' | 'ended';
  mode?: string;
  /** Inclusive lower bound on created_at. */
  createdAfter?: Date;
  /** Exclusive upper bound on created_at. */
  createdBefore?: Date;
  phoneNumber?: string;
}

export type ListedSession = SessionView & { end_reason: string | null };

export async function listSessions(db: Db, orgId: string, filter: SessionFilter, page: PageRequest): Promise<Page<ListedSession>> {
  const params: unknown[] = [orgId];
  const where = ['org_id = $1'];
  const add = (sql: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(sql(params.length));
  };
  if (filter.status) add((n) => `status = $${n}`, filter.status);
  if (filter.mode) add((n) => `mode = $${n}`, filter.mode);
  if (filter.createdAfter) add((n) => `created_at >= $${n}`, filter.createdAfter);
  if (filter.createdBefore) add((n) => `created_at < $${n}`, filter.createdBefore);
  if (filter.phoneNumber) add((n) => `phone_number = $${n}`, filter.phoneNumber);
  const clause = pageClause(page, params.length + 1);
  const { rows } = await db.query<ListedSession>(
    `SELECT id, org_id, status, mode, configuration_mode, source_language, target_language, provider, phone_number,
            recording, metadata, duration_seconds, created_at, started_at, ended_at, end_reason
       FROM sessions WHERE ${where.join(' AND ')} AND ${clause.where} ORDER BY ${clause.order} LIMIT ${page.limit + 1}`,
    [...params, ...clause.params],
  );
  return finishPage(page, rows);
}
