// Benchmark server (child process): a gateway with the session registry and stream server, an
// organization, and an IPC interface for the driver in run.ts (create sessions, read stats, stop).
// It runs in its own process so the driver's clients do not share its event loop.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startGateway, type Gateway } from '../../src/server.js';
import { newId } from '../../src/ids.js';
import { createOrg } from '../../src/store/index.js';
import { issueStreamToken } from '../../src/coord/stream-tokens.js';
import { createEngines, buildEngines } from '../../src/speech/index.js';
import { SessionRegistry } from '../../src/sessions/index.js';
import { attachStreamServer, type StreamServer } from '../../src/stream/index.js';
import { testConfig, dropTestState } from '../../test/helpers/gateway.js';

const embedded = process.env.BENCH_ENGINES === 'embedded';
const config = testConfig({
  logLevel: 'warn',
  sip: { enabled: false },
  limits: { socketConnectsPerMinute: 1_000_000, defaultMaxConcurrentSessions: 100_000 },
  engines: embedded
    ? { stt: { poolSize: Number(process.env.BENCH_STT_POOL ?? 2) } }
    : { stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } },
});
const engines = embedded ? await createEngines(config.engines) : buildEngines(null, null, null);
const gw = (await startGateway(config, { engines })) as Gateway & { registry?: SessionRegistry; stream?: StreamServer };
// server.ts attaches the registry and stream server with the media role; until it does, attach them here.
const ownsStream = !gw.registry || !gw.stream;
const registry = gw.registry ?? new SessionRegistry({ config, logger: gw.logger, db: gw.db, redis: gw.redis, engines });
if (ownsStream) await registry.start();
const stream = gw.stream ?? attachStreamServer(gw.app.server, { config, logger: gw.logger, db: gw.db, redis: gw.redis, registry });
const org = await createOrg(gw.db, {
  name: 'bench',
  credits: 1_000_000,
  maxConcurrentSessions: 100_000,
  rateLimit: 1_000_000,
  rateWindowSeconds: 60,
  features: [],
});

const eld = monitorEventLoopDelay({ resolution: 1 });
eld.enable();
if (process.env.BENCH_TRACE) {
  // Per-second worst event-loop delay, to find stalls.
  const sec = monitorEventLoopDelay({ resolution: 1 });
  sec.enable();
  setInterval(() => {
    if (sec.max / 1e6 > 50)
      console.error(
        `[bench server] ${new Date().toISOString()} event-loop max ${(sec.max / 1e6).toFixed(0)} ms, live ${registry.size}, sockets ${stream.connections}`,
      );
    sec.reset();
  }, 1000).unref();
}
let cpu0 = process.cpuUsage();
let t0 = performance.now();

type Msg = { kind: 'sessions'; n: number; mode: string; source: string; target: string } | { kind: 'reset' } | { kind: 'stats' } | { kind: 'stop' };

async function onParentMessage(m: Msg): Promise<void> {
  try {
    if (m.kind === 'sessions') {
      const out: Array<{ id: string; token: string }> = [];
      for (let i = 0; i < m.n; i++) {
        const id = newId('sess');
        await gw.db.query(
          `INSERT INTO sessions (id, org_id, mode, source_language, target_language, audio, voice, recording)
           VALUES ($1, $2, $3, $4, $5, '{"sample_rate_hz":8000,"encoding":"mulaw","channels":1}', '{"stability":0.5,"similarity_boost":0.75,"speed":1}', '{"enabled":false}')`,
          [id, org.id, m.mode, m.source, m.target],
        );
        out.push({ id, token: (await issueStreamToken(gw.redis, id, 3600)).token });
      }
      process.send!({ kind: 'sessions', sessions: out, wsBase: gw.httpUrl.replace(/^http/, 'ws') });
    } else if (m.kind === 'reset') {
      eld.reset();
      cpu0 = process.cpuUsage();
      t0 = performance.now();
      process.send!({ kind: 'reset' });
    } else if (m.kind === 'stats') {
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - t0;
      const mem = process.memoryUsage();
      process.send!({
        kind: 'stats',
        cpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
        rssMb: mem.rss / 2 ** 20,
        heapMb: mem.heapUsed / 2 ** 20,
        eldP50Ms: eld.percentile(50) / 1e6,
        eldP99Ms: eld.percentile(99) / 1e6,
        eldMaxMs: eld.max / 1e6,
        connections: stream.connections,
        liveSessions: registry.size,
      });
    } else if (m.kind === 'stop') {
      if (ownsStream) {
        await stream.close();
        await registry.close();
      }
      await gw.close();
      await engines.close();
      await dropTestState(config);
      process.send!({ kind: 'stopped' }, () => process.exit(0));
    }
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}

// A rejected handler would be an unhandled rejection: the handler catches, the listener discards.
process.on('message', (m: Msg) => void onParentMessage(m));
process.send!({ kind: 'up' });
