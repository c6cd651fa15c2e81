// The hot statements are named (prepared once per connection) and therefore list their columns
// instead of `*`. This keeps those lists honest: each row they return has every column of its table
// (so a migration that adds a column and forgets the list fails here, not as a missing field later).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activateSessionRows,
  findPhoneNumber,
  getConnection,
  getSessionRow,
  insertWebhookEndpoint,
  lockSessionRows,
  markSessionsEnded,
  webhookEndpointsByIds,
  withTransaction,
} from '../../src/store/index.js';
import { startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => {
  await fx?.stop();
});

async function columnsOf(table: string): Promise<string[]> {
  const { rows } = await fx.db.query<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
    [table],
  );
  return rows.map((r) => r.column_name).sort();
}

const keys = (row: object | null): string[] => Object.keys(row ?? {}).sort();

describe('named statements return every column of their table', () => {
  it('sessions: get, lock, activate, end', async () => {
    const id = await fx.createSession({ phoneNumber: fx.openNumber });
    const all = await columnsOf('sessions');
    expect(keys(await getSessionRow(fx.db, id))).toEqual(all);
    expect(keys((await withTransaction(fx.db, (c) => lockSessionRows(c, [id])))[0] ?? null)).toEqual(all);
    expect(keys((await activateSessionRows(fx.db, [{ id, eventId: `evt_cols_${Date.now()}` }]))[0] ?? null)).toEqual(all);
    expect(keys((await withTransaction(fx.db, (c) => markSessionsEnded(c, [{ id, reason: 'api_request' }])))[0] ?? null)).toEqual(all);
  });

  it('phone numbers, provider connections and webhook endpoints', async () => {
    const number = await findPhoneNumber(fx.db, fx.openNumber);
    expect(keys(number)).toEqual(await columnsOf('phone_numbers'));
    expect(number?.connection_id).toBeTruthy();
    expect(keys(await getConnection(fx.db, number?.connection_id ?? ''))).toEqual(await columnsOf('provider_connections'));
    const endpoint = await insertWebhookEndpoint(fx.db, {
      orgId: fx.orgId,
      url: 'https://example.test/hook',
      events: ['*'],
      eventTypes: ['*'],
      realtime: false,
      secretEnc: 'sealed',
    });
    const [found] = await webhookEndpointsByIds(fx.db, [endpoint.id]);
    expect(keys(found ?? null)).toEqual(await columnsOf('webhook_endpoints'));
  });
});
