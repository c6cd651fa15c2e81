// Leg ends written together (recordCallsEnded, batched per loop turn by live-legs.ts): each call row
// closes once with its own reason and quality, `session.provider.disconnected` goes out only for
// calls that had connected, and a call already ended keeps its first end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCallBySid, insertCall, recordCallConnected, recordCallsEnded, type CallEnd } from '../../src/store/index.js';
import { startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';
import { uniqueName } from '../helpers/gateway.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => {
  await fx?.stop();
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
