// Writes batched per event-loop turn (store/turn-batch.ts), against PostgreSQL:
// - created → active on first audio: every first audio of one loop turn is one statement, each
//   activated session gets its own `session.started` event with its own row's data, and a session no
//   longer in `created` is left alone (no second event, no second started_at);
// - leg ends (recordCallsEnded, batched by live-legs.ts): each call row closes once with its own reason
//   and quality, `session.provider.disconnected` goes out only for calls that had connected, and a call
//   already ended keeps its first end.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { activateSession, activateSessions } from '../../src/sessions/index.js';
import { TurnBatch, getCallBySid, getSessionRow, insertCall, recordCallConnected, recordCallsEnded, type CallEnd } from '../../src/store/index.js';
import { startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';
import { uniqueName } from '../helpers/gateway.js';

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

async function call(sessionId: string, connected: boolean): Promise<{ id: string; sid: string }> {
  const sid = uniqueName('sid');
  const row = await insertCall(fx.db, {
    sessionId,
    orgId: fx.orgId,
    party: 'customer',
    direction: 'inbound',
    provider: 'sip',
    callSid: sid,
    from: 'sip:a@example.com',
    to: 'sip:b@example.com',
    status: 'ringing',
  });
  if (connected) await recordCallConnected(fx.db, { callId: row.id, sessionId, orgId: fx.orgId, provider: 'sip', data: { session_id: sessionId } });
  return { id: row.id, sid };
}

const end = (callId: string, reason: string, mos: number): CallEnd => ({
  callId,
  orgId: fx.orgId,
  status: 'completed',
  reason,
  data: { provider: { status: 'disconnected', disconnect_reason: reason, quality: { mos } } },
});

describe('recordCallsEnded', () => {
  it('closes every call of the batch once, with a disconnected event only for those that connected', async () => {
    const sessionId = await fx.createSession({});
    const talked = await call(sessionId, true);
    const neverAnswered = await call(sessionId, false);
    const alreadyEnded = await call(sessionId, true);
    // One end takes the single-row statement, several the batch one: both are checked here.
    expect(await recordCallsEnded(fx.db, [end(alreadyEnded.id, 'remote_hangup', 4.1)])).toEqual([alreadyEnded.id]);

    const closed = await recordCallsEnded(fx.db, [
      end(talked.id, 'remote_hangup', 4.3),
      end(neverAnswered.id, 'ack_timeout', 0),
      end(alreadyEnded.id, 'shutdown', 1),
    ]);

    expect(closed.sort()).toEqual([talked.id, neverAnswered.id].sort());
    expect(await getCallBySid(fx.db, talked.sid)).toMatchObject({ status: 'completed', disconnect_reason: 'remote_hangup', quality: { mos: 4.3 } });
    expect(await getCallBySid(fx.db, neverAnswered.sid)).toMatchObject({ status: 'completed', disconnect_reason: 'ack_timeout' });
    expect(await getCallBySid(fx.db, alreadyEnded.sid)).toMatchObject({ disconnect_reason: 'remote_hangup', quality: { mos: 4.1 } });
    const { rows } = await fx.db.query<{ data: { provider: { disconnect_reason: string } } }>(
      `SELECT data FROM webhook_events WHERE type = 'session.provider.disconnected' AND org_id = $1 ORDER BY id`,
      [fx.orgId],
    );
    expect(rows.map((r) => r.data.provider.disconnect_reason)).toEqual(['remote_hangup', 'remote_hangup']);
  });
});
