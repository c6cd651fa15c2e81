// The live session feed behind the console's event streams. Every outbox event naming a session is
// announced by PostgreSQL on console_<schema> (trigger in migration 013), whichever node wrote it, so
// a browser connected to this node follows a session that lives on another one. One LISTEN
// connection per node, opened at the first subscriber; each notification that a subscriber here
// wants is read back (org-scoped) and handed to it.
import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { getOrgEvent, type Db, type OrgEventRow } from '../store/index.js';

/** An outbox event as pushed to a stream (`resync`: events may have been missed, reload). */
export type FeedEvent = OrgEventRow;

type Listener = (e: FeedEvent) => void;

export interface SessionFeedOptions {
  db: Db;
  databaseUrl: string;
  databaseSchema: string;
  logger: FastifyBaseLogger;
}

export class SessionFeed {
  private readonly listeners = new Map<string, Set<Listener>>();
  private client?: pg.Client;
  private connecting?: Promise<void>;
  private closed = false;

  constructor(private readonly o: SessionFeedOptions) {}

  /** Calls `fn` with every event of the session from now on; resolves once listening (no gap after it). */
  async subscribe(orgId: string, sessionId: string, fn: Listener): Promise<() => void> {
    const key = `${orgId} ${sessionId}`;
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(fn);
    const unsubscribe = () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
    try {
      await this.connect();
    } catch (err) {
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.databaseUrl, options: `-c search_path=${this.o.databaseSchema}` });
    client.on('notification', (n) => this.notified(n.payload ?? ''));
    client.on('error', (err) => {
      // Streams stay open; the next subscriber reconnects. Events written meanwhile are missed by
      // the open streams, which the page covers by reloading the transcript when told `resync`.
      this.o.logger.warn({ err }, 'console live feed connection lost');
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      this.broadcastResync();
    });
    await client.connect();
    await client.query(`LISTEN "console_${this.o.databaseSchema}"`);
    if (this.closed) {
      await client.end();
      throw new Error('live feed closed');
    }
    this.client = client;
  }

  private broadcastResync(): void {
    for (const set of this.listeners.values()) for (const fn of set) fn({ id: '', type: 'resync', data: {}, created_at: new Date() });
  }

  private notified(payload: string): void {
    const [orgId, sessionId, eventId] = payload.split(' ');
    if (!orgId || !sessionId || !eventId) return;
    const set = this.listeners.get(`${orgId} ${sessionId}`);
    if (!set || set.size === 0) return;
    getOrgEvent(this.o.db, eventId, orgId)
      .then((event) => {
        if (event) for (const fn of set) fn(event);
      })
      .catch((err: unknown) => this.o.logger.warn({ err, eventId }, 'console live feed could not read an event'));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
