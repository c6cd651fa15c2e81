// SIP capture: every SIP message of a call (both directions) is written to PostgreSQL off the call
// path, as it was on the wire. The call path only appends the message's text (which the stack
// already has: as framed when received, as serialized for the socket when sent) and a few header
// fields of the parsed message to column arrays; a batch is written when it holds `batchSize` messages or
// `flushMs` after its first one, as one prepared multi-row INSERT, one at a time, on a connection of
// its own (see writerPool). When the database
// is slow the bounded queue fills and further messages are dropped and counted: capture never makes
// a call wait and never grows without bound. With a HEP collector configured each message is also
// sent there at once (UDP).
import pg from 'pg';
import type { SipMessage } from 'sip';
import type { Logger } from 'pino';
import { emptySipMessageBatch, insertSipMessageBatch, type Db, type SipMessageBatch } from '../../store/index.js';
import type { HepSender } from './hep.js';

export interface SipCaptureOptions {
  db: Db;
  log: Pick<Logger, 'warn'>;
  /** Messages waiting for the database (not counting the batch being written); beyond it they are dropped. */
  queueSize: number;
  batchSize: number;
  /** Longest a captured message waits for its batch to fill (default 250 ms). */
  flushMs?: number;
  hep?: HepSender | null;
  hepAgentId?: number;
  /** Test seam: the batch writer (default: insertSipMessageBatch). */
  write?: (batch: SipMessageBatch) => Promise<void>;
}

export interface CaptureEndpoint {
  address: string;
  port: number;
}

/** Methods that are not part of a call (keep-alive pings, registrations) are not captured. */
const NOT_CALL = new Set(['OPTIONS', 'REGISTER']);

export class SipCapture {
  /** The batch being gathered, and the batches due for writing (full, or their time is up), oldest first. */
  private filling: SipMessageBatch = emptySipMessageBatch();
  private readonly due: SipMessageBatch[] = [];
  private waiting = 0;
  private writing = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private idle: Array<() => void> = [];
  private lastDropLog = 0;
  private writer: pg.Pool | null = null;
  private readonly writeBatch: (batch: SipMessageBatch) => Promise<void>;
  /** captured: queued; written: in PostgreSQL; dropped: queue full or write failed; hep*: export. */
  readonly counts = { captured: 0, written: 0, dropped: 0 };

  constructor(private readonly o: SipCaptureOptions) {
    this.writeBatch = o.write ?? ((batch) => insertSipMessageBatch(this.writerPool(), batch));
  }

  /**
   * Capture writes on one connection of its own, not the call path's pool: under load a batch then
   * never waits in the pool's queue, and call set-up never waits for a connection a batch holds (at
   * 100 setups/s on the loaded machine batches waited up to 3.5 s for a pooled connection while
   * calls queued behind them). Its commits do not wait for the disk (synchronous_commit off):
   * capture is best-effort already, and a crash loses at most the last moments of it.
   */
  private writerPool(): pg.Pool {
    if (!this.writer) {
      const base = this.o.db.options;
      this.writer = new pg.Pool({ ...base, max: 1, options: `${base.options ?? ''} -c synchronous_commit=off`.trim() });
      this.writer.on('error', (err) => this.o.log.warn({ err }, 'SIP capture database connection failed'));
    }
    return this.writer;
  }

  get hep(): HepSender | null {
    return this.o.hep ?? null;
  }

