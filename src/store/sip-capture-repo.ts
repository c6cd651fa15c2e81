// SIP capture rows (migration 007): batched inserts from the capture writer, the trace of one
// call, a search by Call-ID / number / session, and the retention purge.
import type { DbClient } from './db.js';

export interface SipMessageRow {
  captured_at: Date;
  call_id: string;
  direction: 'in' | 'out';
  transport: string;
  src_address: string;
  src_port: number;
  dst_address: string;
  dst_port: number;
  method: string | null;
  status: number | null;
  cseq: string;
  from_user: string | null;
  to_user: string | null;
  raw: string;
}

/** One INSERT for the whole batch (arrays unnested server-side). */
export async function insertSipMessages(db: DbClient, rows: SipMessageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof SipMessageRow>(k: K): SipMessageRow[K][] => rows.map((r) => r[k]);
  await db.query(
    `INSERT INTO sip_messages (captured_at, call_id, direction, transport, src_address, src_port, dst_address, dst_port, method, status, cseq, from_user, to_user, raw)
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[])`,
    [
      col('captured_at'),
      col('call_id'),
      col('direction'),
      col('transport'),
      col('src_address'),
      col('src_port'),
      col('dst_address'),
      col('dst_port'),
      col('method'),
      col('status'),
      col('cseq'),
      col('from_user'),
      col('to_user'),
      col('raw'),
    ],
  );
}

/** Every captured message of one call, in capture order. */
export async function getSipTrace(db: DbClient, callId: string): Promise<SipMessageRow[]> {
  const { rows } = await db.query<SipMessageRow>(
    `SELECT captured_at, call_id, direction, transport, src_address, src_port, dst_address, dst_port, method, status, cseq, from_user, to_user, raw
       FROM sip_messages WHERE call_id = $1 ORDER BY captured_at, id`,
    [callId],
  );
  return rows;
}

export interface SipCallSummary {
  call_id: string;
  first_at: Date;
  last_at: Date;
  messages: number;
  from_user: string | null;
  to_user: string | null;
  session_id: string | null;
}

/**
 * Captured calls, newest first: by Call-ID, by a number (From or To user part, with or without
 * '+'), or by session (through the `calls` rows of the session).
 */
export async function searchSipCalls(db: DbClient, q: { callId?: string; number?: string; sessionId?: string; limit?: number }): Promise<SipCallSummary[]> {
  const where: string[] = [];
  const args: unknown[] = [];
  if (q.callId) {
    args.push(q.callId);
    where.push(`m.call_id = $${args.length}`);
  }
  if (q.number) {
    const bare = q.number.replace(/^\+/, '');
    args.push([bare, `+${bare}`]);
    where.push(`(m.from_user = ANY($${args.length}) OR m.to_user = ANY($${args.length}))`);
  }
  if (q.sessionId) {
    args.push(q.sessionId);
    where.push(`m.call_id IN (SELECT call_sid FROM calls WHERE session_id = $${args.length})`);
  }
  args.push(Math.min(Math.max(q.limit ?? 50, 1), 500));
  const { rows } = await db.query<SipCallSummary & { messages: string }>(
    `SELECT m.call_id, min(m.captured_at) AS first_at, max(m.captured_at) AS last_at, count(*) AS messages,
            (array_agg(m.from_user ORDER BY m.captured_at, m.id))[1] AS from_user,
            (array_agg(m.to_user ORDER BY m.captured_at, m.id))[1] AS to_user,
            (SELECT c.session_id FROM calls c WHERE c.call_sid = m.call_id) AS session_id
       FROM sip_messages m
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      GROUP BY m.call_id ORDER BY max(m.captured_at) DESC LIMIT $${args.length}`,
    args,
  );
  return rows.map((r) => ({ ...r, messages: Number(r.messages) }));
}

/** Deletes up to `batch` messages captured more than `hours` ago; returns how many. */
export async function purgeSipMessages(db: DbClient, hours: number, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM sip_messages WHERE id IN (
       SELECT id FROM sip_messages WHERE captured_at < now() - make_interval(hours => $1) ORDER BY captured_at LIMIT $2)`,
    [hours, batch],
  );
  return rowCount ?? 0;
}
