// Timed ends (SPEC "Limits"): a dropped socket not reconnected within the grace ends the session
// with `stream_disconnected` (the sessions whose grace runs out together in one transaction); a
// session without audio or messages ends with `inactivity`.
// The limits are shortened here (1 s grace, 3 s inactivity) so the test runs in seconds.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { getSessionRow } from '../../src/store/index.js';
import { createPool } from '../../src/store/index.js';

let t: StreamTestGateway;

beforeAll(async () => {
  t = await startStreamGateway({ overrides: { limits: { reconnectGraceSeconds: 1, inactivitySeconds: 3 } } });
});
afterAll(async () => {
  await t?.stop();
});

describe('timed session ends', () => {
  it('ends with stream_disconnected when nobody reconnects within the grace', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.close();
    await vi.waitFor(async () => expect((await getSessionRow(t.gw.db, id))!.status).toBe('ended'), { timeout: 15_000, interval: 100 });
    expect((await getSessionRow(t.gw.db, id))!.end_reason).toBe('stream_disconnected');
    const { rows } = await t.gw.db.query(`SELECT data FROM webhook_events WHERE type = 'session.ended' AND data->>'id' = $1`, [id]);
    expect(rows[0].data).toMatchObject({ end_reason: 'stream_disconnected' });
    // The sweep closes the live session once its end has committed: the row can show it ended a moment before.
    await vi.waitFor(() => expect(t.registry.get(id)).toBeUndefined(), { timeout: 15_000, interval: 50 });
  });

  it('ends the sessions whose grace runs out together in one transaction, each with its own event', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => t.createSession()));
    const sockets = await Promise.all(sessions.map(({ id, token }) => t.connect(id, token)));
    await Promise.all(sockets.map((s) => s.waitForType('session.ready')));
    await Promise.all(sockets.map((s) => s.close()));
    const ids = sessions.map((s) => s.id);
    const rows = await vi.waitFor(
      async () => {
        const rs = await Promise.all(ids.map((id) => getSessionRow(t.gw.db, id)));
        for (const r of rs) expect(r?.status).toBe('ended');
        return rs;
      },
      { timeout: 15_000, interval: 100 },
    );
    for (const r of rows) expect(r?.end_reason).toBe('stream_disconnected');
    // A transaction's now() is shared: sessions ended one transaction each would show eight ended_at.
    // Eight sockets closing together may straddle one sweep, hence two at most.
    expect(new Set(rows.map((r) => r?.ended_at?.getTime())).size).toBeLessThanOrEqual(2);
    const { rows: events } = await t.gw.db.query(
      `SELECT data->>'id' AS id FROM webhook_events WHERE type = 'session.ended' AND data->>'id' = ANY($1::text[])`,
      [ids],
    );
    expect(events.map((e: { id: string }) => e.id).sort()).toEqual([...ids].sort());
  });

  it('ends a silent connected session with inactivity and tells the socket', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    expect(await s.waitForType('session.ended', 20_000)).toMatchObject({ session_id: id, reason: 'inactivity' });
    expect((await s.closed).code).toBe(1000);
    expect((await getSessionRow(t.gw.db, id))!.end_reason).toBe('inactivity');
  });

  it('a gateway shutting down closes its sockets (1001, or session.ended then 1000) and ends its sessions with node_shutdown', async () => {
    const other = await startStreamGateway();
    const config = other.gw.config;
    const { id, token } = await other.createSession();
    const s = await other.connect(id, token);
    await s.waitForType('session.ready');
    const closed = s.closed;
    // Close the gateway only (stop() would also drop its schema): the row is read afterwards.
    await other.gw.close();
    const { code } = await closed;
    if (code === 1000) expect(s.of('session.ended')[0]).toMatchObject({ reason: 'node_shutdown' });
    else expect(code).toBe(1001);
    const db = createPool(config.databaseUrl, config.databaseSchema, undefined, 1);
    try {
      expect(await getSessionRow(db, id)).toMatchObject({ status: 'ended', end_reason: 'node_shutdown' });
    } finally {
      await db.end();
    }
    await other.stop();
  });
});
