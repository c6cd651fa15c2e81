// SIP capture: every SIP message of a call (both directions) goes to a bounded in-memory queue and
// is written to PostgreSQL in batched INSERTs, one at a time, off the call path. When the database
// is slow the queue fills and further messages are dropped and counted: capture never makes a call
// wait. With a HEP collector configured each message is also sent there at once (UDP).
import sip, { type SipMessage } from 'sip';
import type { Logger } from 'pino';
import { insertSipMessages, type Db, type SipMessageRow } from '../../store/index.js';
import type { HepSender } from './hep.js';

export interface SipCaptureOptions {
  db: Db;
  log: Pick<Logger, 'warn'>;
  queueSize: number;
  batchSize: number;
  /** Longest a captured message waits for a batch to fill (default 250 ms). */
  flushMs?: number;
  hep?: HepSender | null;
  hepAgentId?: number;
  /** Test seam: the batch writer (default: insertSipMessages). */
  write?: (rows: SipMessageRow[]) => Promise<void>;
}

export interface CaptureEndpoint {
  address: string;
  port: number;
}

/** Methods that are not part of a call (keep-alive pings, registrations) are not captured. */
const NOT_CALL = new Set(['OPTIONS', 'REGISTER']);

export class SipCapture {
  private queue: SipMessageRow[] = [];
  private writing = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private idle: Array<() => void> = [];
  private lastDropLog = 0;
  /** captured: queued; written: in PostgreSQL; dropped: queue full or write failed; hep*: export. */
  readonly counts = { captured: 0, written: 0, dropped: 0 };

  constructor(private readonly o: SipCaptureOptions) {}

  get hep(): HepSender | null {
    return this.o.hep ?? null;
  }

  /** Records one message; O(1) apart from serializing it, never waits for I/O. */
  record(direction: 'in' | 'out', m: SipMessage, transport: string, local: CaptureEndpoint, remote: CaptureEndpoint): void {
    if (this.closed) return;
    const callId = m.headers['call-id'];
    const cseq = m.headers.cseq;
    if (typeof callId !== 'string' || !callId || !cseq || NOT_CALL.has(cseq.method)) return;
    const raw = sip.stringify(m);
    const src = direction === 'in' ? remote : local;
    const dst = direction === 'in' ? local : remote;
    const at = new Date();
    if (this.o.hep) this.o.hep.send({ at, transport, src, dst, payload: raw, callId, agentId: this.o.hepAgentId ?? 0 });
    if (this.queue.length >= this.o.queueSize) {
      this.dropped(1, 'SIP capture queue full: messages dropped');
      return;
    }
    this.counts.captured++;
    this.queue.push({
      captured_at: at,
      call_id: callId,
      direction,
      transport: transport.toUpperCase(),
      src_address: src.address,
      src_port: src.port,
      dst_address: dst.address,
      dst_port: dst.port,
      method: 'method' in m && m.method ? m.method : null,
      status: 'status' in m ? m.status : null,
      cseq: `${cseq.seq} ${cseq.method}`,
      from_user: userOf(m.headers.from?.uri),
      to_user: userOf(m.headers.to?.uri),
      raw,
    });
    if (this.queue.length >= this.o.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.o.flushMs ?? 250).unref();
  }

  get queued(): number {
    return this.queue.length;
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.writing) void this.drainQueue();
  }

  /** One INSERT in flight at a time: a slow database backs up into the bounded queue, not into the process. */
  private async drainQueue(): Promise<void> {
    this.writing = true;
    const write = this.o.write ?? ((rows: SipMessageRow[]) => insertSipMessages(this.o.db, rows));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.o.batchSize);
      try {
        await write(batch);
        this.counts.written += batch.length;
      } catch (err) {
        this.dropped(batch.length, 'SIP capture write failed: messages dropped', err);
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

  /** Resolves once everything queued so far is written (or dropped). */
  async flush(): Promise<void> {
    this.kick();
    if (!this.writing) return;
    await new Promise<void>((r) => this.idle.push(r));
  }

  /** Writes what is queued (up to `maxMs`), then stops capturing. */
  async close(maxMs = 2000): Promise<void> {
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, maxMs).unref())]);
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.o.hep?.close();
  }
}

function userOf(uri: unknown): string | null {
  const parsed = typeof uri === 'string' ? sip.parseUri(uri) : uri && typeof uri === 'object' ? (uri as { user?: string }) : undefined;
  const u = parsed?.user;
  return u ? decodeUser(u) : null;
}

function decodeUser(u: string): string {
  try {
    return decodeURIComponent(u).split(';')[0] ?? u;
  } catch {
    return u;
  }
}
