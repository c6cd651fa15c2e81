// What ending many sessions at once costs the host: the sessions of a mass hang-up reach their
// reconnect grace (300 s) together. Against the configured PostgreSQL and Redis (DATABASE_URL,
// REDIS_URL; a schema and key prefix of its own), for each count N, in alternated rounds:
//   each  — N endSession calls at once on the gateway's pool (20 connections): one transaction each,
//           as the per-session grace timers did;
//   batch — one endSessions call: one transaction, a statement per step (the registry's sweep).
// Prints per run: wall time, this process's CPU, the PostgreSQL backends' CPU, the whole host's busy
// CPU (/proc/stat, steal left out), and how late a bystander process's 1 ms timer ran at worst (what
// a live call's media loop on the same host would have felt).
//   npx tsx bench/sessions/end-burst.ts [--sessions 100,400] [--rounds 3]
// Prints figures; asserts nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadConfig } from '../../src/config/index.js';
import { createRedis } from '../../src/coord/redis.js';
import { endSession, endSessions, type LifecycleDeps } from '../../src/sessions/index.js';
import { createOrg, createPool, migrate } from '../../src/store/index.js';
import { pgBackendCpu, pgCpuDelta } from '../sip/pg-cpu.js';
import { hostCpu } from '../host-cpu.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const counts = (arg('sessions') ?? '100,400').split(',').map(Number);
const rounds = Number(arg('rounds') ?? 3);
const VARIANTS = ['each', 'batch'] as const;
type Variant = (typeof VARIANTS)[number];

const base = loadConfig(process.env, {});
const schema = `bench_end_${Date.now().toString(36)}`;
await migrate(base.databaseUrl, schema);
const db = createPool(base.databaseUrl, schema); // the gateway's pool size
const redis = createRedis(base.redisUrl, '');
const deps: LifecycleDeps = { db, redis, redisKeyPrefix: `${schema}:` };
const org = await createOrg(db, { name: schema, maxConcurrentSessions: 100_000, rateLimit: 100_000, rateWindowSeconds: 60 });

/** A process of its own whose 1 ms timer reports how late it ran at worst since the last reading. */
function startBystander(): ChildProcess {
  const code = `let last = performance.now(), worst = 0;
    setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last - 1); last = now; }, 1);
    process.on('message', () => { process.send(Math.round(worst * 10) / 10); worst = 0; });`;
  return spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
const bystander = startBystander();
const worstLateMs = (): Promise<number> =>
  new Promise((resolve) => {
    bystander.once('message', (ms) => resolve(ms as number));
    bystander.send('take');
  });

async function activeSessions(n: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO sessions (id, org_id, status, mode, audio, voice, recording, started_at)
     SELECT 'sess_bench_' || md5(random()::text), $1, 'active', 'assistive_translation', '{}', '{}', '{"enabled":false}', now()
       FROM generate_series(1, $2) RETURNING id`,
    [org.id, n],
  );
  return rows.map((r) => r.id);
}

async function run(variant: Variant, n: number): Promise<void> {
  const ids = await activeSessions(n);
  // Warm the pool (the gateway's is warm): every connection open before the clock starts.
  await Promise.all(Array.from({ length: 20 }, () => db.query('SELECT 1')));
  await worstLateMs();
  const pg0 = pgBackendCpu();
  const host0 = hostCpu().busyMs;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (variant === 'each') await Promise.all(ids.map((id) => endSession(deps, id, 'call_disconnected')));
  else
    await endSessions(
      deps,
      ids.map((id) => ({ id, reason: 'call_disconnected' })),
    );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const pgMs = pgCpuDelta(pg0, pgBackendCpu());
  const hostMs = hostCpu().busyMs - host0;
  const late = await worstLateMs();
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE id = ANY($1::text[]) AND status = 'ended'`, [ids]);
  console.log(
    `${variant.padEnd(5)} ${String(n).padStart(5)} sessions: ${rows[0]?.n} ended in ${Math.round(wallMs)} ms; ` +
      `this process ${Math.round((cpu.user + cpu.system) / 1000)} ms CPU, PostgreSQL ${Math.round(pgMs)} ms, host ${hostMs} ms busy; ` +
      `bystander's timer ${late} ms late at worst`,
  );
}

try {
  for (let r = 0; r < rounds; r++) for (const n of counts) for (const v of r % 2 ? [...VARIANTS].reverse() : VARIANTS) await run(v, n);
} finally {
  bystander.kill();
  redis.disconnect();
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
}