  /** Records one message (`m` parsed, `raw` its wire text): appends to column arrays; never waits for I/O. */
  record(direction: 'in' | 'out', m: SipMessage, raw: string, transport: string, local: CaptureEndpoint, remote: CaptureEndpoint): void {
    if (this.closed) return;
    const h = m.headers;
    const callId = h['call-id'];
    const cseq = h.cseq;
    if (typeof callId !== 'string' || !callId || !cseq || NOT_CALL.has(cseq.method)) return;
    const src = direction === 'in' ? remote : local;
    const dst = direction === 'in' ? local : remote;
    const at = Date.now();
    if (this.o.hep) this.o.hep.send({ at: new Date(at), transport, src, dst, payload: raw, callId, agentId: this.o.hepAgentId ?? 0 });
    if (this.waiting >= this.o.queueSize) {
      this.dropped(1, 'SIP capture queue full: messages dropped');
      return;
    }
    this.counts.captured++;
    this.waiting++;
    const b = this.filling;
    b.capturedAtMs.push(at);
    b.callId.push(callId);
    b.direction.push(direction);
    b.transport.push(transport.toUpperCase());
    b.srcAddress.push(src.address);
    b.srcPort.push(src.port);
    b.dstAddress.push(dst.address);
    b.dstPort.push(dst.port);
    b.method.push('method' in m && m.method ? m.method : null);
    b.status.push('status' in m ? m.status : null);
    b.cseq.push(`${cseq.seq} ${cseq.method}`);
    b.fromUser.push(userOf(h.from?.uri));
    b.toUser.push(userOf(h.to?.uri));
    b.raw.push(raw);
    if (b.raw.length >= this.o.batchSize) this.seal();
    else if (b.raw.length === 1) this.timer = setTimeout(() => this.seal(), this.o.flushMs ?? 250).unref();
  }

  /** Messages waiting for the database (the batch being written not included). */
  get queued(): number {
    return this.waiting;
  }

  /** The batch being gathered becomes due (full, its time is up, or a flush), and the writer starts. */
  private seal(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.filling.raw.length > 0) {
      this.due.push(this.filling);
      this.filling = emptySipMessageBatch();
    }
    if (!this.writing && this.due.length > 0) void this.drain();
  }

  /** One INSERT in flight at a time: a slow database backs up into the bounded queue, not into the process. */
  private async drain(): Promise<void> {
    this.writing = true;
    for (let batch = this.due.shift(); batch; batch = this.due.shift()) {
      const n = batch.raw.length;
      this.waiting -= n;
      try {
        await this.writeBatch(batch);
        this.counts.written += n;
      } catch (err) {
        this.dropped(n, 'SIP capture write failed: messages dropped', err);
      }
    }
    this.writing = false;
    for (const f of this.idle.splice(0)) f();
  }

  private dropped(n: number, msg: string, err?: unknown): void {
    this.counts.dropped += n;
    const now = Date.now();
    if (now - this.lastDropLog > 10_000) {
      this.lastDropLog = now;
      this.o.log.warn({ dropped: this.counts.dropped, err }, msg);
    }
  }

  /** Resolves once everything captured so far is written (or dropped). */
  async flush(): Promise<void> {
    this.seal();
    if (!this.writing) return;
    await new Promise<void>((r) => this.idle.push(r));
  }

  /** Writes what is queued (up to `maxMs`), then stops capturing. */
  async close(maxMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, maxMs).unref()))]);
    clearTimeout(timer);
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.o.hep?.close();
    await this.writer?.end().catch(() => undefined);
  }
}

/**
 * The user part of a sip:/sips: URI (percent-decoded, user parameters dropped), or null: found by
 * position, without parsing the whole URI (this runs for From and To of every captured message).
 */
export function userOf(uri: unknown): string | null {
  if (uri && typeof uri === 'object') {
    const u = (uri as { user?: unknown }).user;
    return typeof u === 'string' && u ? decodeUser(u) : null;
  }
  if (typeof uri !== 'string') return null;
  const start = uri.startsWith('sip:') ? 4 : uri.startsWith('sips:') ? 5 : -1;
  if (start < 0) return null;
  const at = uri.indexOf('@', start);
  if (at <= start) return null;
  // user[:password]@host: the user part ends at the first ':'.
  const colon = uri.indexOf(':', start);
  const u = uri.slice(start, colon >= 0 && colon < at ? colon : at);
  return u ? decodeUser(u) : null;
}

function decodeUser(u: string): string {
  if (!u.includes('%')) return u.includes(';') ? (u.split(';')[0] ?? u) : u;
  try {
    return decodeURIComponent(u).split(';')[0] ?? u;
  } catch {
    return u;
  }
}
