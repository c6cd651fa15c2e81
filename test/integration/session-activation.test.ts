// created → active on first audio, batched: every first audio of one loop turn is one statement, each
// activated session gets its own `session.started` event with its own row's data, and a session no
// longer in `created` is left alone (no second event, no second started_at).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { activateSession, activateSessions } from '../../src/sessions/index.js';
import { TurnBatch, getSessionRow } from '../../src/store/index.js';
import { startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => {
  await fx?.stop();
});

async function startedEvents(ids: string[]): Promise<Array<{ id: string; started_at: string; status: string }>> {
  const { rows } = await fx.db.query<{ data: { id: string; started_at: string; status: string } }>(
    `SELECT data FROM webhook_events WHERE type = 'session.started' AND data->>'id' = ANY($1::text[])`,
    [ids],
  );
  return rows.map((r) => r.data);
}

describe('session activation', () => {
  it('activates several sessions together, one session.started each with its own row, skipping those not in created', async () => {
    const fresh = [await fx.createSession({}), await fx.createSession({}), await fx.createSession({})];
    const alreadyActive = await fx.createSession({});
    const ended = await fx.createSession({ status: 'ended' });
    const first = await activateSession(fx.db, alreadyActive);
    expect(first?.status).toBe('active');

    const rows = await activateSessions(fx.db, [...fresh, alreadyActive, ended]);

    expect(rows.map((r) => r.id).sort()).toEqual([...fresh].sort());
    for (const r of rows) expect(r.status).toBe('active');
    const events = await startedEvents([...fresh, alreadyActive, ended]);
    expect(events.map((e) => e.id).sort()).toEqual([...fresh, alreadyActive].sort());
    for (const id of fresh) {
      const row = await getSessionRow(fx.db, id);
      const event = events.find((e) => e.id === id);
      expect(event).toMatchObject({ status: 'active', started_at: row?.started_at?.toISOString() });
    }
    // The already active session kept its first activation.
    expect((await getSessionRow(fx.db, alreadyActive))?.started_at?.getTime()).toBe(first?.started_at?.getTime());
    expect((await getSessionRow(fx.db, ended))?.status).toBe('ended');
  });

  it('writes the first audio of one loop turn in one statement', async () => {
    const ids = [await fx.createSession({}), await fx.createSession({}), await fx.createSession({}), await fx.createSession({})];
    const batch = new TurnBatch((batchIds: string[]) => activateSessions(fx.db, batchIds), pino({ level: 'silent' }), 'activating sessions');
    const query = vi.spyOn(fx.db, 'query');
    try {
      for (const id of ids) batch.add(id);
      await new Promise((resolve) => setImmediate(resolve));
      await batch.flush();
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    for (const id of ids) expect((await getSessionRow(fx.db, id))?.status).toBe('active');
    expect(await startedEvents(ids)).toHaveLength(ids.length);
  });
});
