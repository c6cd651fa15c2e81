// Ending sessions in a batch (sessions/lifecycle.ts endSessions), against PostgreSQL and Redis: the
// reconnect-grace sweep, the inactivity check and a node shutting down end many sessions together.
// - every session of the batch ends with its own reason, duration, usage row and `session.ended`
//   (recording and transcript figures its own), and `transcript.ready` only where there is a transcript;
// - the batch is one transaction: every row shares one ended_at;
// - a session already ended keeps its first end (no second event, no second bus command); an id
//   that does not exist, or belongs to another organization when one is named, is left out;
// - each session ended now is announced once on the session bus, with its reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { endSession, endSessions, type LifecycleDeps } from '../../src/sessions/index.js';
import { createOrg, createPool, getSessionRow, insertTranscriptTurn, migrate, type Db } from '../../src/store/index.js';
import { createRedis } from '../../src/coord/redis.js';
import { subscribeSessionCommands, type SessionCommand } from '../../src/coord/index.js';
import { dropTestState, testConfig, uniqueName } from '../helpers/gateway.js';

const config = testConfig();
let db: Db;
let redis: Redis;
let subscriber: Redis;
let deps: LifecycleDeps;
let orgId: string;
let otherOrgId: string;
const commands: SessionCommand[] = [];
let unsubscribe: () => Promise<void>;

beforeAll(async () => {
  await migrate(config.databaseUrl, config.databaseSchema);
  db = createPool(config.databaseUrl, config.databaseSchema, undefined, 4);
  redis = createRedis(config.redisUrl, '');
  subscriber = redis.duplicate();
  unsubscribe = await subscribeSessionCommands(subscriber, config.redisKeyPrefix, (cmd) => commands.push(cmd));
  deps = { db, redis, redisKeyPrefix: config.redisKeyPrefix };
  const org = { maxConcurrentSessions: 100, rateLimit: 1000, rateWindowSeconds: 60 };
  orgId = (await createOrg(db, { name: uniqueName('org'), ...org })).id;
  otherOrgId = (await createOrg(db, { name: uniqueName('org'), ...org })).id;
}, 60_000);
afterAll(async () => {
  await unsubscribe?.();
  subscriber?.disconnect();
  redis?.disconnect();
  await db?.end();
  await dropTestState(config);
});

async function session(o: { org?: string; status?: 'created' | 'active' } = {}): Promise<string> {
  const id = `sess_${uniqueName('t')}`;
  await db.query(
    `INSERT INTO sessions (id, org_id, status, mode, audio, voice, recording, started_at, created_at)
     VALUES ($1, $2, $3, 'assistive_translation', '{}', '{}', '{"enabled":false}',
             CASE WHEN $3 = 'active' THEN now() - interval '30 seconds' END, now() - interval '40 seconds')`,
    [id, o.org ?? orgId, o.status ?? 'active'],
  );
  return id;
}

