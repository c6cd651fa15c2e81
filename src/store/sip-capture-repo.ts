// SIP capture rows (migration 015): batched inserts from the capture writer, the trace of one
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

/**
 * Captured messages column by column (all arrays of one length): what the capture gathers and one
 * INSERT writes, without an object per message on the call path.
 */
export interface SipMessageBatch {
  /** Capture time, ms since the epoch. */
  capturedAtMs: number[];
  callId: string[];
  direction: Array<'in' | 'out'>;
  transport: string[];
  srcAddress: string[];
  srcPort: number[];
  dstAddress: string[];
  dstPort: number[];
  method: Array<string | null>;
  status: Array<number | null>;
  cseq: string[];
  fromUser: Array<string | null>;
  toUser: Array<string | null>;
  raw: string[];
}

export function emptySipMessageBatch(): SipMessageBatch {
  return {
    capturedAtMs: [],
    callId: [],
    direction: [],
    transport: [],
    srcAddress: [],
    srcPort: [],
    dstAddress: [],
    dstPort: [],
    method: [],
    status: [],
    cseq: [],
    fromUser: [],
    toUser: [],
    raw: [],
  };
}

/** The batch as rows (tests and tools; the writer never builds them). */
export function sipMessageBatchRows(b: SipMessageBatch): SipMessageRow[] {
  return b.raw.map((raw, i) => ({
    captured_at: new Date(b.capturedAtMs[i] ?? 0),
    call_id: b.callId[i] ?? '',
    direction: b.direction[i] ?? 'in',
    transport: b.transport[i] ?? '',
    src_address: b.srcAddress[i] ?? '',
    src_port: b.srcPort[i] ?? 0,
    dst_address: b.dstAddress[i] ?? '',
    dst_port: b.dstPort[i] ?? 0,
    method: b.method[i] ?? null,
    status: b.status[i] ?? null,
    cseq: b.cseq[i] ?? '',
    from_user: b.fromUser[i] ?? null,
    to_user: b.toUser[i] ?? null,
    raw,
  }));
}

/**
 * A PostgreSQL array literal of text: each element double-quoted with only `\` and `"` escaped
 * (string replaces, no per-character regex), NULL bare. pg's own array encoding runs two regex
 * replaces over every element; for a batch of raw SIP messages that was most of the writer's time.
 */
export function textArrayLiteral(values: ReadonlyArray<string | null>): string {
  let s = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) s += ',';
    if (v === null || v === undefined) {
      s += 'NULL';
      continue;
    }
    let e = v.includes('\\') ? v.replaceAll('\\', '\\\\') : v;
    if (e.includes('"')) e = e.replaceAll('"', '\\"');
    s += `"${e}"`;
  }
  return `${s}}`;
}

function intArrayLiteral(values: ReadonlyArray<number | null>): string {
  let s = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) s += ',';
    s += v === null || v === undefined ? 'NULL' : String(Math.trunc(v));
  }
  return `${s}}`;
}

// Named: parsed and planned once per connection, then only bound. Times travel as epoch ms (no
// date formatting in JavaScript, exact integer arithmetic in SQL).
const INSERT_BATCH = {
  name: 'voxbridge_sip_capture_insert',
  text: `INSERT INTO sip_messages (captured_at, call_id, direction, transport, src_address, src_port, dst_address, dst_port, method, status, cseq, from_user, to_user, raw)
     SELECT timestamptz 'epoch' + t * interval '1 millisecond', c, d, tr, sa, sp, da, dp, m, st, cs, fu, tu, r
       FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS u(t, c, d, tr, sa, sp, da, dp, m, st, cs, fu, tu, r)`,
};

/** One INSERT for the whole batch (arrays unnested server-side). */
export async function insertSipMessageBatch(db: DbClient, b: SipMessageBatch): Promise<void> {
  if (b.raw.length === 0) return;
  await db.query({
    ...INSERT_BATCH,
    values: [
      intArrayLiteral(b.capturedAtMs),
      textArrayLiteral(b.callId),
      textArrayLiteral(b.direction),
      textArrayLiteral(b.transport),
      textArrayLiteral(b.srcAddress),
      intArrayLiteral(b.srcPort),
      textArrayLiteral(b.dstAddress),
      intArrayLiteral(b.dstPort),
      textArrayLiteral(b.method),
      intArrayLiteral(b.status),
      textArrayLiteral(b.cseq),
      textArrayLiteral(b.fromUser),
      textArrayLiteral(b.toUser),
      textArrayLiteral(b.raw),
    ],
  });
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
