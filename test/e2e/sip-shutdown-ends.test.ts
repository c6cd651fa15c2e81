// A node shutting down with calls up: every leg gets a BYE, and its end (reason `shutdown`, with
// `session.provider.disconnected`) is written before the telephony service's close() returns, so the
// database may close right after it without losing the calls' last rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachedBeforeSippEnds, startSipp, startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  // Without SIP capture: its own close waits 60 ms for the last BYEs, which would hide a close()
  // that does not wait for the ends.
  fx = await startTelephonyFixture({ capture: { enabled: false } });
}, 60_000);
afterAll(async () => {
  await fx?.stop();
});

describe('telephony shutdown', () => {
  it('hangs up the live calls and has recorded their ends when close() returns', async () => {
    const target = `127.0.0.1:${fx.sipPort}`;
    const sessionIds: string[] = [];
    const callers = [];
    for (let i = 0; i < 2; i++) {
      sessionIds.push(await fx.createSession({ phoneNumber: fx.openNumber }));
      const attached = fx.sessions.nextLeg();
      const sipp = await startSipp({ scenario: 'uac-call-remote-bye.xml', target, service: fx.openNumber });
      await attachedBeforeSippEnds(attached, sipp);
      callers.push(sipp);
    }

    await fx.svc.close();

    // Read at once, no polling: close() has waited for the writes.
    const { rows: calls } = await fx.db.query<{ status: string; disconnect_reason: string }>(
      `SELECT status, disconnect_reason FROM calls WHERE session_id = ANY($1::text[]) AND ended_at IS NOT NULL`,
      [sessionIds],
    );
    expect(calls).toEqual([
      { status: 'completed', disconnect_reason: 'shutdown' },
      { status: 'completed', disconnect_reason: 'shutdown' },
    ]);
    const { rows: events } = await fx.db.query<{ reason: string }>(
      `SELECT data->'provider'->>'disconnect_reason' AS reason FROM webhook_events
        WHERE type = 'session.provider.disconnected' AND data->>'session_id' = ANY($1::text[])`,
      [sessionIds],
    );
    expect(events).toEqual([{ reason: 'shutdown' }, { reason: 'shutdown' }]);
    for (const sipp of callers) expect((await sipp.done).code).toBe(0);
  });
});
