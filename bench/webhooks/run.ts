// Webhook delivery benchmark: a gateway with the worker role in a child
// process delivers outbox events to a loopback HTTP receiver in this process.
//   burst:  N events written at once (one INSERT), spread over S sessions → delivered events/s
//   steady: events written one transaction each at R/s for T s → outbox-write → delivery delay p50/p99
//
//   npx tsx bench/webhooks/run.ts [--events 10000] [--sessions 200] [--rate 200] [--seconds 5] [--concurrency 16]
//
// Prints figures; asserts nothing (STYLE: benchmarks print figures).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/server.js';
import { createOrg, createPool, insertEvent, migrate, withTransaction } from '../../src/store/index.js';
import { WebhookEndpoints } from '../../src/webhooks/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const schema = process.env.DATABASE_SCHEMA ?? `bench_webhooks_${Date.now().toString(36)}`;
const overrides = {
  databaseSchema: schema,
  redisKeyPrefix: `${schema}:`,
  httpHost: '127.0.0.1',
  httpPort: 0,
  logLevel: 'warn',
  roles: ['worker'],
  webhooks: { allowLoopbackHttp: true, endpointConcurrency: arg('concurrency', 16) },
};

/** Child: the gateway (worker role) on the bench schema. */
async function serve(): Promise<void> {
  const gw = await startGateway(loadConfig(process.env, overrides), { migrate: false });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  process.on('SIGTERM', () => void gw.close().then(() => process.exit(0)));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  const config = loadConfig(process.env, overrides);
  await migrate(config.databaseUrl, schema);
  const db = createPool(config.databaseUrl, schema, undefined, 8);
  const arrivals = new Map<string, number>();
  const delays: number[] = [];
  let waiter: (() => void) | null = null;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        const now = Date.now();
        const ev = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; created_at: string };
        if (!arrivals.has(ev.id)) {
          arrivals.set(ev.id, now);
          delays.push(now - Date.parse(ev.created_at));
        }
        res.writeHead(200).end();
        waiter?.();
      });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const org = await createOrg(db, { name: 'bench', credits: 1, maxConcurrentSessions: 1, rateLimit: 1, rateWindowSeconds: 60 });
  await new WebhookEndpoints(db, config).create(org.id, { url: `http://127.0.0.1:${port}/hook`, events: ['*'], realtime: true });

  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
    env: { ...process.env, DATABASE_SCHEMA: schema },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}`)));
  });
  const until = async (n: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (arrivals.size < n && Date.now() < deadline) await new Promise<void>((r) => ((waiter = r), setTimeout(r, 200)));
  };

  try {
    // Burst: one INSERT of N transcript.segment events over S sessions.
    const n = arg('events', 10_000);
    const sessions = arg('sessions', 200);
    const t0 = Date.now();
    await db.query(
      `INSERT INTO webhook_events (id, org_id, type, data)
       SELECT 'evt_bench_' || lpad(g::text, 8, '0'), $1, 'transcript.segment',
              jsonb_build_object('session_id', 'sess_' || (g % $3), 'segment', jsonb_build_object('id', 'seg_' || g, 'speaker', 'customer', 'text', 'hello there', 'is_final', true))
         FROM generate_series(1, $2) g`,
      [org.id, n, sessions],
    );
    await until(n, 300_000);
    const burstS = (Date.now() - t0) / 1000;
    console.log(
      `burst: ${arrivals.size}/${n} events over ${sessions} sessions delivered in ${burstS.toFixed(2)} s → ${(arrivals.size / burstS).toFixed(0)} events/s (endpoint concurrency ${overrides.webhooks.endpointConcurrency})`,
    );

    // Steady: one transaction per event at a fixed rate; delay = receipt − the row's created_at.
    delays.length = 0;
    const rate = arg('rate', 200);
    const seconds = arg('seconds', 5);
    const before = arrivals.size;
    const start = Date.now();
    let written = 0;
    while (Date.now() - start < seconds * 1000) {
      const due = Math.floor(((Date.now() - start) / 1000) * rate);
      for (; written < due; written++) {
        void withTransaction(db, (c) =>
          insertEvent(c, org.id, 'transcript.segment', { session_id: `sess_${written % 50}`, segment: { id: `s${written}`, text: 'hi', is_final: true } }),
        );
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(before + written, 60_000);
    const sorted = [...delays].sort((a, b) => a - b);
    console.log(
      `steady: ${rate}/s for ${seconds} s, ${sorted.length}/${written} delivered; outbox write → delivery p50 ${pct(sorted, 50)} ms, p99 ${pct(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    server.closeAllConnections();
    server.close();
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.end();
  }
}

if (process.argv.includes('--serve')) void serve();
else
  void main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
