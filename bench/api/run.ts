// API load benchmark: POST /v1/sessions and GET /v1/sessions/{id}
// at fixed concurrency with autocannon. The gateway runs in a child process (its own schema and
// Redis prefix) so the load generator and the server do not share an event loop.
//
//   npx tsx bench/api/run.ts [--connections 32] [--seconds 10] [--auth-cache-ms 0] [--pg-pool 20] [--orgs 1] [--redis-autopipeline] [--only get|create] [--profile]
//   (--profile writes a V8 CPU profile of the server to $TMPDIR/voxbridge-api-profiles/)
//
// Prints throughput and latency percentiles; it asserts nothing (STYLE: benchmarks print figures).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createApiKey, createOrg, createPool, migrate } from '../../src/store/index.js';
import { createRedis } from '../../src/coord/redis.js';
import { buildApp } from '../../src/api/app.js';
import { DEFAULT_SCOPES } from '../../src/api/context.js';
import { defined } from '../defined.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const schema = `bench_api_${Date.now().toString(36)}`;
const baseEnv = { ...process.env, DATABASE_SCHEMA: schema, REDIS_KEY_PREFIX: `${schema}:` };

/** Child: migrate, provision one organization, serve, print {url, key} on stdout. */
async function serve(): Promise<void> {
  const config = loadConfig(process.env, { httpHost: '127.0.0.1', httpPort: 0, logLevel: 'warn' });
  await migrate(config.databaseUrl, config.databaseSchema);
  const logger = createLogger(config);
  const db = createPool(config.databaseUrl, config.databaseSchema, logger, arg('pg-pool', 20));
  // --redis-autopipeline: commands issued in one tick share one socket write (an option to offer coord/redis.ts).
  const redis = process.argv.includes('--redis-autopipeline')
    ? new Redis(config.redisUrl, { keyPrefix: config.redisKeyPrefix, enableAutoPipelining: true, maxRetriesPerRequest: 2 })
    : createRedis(config.redisUrl, config.redisKeyPrefix, logger);
  // Creates of one organization serialize on its row lock (the concurrent-session check); --orgs N spreads the load.
  const keys: string[] = [];
  for (let i = 0; i < arg('orgs', 1); i++) {
    const org = await createOrg(db, {
      name: `bench-${i}`,
      credits: 1_000_000,
      maxConcurrentSessions: 10_000_000,
      rateLimit: 100_000_000,
      rateWindowSeconds: 60,
    });
    keys.push((await createApiKey(db, { orgId: org.id, environment: config.apiEnvironment, scopes: DEFAULT_SCOPES })).key!);
  }
  const app = await buildApp({ config, logger, db, redis, authCacheTtlMs: arg('auth-cache-ms', 0) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url, keys })}\n`);
  process.on('SIGTERM', () => {
    void app
      .close()
      .then(() => db.end())
      .then(() => {
        redis.disconnect();
        process.exit(0);
      });
  });
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
  cpuUsPerReq: number;
}

let serverPid = 0;
/** CPU time (user + system) the server process has used, in µs, from /proc (Linux clock ticks of 10 ms). */
function serverCpuUs(): number {
  try {
    const fields = defined(readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1], 'stat fields').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

async function drive(name: string, opts: autocannon.Options): Promise<Figures> {
  const cpuBefore = serverCpuUs();
  const result = await autocannon(opts);
  const cpu = serverCpuUs() - cpuBefore;
  return {
    cpuUsPerReq: result.requests.total ? Math.round(cpu / result.requests.total) : 0,
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

async function main(): Promise<void> {
  const connections = arg('connections', 32);
  const loadBefore = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const seconds = arg('seconds', 10);
  const self = fileURLToPath(import.meta.url);
  const profile = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${os.tmpdir()}/voxbridge-api-profiles`] : [];
  const child = spawn(process.execPath, [...profile, ...process.execArgv, self, '--serve', ...process.argv.slice(2)], {
    env: baseEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  serverPid = child.pid ?? 0;
  let buffered = '';
  const ready = new Promise<{ url: string; keys: string[] }>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const { url, keys } = await ready;
  const createBody = JSON.stringify({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es', metadata: { ticket: 'T-1' } });
  let k = 0;
  const createRequest = {
    method: 'POST' as const,
    path: '/v1/sessions',
    body: createBody,
    setupRequest: (req: any) => ({ ...req, headers: { authorization: `Bearer ${keys[k++ % keys.length]}`, 'content-type': 'application/json' } }),
  };

  // Warm-up (JIT, pool connections), then the measured runs.
  await drive('warm-up', { url, requests: [createRequest], connections, duration: 2 });
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : 'all';
  const created = await drive('POST /v1/sessions', { url, requests: [createRequest], connections, duration: only === 'get' ? 1 : seconds });

  const targets: Array<{ id: string; key: string }> = [];
  for (let i = 0; i < 200; i++) {
    const key = defined(keys[i % keys.length], 'API key');
    const res = await fetch(`${url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: createBody,
    });
    targets.push({ id: ((await res.json()) as { id: string }).id, key });
  }
  let n = 0;
  const retrieved = await drive('GET /v1/sessions/{id}', {
    url,
    connections,
    duration: only === 'create' ? 1 : seconds,
    requests: [
      {
        method: 'GET',
        setupRequest: (req: any) => {
          const t = defined(targets[n++ % targets.length], 'target');
          return { ...req, path: `/v1/sessions/${t.id}`, headers: { authorization: `Bearer ${t.key}` } };
        },
      },
    ],
  });

  child.kill('SIGTERM');
  await once(child, 'exit');
  const cleanup = createPool(process.env.DATABASE_URL ?? loadConfig().databaseUrl, 'public', undefined, 1);
  await cleanup.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await cleanup.end();
  const redis = createRedis(loadConfig().redisUrl, '');
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${schema}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();

  const cpu = os.cpus();
  console.log(
    `machine: ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, node ${process.version}; ${connections} connections, ${seconds} s per run, ${arg('orgs', 1)} organization(s), auth cache ${arg('auth-cache-ms', 0)} ms, redis auto-pipelining ${process.argv.includes('--redis-autopipeline') ? 'on' : 'off'}`,
  );
  console.log(
    `load average before/after: ${loadBefore} / ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('| Route | req/s | p50 ms | p99 ms | server CPU µs/req | non-2xx | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const f of [created, retrieved]) console.log(`| ${f.name} | ${f.rps} | ${f.p50} | ${f.p99} | ${f.cpuUsPerReq} | ${f.non2xx} | ${f.errors} |`);
}

if (process.argv.includes('--serve')) void serve();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
