// The node heartbeat over a real Redis: records and live legs of several nodes, listed with their
// state — live, stale once a beat is missed, lost once the record expired, forgotten after the
// window — and a clean stop that removes the node at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { NodeHeartbeat, listNodes, liveLegsOf, type LegSnapshot, type NodeView } from '../../src/coord/index.js';
import { createRedis } from '../../src/coord/redis.js';
import { dropTestState, testConfig } from '../helpers/gateway.js';
import { eventually } from '../helpers/sip-harness.js';
import { defined } from '../helpers/defined.js';

const config = testConfig();
const clients: Redis[] = [];
const beats: NodeHeartbeat[] = [];
let reader: Redis;

const client = (): Redis => {
  const r = createRedis(config.redisUrl, config.redisKeyPrefix);
  clients.push(r);
  return r;
};

function node(id: string, periodMs: number, extra: Partial<ConstructorParameters<typeof NodeHeartbeat>[0]> = {}, redis = client()): NodeHeartbeat {
  const hb = new NodeHeartbeat({ redis, periodMs, self: { id, roles: ['api'], url: `http://${id}.test:8080`, sip: null }, ...extra });
  beats.push(hb);
  return hb;
}

const find = async (id: string): Promise<NodeView | undefined> => (await listNodes(reader)).find((n) => n.id === id);

beforeAll(() => {
  reader = client();
});
afterAll(async () => {
  await Promise.allSettled(beats.map((b) => b.stop()));
  for (const r of clients) r.disconnect();
  await dropTestState(config);
});

describe('node heartbeat', () => {
  it('lists every node with its record and its live legs', async () => {
    const leg: LegSnapshot = {
      id: 'call_1',
      session_id: 'sess_1',
      call_sid: 'abc@127.0.0.1',
      party: 'customer',
      direction: 'outbound',
      quality: { packets_sent: 50, mos: 4.4 },
    };
    let sessions = 2;
    const media = node('media-1', 1000, {
      self: { id: 'media-1', roles: ['api', 'media'], url: 'http://media-1.test:8080', sip: { address: '10.0.0.7', port: 5070 } },
      sources: {
        liveSessions: () => sessions,
        liveCalls: () => 1,
        legs: () => [leg],
        sttPool: () => ({ busy: 1, size: 4, waiting: 0 }),
        mediaOverload: () => ({ enabled: true, overloaded: true, late_percent: 42.5, loop_busy_percent: 91.5, overloads: 1 }),
      },
    });
    const api = node('api-1', 1000);
    await Promise.all([media.start(), api.start()]);

    const listed = await listNodes(reader);
    expect(listed.map((n) => [n.id, n.state])).toEqual([
      ['api-1', 'live'],
      ['media-1', 'live'],
    ]);
    const m = defined(listed[1], 'media-1');
    expect(m).toMatchObject({
      roles: ['api', 'media'],
      url: 'http://media-1.test:8080',
      sip: { address: '10.0.0.7', port: 5070 },
      period_ms: 1000,
      live_sessions: 2,
      live_calls: 1,
      stt_pool: { busy: 1, size: 4, waiting: 0 },
      media_overload: { enabled: true, overloaded: true, late_percent: 42.5, loop_busy_percent: 91.5, overloads: 1 },
    });
    if (m.state === 'lost') throw new Error('unreachable');
    expect(m.cpu_percent).toBeGreaterThanOrEqual(0);
    expect(m.rss_bytes).toBeGreaterThan(0);
    expect(m.event_loop_delay_ms.max).toBeGreaterThanOrEqual(m.event_loop_delay_ms.p50);
    expect(m.beat_age_ms).toBeLessThan(1000);
    expect(listed[0]).toMatchObject({ live_sessions: null, live_calls: null, stt_pool: null, sip: null, media_overload: null });

    const legs = await liveLegsOf(reader, ['api-1', 'media-1']);
    expect([...legs.values()]).toEqual([{ ...leg, node: 'media-1' }]);

    // The next beat carries the new figures.
    sessions = 3;
    await eventually(async () => {
      const n = await find('media-1');
      return n?.state === 'live' && n.live_sessions === 3;
    });

    await Promise.all([media.stop(), api.stop()]);
    expect(await find('media-1')).toBeUndefined();
    expect(await find('api-1')).toBeUndefined();
    expect((await liveLegsOf(reader, ['media-1'])).size).toBe(0);
  });

  it('shows a node that stops beating as stale, then lost once its record expired, then forgets it', async () => {
    // A survivor keeps beating: its beats drop nodes not seen within the forget window.
    const survivor = node('survivor', 500, { forgetAfterMs: 5000 });
    await survivor.start();
    // The node's Redis connection goes away (a partition, a crash): it can no longer beat or clean up.
    const cut = client();
    const doomed = node('doomed', 1000, {}, cut);
    await doomed.start();
    expect((await find('doomed'))?.state).toBe('live');
    cut.disconnect();

    const stale = await eventually(async () => {
      const n = await find('doomed');
      return n?.state === 'stale' ? n : null;
    }, 10_000);
    expect(stale.beat_age_ms).toBeGreaterThan(1500);
    const lost = await eventually(async () => {
      const n = await find('doomed');
      return n?.state === 'lost' ? n : null;
    }, 10_000);
    expect(lost.beat_age_ms).toBeGreaterThan(2500);
    expect(lost).not.toHaveProperty('roles');
    expect((await find('survivor'))?.state).toBe('live');

    await eventually(async () => (await find('doomed')) === undefined, 15_000);
    expect((await find('survivor'))?.state).toBe('live');
  });
});
