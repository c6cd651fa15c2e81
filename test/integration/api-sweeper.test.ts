// The inactivity sweeper (SPEC "States and transitions": inactivity → ended) on real PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { activateSession } from '../../src/sessions/index.js';
import { touchSession } from '../../src/store/index.js';
import { startInactivitySweeper } from '../../src/jobs/inactivity-sweeper.js';
import { createRedis } from '../../src/coord/redis.js';
import { subscribeSessionCommands, type SessionCommand } from '../../src/coord/session-bus.js';

let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  gw = await startTestGateway();
  org = await gw.createOrg({ changes: { maxConcurrentSessions: 3 } });
});
afterAll(async () => {
  await gw?.stop();
});

const create = async () => (await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' })).body.id as string;
const status = async (id: string) => (await gw.db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [id])).rows[0];

describe('inactivity sweeper', () => {
  it('ends created and active sessions idle past the limit with reason inactivity, and leaves busy ones', async () => {
    const idleCreated = await create();
    const idleActive = await create();
    const busy = await create();
    await activateSession(gw.db, idleActive);
    await gw.db.query(`UPDATE sessions SET last_activity_at = now() - interval '10 seconds' WHERE id = ANY($1)`, [[idleCreated, idleActive, busy]]);
    await touchSession(gw.db, busy);

    const subscriber = createRedis(gw.config.redisUrl, gw.config.redisKeyPrefix);
    const commands: SessionCommand[] = [];
    const unsubscribe = await subscribeSessionCommands(subscriber, gw.config.redisKeyPrefix, (c) => commands.push(c));
    const sweeper = startInactivitySweeper({
      db: gw.db,
      redis: gw.redis,
      redisKeyPrefix: gw.config.redisKeyPrefix,
      inactivitySeconds: 5,
      intervalMs: 60_000,
      logger: gw.logger,
    });
    try {
      const ended = await sweeper.sweep();
      expect(ended.sort()).toEqual([idleCreated, idleActive].sort());
      expect(await status(idleCreated)).toEqual({ status: 'ended', end_reason: 'inactivity' });
      expect(await status(idleActive)).toEqual({ status: 'ended', end_reason: 'inactivity' });
      expect(await status(busy)).toEqual({ status: 'created', end_reason: null });
      const { rows } = await gw.db.query(`SELECT data FROM webhook_events WHERE type = 'session.ended' AND data->>'id' = ANY($1)`, [[idleCreated, idleActive]]);
      expect(rows.map((r) => r.data.end_reason)).toEqual(['inactivity', 'inactivity']);
      // The owning node is told to close its live session.
      await expect.poll(() => commands.filter((c) => c.kind === 'end').length, { timeout: 10_000 }).toBe(2);
      expect(commands.every((c) => c.kind === 'end' && c.reason === 'inactivity')).toBe(true);
      // A second pass finds nothing; ended sessions free their concurrency slots.
      expect(await sweeper.sweep()).toEqual([]);
      expect((await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' })).status).toBe(201);
    } finally {
      await sweeper.stop();
      await unsubscribe();
      subscriber.disconnect();
    }
  });

  it('runs on its own timer', async () => {
    const id = await create();
    await gw.db.query(`UPDATE sessions SET last_activity_at = now() - interval '1 hour' WHERE id = $1`, [id]);
    const sweeper = startInactivitySweeper({
      db: gw.db,
      redis: gw.redis,
      redisKeyPrefix: gw.config.redisKeyPrefix,
      inactivitySeconds: 1,
      intervalMs: 50,
      logger: gw.logger,
    });
    try {
      await expect.poll(async () => (await status(id)).status, { timeout: 15_000, interval: 50 }).toBe('ended');
      expect((await status(id)).end_reason).toBe('inactivity');
    } finally {
      await sweeper.stop();
      await sweeper.stop();
    }
  });
});
