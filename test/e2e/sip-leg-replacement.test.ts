// SPEC "Limits": new audio may reconnect to a session within the grace after a dropped call leg.
// A caller who hangs up and calls the number again within the grace lands in the same session; when
// nobody comes back, the session ends with end_reason `call_disconnected`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { startSipp, eventually, type SippResult, addLoopbackNumber } from '../helpers/sip-harness.js';
import type { Telephony } from '../../src/telephony/index.js';

const GRACE_SECONDS = 8;

let t: StreamTestGateway;
let telephony: Telephony;
let number: string;

beforeAll(async () => {
  t = await startStreamGateway({
    engines: 'none',
    overrides: {
      roles: ['api', 'media', 'worker'],
      sip: { enabled: true, transports: ['udp'] },
      limits: { reconnectGraceSeconds: GRACE_SECONDS },
    },
  });
  telephony = (t.gw as unknown as { telephony: Telephony }).telephony;
  number = await addLoopbackNumber(t.gw.db, t.org.orgId);
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);

async function callAndHangUp(): Promise<void> {
  const sipp = await startSipp({ scenario: 'uac-call.xml', target: `127.0.0.1:${telephony.sipPort}`, service: number, durationMs: 300 });
  ok(await sipp.done);
}

describe('a dropped phone leg', () => {
  it('is replaced by a new call within the grace, and the session ends when nobody comes back', async () => {
    const created = await t.api(t.org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice', routing: { phone_number: number, direction: 'inbound' } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const calls = async () =>
      (await t.gw.db.query('SELECT call_sid, status, disconnect_reason FROM calls WHERE session_id = $1 ORDER BY created_at', [id])).rows;
    const session = async () => (await t.gw.db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [id])).rows[0];

    await callAndHangUp();
    await eventually(async () => (await calls()).some((c) => c.status !== 'in-progress' && c.status !== 'ringing'));
    expect((await session()).status).not.toBe('ended');

    await callAndHangUp(); // well within the grace: the same session takes it
    const both = await calls();
    expect(both).toHaveLength(2);
    expect(new Set(both.map((c) => c.call_sid)).size).toBe(2);

    await eventually(async () => (await session()).status === 'ended', (GRACE_SECONDS + 30) * 1000);
    expect((await session()).end_reason).toBe('call_disconnected');
    const { rows: events } = await t.gw.db.query(`SELECT type FROM webhook_events WHERE data->>'session_id' = $1 OR data->>'id' = $1 ORDER BY created_at`, [
      id,
    ]);
    const types = events.map((e) => e.type);
    expect(types.filter((x) => x === 'session.provider.connected')).toHaveLength(2);
    expect(types.filter((x) => x === 'session.provider.disconnected')).toHaveLength(2);
    expect(types.at(-1)).toBe('session.ended');
  }, 120_000);
});
