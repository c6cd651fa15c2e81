// Node heartbeat cost against the configured Redis (REDIS_URL): one beat (record + live legs, one
// script call) with 0, 100 and 1000 legs, and what the operator view pays to list N nodes
// (listNodes) and read their legs (liveLegsOf).
//
//   npx tsx bench/coord/heartbeat.ts [--rounds 200]
//
// Prints figures; asserts nothing (STYLE: benchmarks print figures).
import os from 'node:os';
import { loadConfig } from '../../src/config/index.js';
import { NodeHeartbeat, createRedis, listNodes, liveLegsOf, type LegSnapshot } from '../../src/coord/index.js';
import { defined } from '../defined.js';

const i = process.argv.indexOf('--rounds');
const rounds = i > 0 ? Number(process.argv[i + 1]) : 200;
const config = loadConfig(process.env, {});
const prefix = `bench_heartbeat_${Date.now().toString(36)}:`;
const redis = createRedis(config.redisUrl, prefix);

const quality = {
  packets_sent: 1500,
  packets_received: 1498,
  packets_lost: 2,
  loss_percent: 0.13,
  jitter_ms: 3.2,
  rtt_ms: 41,
  remote: null,
  mos: 4.38,
  rtcp: { sent: 6, received: 6, mux: false },
};
const legs = (n: number, node: string): LegSnapshot[] =>
  Array.from({ length: n }, (_, k) => ({
    id: `call_${node}_${k}`,
    session_id: `sess_${node}_${k}`,
    call_sid: `${k}a7c2e9f0b1d3@10.0.0.1`,
    party: 'customer',
    direction: 'inbound',
    quality,
  }));

async function timed(label: string, n: number, fn: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (p: number) => defined(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))], 'timing').toFixed(2);
  console.log(`${label.padEnd(44)} p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  (${n} rounds)`);
}

const started: NodeHeartbeat[] = [];
try {
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${os.availableParallelism()} cores`,
  );
  for (const n of [0, 100, 1000]) {
    const hb = new NodeHeartbeat({
      redis,
      periodMs: 60_000,
      self: { id: `beat-${n}`, roles: ['media'], url: 'http://n', sip: null },
      sources: { legs: () => legs(n, 'x') },
    });
    started.push(hb);
    await timed(`beat with ${n} legs (${n ? JSON.stringify(legs(n, 'x')).length : 0} bytes of legs)`, rounds, () => hb.beat());
  }
  // The operator view's reads, over nodes that each carry 50 legs.
  await Promise.all(started.splice(0).map((h) => h.stop()));
  for (const count of [2, 20, 100]) {
    while (started.length < count) {
      const id = `node-${started.length}`;
      const hb = new NodeHeartbeat({
        redis,
        periodMs: 60_000,
        self: { id, roles: ['api', 'media'], url: 'http://n', sip: null },
        sources: { legs: () => legs(50, id) },
      });
      await hb.start();
      started.push(hb);
    }
    const ids = (await listNodes(redis)).map((n) => n.id);
    await timed(`listNodes, ${ids.length} nodes`, rounds, () => listNodes(redis));
    await timed(`liveLegsOf, ${ids.length} nodes × 50 legs`, rounds, () => liveLegsOf(redis, ids));
  }
} finally {
  await Promise.allSettled(started.map((h) => h.stop()));
  redis.disconnect();
}
