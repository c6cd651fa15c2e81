// Timed ends (SPEC "Limits"): a dropped socket not reconnected within the grace ends the session
// with `stream_disconnected`; a session without audio or messages ends with `inactivity`.
// The limits are shortened here (1 s grace, 3 s inactivity) so the test runs in seconds.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { getSessionRow } from '../../src/sessions/index.js';

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
    expect(t.registry.get(id)).toBeUndefined();
  });

  it('ends a silent connected session with inactivity and tells the socket', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    expect(await s.waitForType('session.ended', 20_000)).toMatchObject({ session_id: id, reason: 'inactivity' });
    expect((await s.closed).code).toBe(1000);
    expect((await getSessionRow(t.gw.db, id))!.end_reason).toBe('inactivity');
  });
});