async function eventsOf(ids: string[]): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const { rows } = await db.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM webhook_events WHERE type IN ('session.ended', 'transcript.ready')
       AND COALESCE(data->>'id', data->>'session_id') = ANY($1::text[]) ORDER BY id`,
    [ids],
  );
  return rows;
}

const commandsFor = (id: string) => commands.flatMap((c) => (c.kind === 'end' && c.sessionId === id ? [c] : []));

describe('endSessions', () => {
  it('ends each session of the batch with its own reason and figures, in one transaction', async () => {
    const talked = await session();
    const silent = await session();
    const neverStarted = await session({ status: 'created' });
    await insertTranscriptTurn(db, {
      sessionId: talked,
      orgId,
      sequence: 1,
      speaker: 'customer',
      language: 'en',
      text: 'my order never arrived',
      translation: null,
      confidence: 0.9,
      startTime: 1,
      endTime: 2.5,
    });
    for (const [channel, duration] of [
      ['agent', 12],
      ['mixed', 30],
    ] as const) {
      await db.query(
        `INSERT INTO recordings (id, session_id, org_id, channel, status, format, wav_path, capture_done, message, duration)
         VALUES ($1, $2, $3, $4, 'processing', 'mp3', '/tmp/x.wav', true, '', $5)`,
        [`rec_${uniqueName(channel)}`, silent, orgId, channel, duration],
      );
    }

    const ended = await endSessions(deps, [
      { id: talked, reason: 'call_disconnected' },
      { id: silent, reason: 'stream_disconnected' },
      { id: neverStarted, reason: 'inactivity' },
    ]);

    expect([...ended.keys()].sort()).toEqual([talked, silent, neverStarted].sort());
    const rows = await Promise.all([talked, silent, neverStarted].map((id) => getSessionRow(db, id)));
    expect(rows.map((r) => [r?.status, r?.end_reason])).toEqual([
      ['ended', 'call_disconnected'],
      ['ended', 'stream_disconnected'],
      ['ended', 'inactivity'],
    ]);
    // One transaction: now() is the same for every row.
    expect(new Set(rows.map((r) => r?.ended_at?.getTime())).size).toBe(1);
    // Billed from activation, or from creation when the session never started.
    expect(rows[0]?.duration_seconds).toBeGreaterThanOrEqual(30);
    expect(rows[0]?.duration_seconds).toBeLessThan(40);
    expect(rows[2]?.duration_seconds).toBeGreaterThanOrEqual(40);
    const { rows: usage } = await db.query<{ session_id: string; seconds: number }>(
      'SELECT session_id, seconds FROM session_usage WHERE session_id = ANY($1::text[])',
      [[talked, silent, neverStarted]],
    );
    expect(usage).toHaveLength(3);

    const events = await eventsOf([talked, silent, neverStarted]);
    const endedOf = (id: string) => events.find((e) => e.type === 'session.ended' && e.data.id === id)?.data;
    expect(endedOf(talked)).toMatchObject({ end_reason: 'call_disconnected', transcript: { available: true, word_count: 4 }, recording: null });
    expect(endedOf(silent)).toMatchObject({ end_reason: 'stream_disconnected', transcript: { available: false, word_count: 0 } });
    expect((endedOf(silent)?.recording as { duration: number }).duration).toBe(30); // the mixed one
    expect(endedOf(neverStarted)).toMatchObject({ end_reason: 'inactivity', started_at: null });
    const ready = events.filter((e) => e.type === 'transcript.ready');
    expect(ready.map((e) => e.data)).toEqual([expect.objectContaining({ session_id: talked, word_count: 4, segment_count: 1, languages: ['en'] })]);
    // session.ended comes before transcript.ready (outbox order is delivery order per session).
    expect(events.filter((e) => e.data.id === talked || e.data.session_id === talked).map((e) => e.type)).toEqual(['session.ended', 'transcript.ready']);
    await expect
      .poll(() => [talked, silent, neverStarted].map((id) => commandsFor(id).map((c) => c.reason)))
      .toEqual([['call_disconnected'], ['stream_disconnected'], ['inactivity']]);
  });

  it("keeps an ended session's first end, leaves out unknown and foreign ids, and takes an id's first reason", async () => {
    const first = await session();
    await endSession(deps, first, 'api_request');
    const twice = await session();
    const foreign = await session({ org: otherOrgId });
    await expect.poll(() => commandsFor(first).length).toBe(1);

    const ended = await endSessions(
      deps,
      [
        { id: first, reason: 'call_disconnected' },
        { id: twice, reason: 'inactivity' },
        { id: twice, reason: 'node_shutdown' },
        { id: foreign, reason: 'inactivity' },
        { id: 'sess_missing', reason: 'inactivity' },
      ],
      orgId,
    );

    expect(ended.get(first)).toMatchObject({ endedNow: false, row: { end_reason: 'api_request' } });
    expect(ended.get(twice)).toMatchObject({ endedNow: true, row: { end_reason: 'inactivity' } });
    expect(ended.has(foreign)).toBe(false);
    expect(ended.has('sess_missing')).toBe(false);
    expect((await getSessionRow(db, foreign))?.status).toBe('active');
    const events = await eventsOf([first, twice]);
    expect(events.map((e) => [e.data.id, e.data.end_reason])).toEqual([
      [first, 'api_request'],
      [twice, 'inactivity'],
    ]);
    await expect.poll(() => commandsFor(twice).length).toBe(1);
    expect(commandsFor(first)).toHaveLength(1);
  });

  it('returns null from endSession for a session that does not exist', async () => {
    expect(await endSession(deps, 'sess_missing', 'api_request')).toBeNull();
  });
});
