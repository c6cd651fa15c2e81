// Connecting to the stream: every close code of SPEC "Socket close codes" (4001, 4004, 4009, 4010,
// 4029, 4500, 1000), ping/pong, and a stream that outlives its token.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStreamGateway, TestSocket, type StreamTestGateway } from '../helpers/stream.js';
import { getSessionRow } from '../../src/store/index.js';
import { claimStream, refreshStreamClaims } from '../../src/stream/stream-claims.js';

let t: StreamTestGateway;

beforeAll(async () => {
  t = await startStreamGateway({ overrides: { limits: { socketConnectsPerMinute: 3 } } });
});
afterAll(async () => {
  await t?.stop();
});

/** Opens a socket expected to be closed by the server during connect; returns the close. */
async function refused(sessionId: string, token: string | null, headers?: Record<string, string>) {
  const s = await t.connect(sessionId, token, headers);
  const close = await s.closed;
  expect(s.messages).toEqual([]); // nothing is said on a refused socket: the close code is the answer
  return close;
}

describe('stream connect', () => {
  it('accepts a valid token: session.ready, then ping → pong with the session id', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    const ready = await s.waitForType('session.ready');
    expect(ready).toMatchObject({ type: 'session.ready', session_id: id });
    s.send({ type: 'ping' });
    expect(await s.waitForType('pong')).toMatchObject({ type: 'pong', session_id: id });
    const row = await getSessionRow(t.gw.db, id);
    expect(row!.owner_node).toBe(t.gw.config.nodeId);
    await s.close();
  });

  it('closes 4001 for a missing, malformed, unknown, expired or other-session token, and never takes an API key', async () => {
    const { id } = await t.createSession();
    const other = await t.createSession();
    expect(await refused(id, null)).toEqual({ code: 4001, reason: 'stream_token_invalid' });
    expect((await refused(id, 'not-a-token')).code).toBe(4001);
    expect((await refused(id, 'kst_' + 'a'.repeat(32))).code).toBe(4001);
    expect((await refused(id, other.token)).code).toBe(4001);
    // The organization's API key, as a header or as the token, is not a stream credential.
    expect((await refused(id, null, { authorization: `Bearer ${t.org.key}` })).code).toBe(4001);
    expect((await refused(id, t.org.key)).code).toBe(4001);
    // Expired: Redis drops the token at its TTL.
    const expiring = await t.issueToken(id, 60);
    await t.gw.redis.pexpire(`stoken:${expiring}`, 1);
    await vi.waitFor(async () => expect(await t.gw.redis.exists(`stoken:${expiring}`)).toBe(0));
    expect((await refused(id, expiring)).code).toBe(4001);
  });

  it('closes 4004 when the token names a session that does not exist', async () => {
    const ghost = 'sess_0000000000nosuchsession00';
    const token = await t.issueToken(ghost);
    expect(await refused(ghost, token)).toEqual({ code: 4004, reason: 'session_not_found' });
  });

  it('closes 4010 when the session has ended', async () => {
    const { id, token } = await t.createSession({ status: 'ended' });
    expect(await refused(id, token)).toEqual({ code: 4010, reason: 'session_already_ended' });
  });

  it('closes 4009 for a second concurrent stream, also when another node holds it', async () => {
    const { id, token } = await t.createSession();
    const first = await t.connect(id, token);
    await first.waitForType('session.ready');
    expect(await refused(id, await t.issueToken(id))).toEqual({ code: 4009, reason: 'stream_already_connected' });
    // The first stream is unaffected.
    first.send({ type: 'ping' });
    await first.waitForType('pong');
    await first.close();

    // A stream claimed by another node (its claims in Redis: the stream, and the session it owns) is refused the same way.
    const b = await t.createSession();
    await t.gw.redis.set(`stream:${b.id}`, 'node-2:other', 'PX', 30_000);
    await t.gw.redis.set(`owner:${b.id}`, JSON.stringify({ node: 'node-2', url: 'http://node-2.invalid', sip: null }), 'PX', 30_000);
    expect((await refused(b.id, b.token)).code).toBe(4009);
    await t.gw.redis.del(`stream:${b.id}`, `owner:${b.id}`);
    const ok = await t.connect(b.id, await t.issueToken(b.id));
    await ok.waitForType('session.ready');
    await ok.close();
  });

  it('refreshes only the claims it holds', async () => {
    expect(await claimStream(t.gw.redis, 'sess_claim_a', 'h1')).toBe(true);
    expect(await claimStream(t.gw.redis, 'sess_claim_a', 'h2')).toBe(false);
    await t.gw.redis.pexpire('stream:sess_claim_a', 1000);
    await t.gw.redis.set('stream:sess_claim_b', 'another-node', 'PX', 1000);
    expect(
      await refreshStreamClaims(t.gw.redis, [
        ['sess_claim_a', 'h1'],
        ['sess_claim_b', 'h1'],
      ]),
    ).toBe(1);
    expect(await t.gw.redis.pttl('stream:sess_claim_a')).toBeGreaterThan(20_000);
    expect(await t.gw.redis.pttl('stream:sess_claim_b')).toBeLessThanOrEqual(1000);
  });

  it('closes 4029 when one session is connected to too often in a minute', async () => {
    const { id } = await t.createSession();
    for (let i = 0; i < 3; i++) {
      const s = await t.connect(id, await t.issueToken(id));
      await s.waitForType('session.ready');
      await s.close();
      // The claim is released when the server sees the close; wait for it before the next connect.
      await vi.waitFor(async () => expect(await t.gw.redis.exists(`stream:${id}`)).toBe(0));
    }
    expect(await refused(id, await t.issueToken(id))).toEqual({ code: 4029, reason: 'rate_limit_exceeded' });
  });

  it('closes 4500 when the server fails while opening the session', async () => {
    const { id, token } = await t.createSession();
    const spy = vi.spyOn(t.registry, 'open').mockRejectedValueOnce(new Error('database exploded'));
    try {
      expect(await refused(id, token)).toEqual({ code: 4500, reason: 'internal_error' });
    } finally {
      spy.mockRestore();
    }
    // The claim was released: the next attempt connects.
    const s = await t.connect(id, await t.issueToken(id));
    await s.waitForType('session.ready');
    await s.close();
  });

  it('session.end → session.ended (explicit_end), then close 1000; the row is ended', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    s.send({ type: 'session.end' });
    expect(await s.waitForType('session.ended')).toMatchObject({ type: 'session.ended', session_id: id, reason: 'explicit_end' });
    expect((await s.closed).code).toBe(1000);
    const row = await getSessionRow(t.gw.db, id);
    expect(row).toMatchObject({ status: 'ended', end_reason: 'explicit_end' });
    // Ended now: a new connect is refused with 4010.
    expect((await refused(id, await t.issueToken(id))).code).toBe(4010);
  });

  it('a connected stream outlives its token', async () => {
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await t.gw.redis.del(`stoken:${token}`);
    s.send({ type: 'ping' });
    await s.waitForType('pong');
    expect(s.isClosed).toBe(false);
    await s.close();
  });

  it('answers 404 to an upgrade on another path and 400 to a malformed session id', async () => {
    await expect(TestSocket.open(`${t.wsUrl('x', null).replace(/\/v1\/.*$/, '/v1/elsewhere')}`)).rejects.toThrow(/404/);
    await expect(TestSocket.open(t.wsUrl('%E0%A4%A', 'kst_x'))).rejects.toThrow(/400/);
    // The server is still up.
    const { id, token } = await t.createSession();
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    await s.close();
  });
});
