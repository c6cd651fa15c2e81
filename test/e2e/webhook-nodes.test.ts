// Webhook delivery across process death and across nodes. Gateways run as child processes (test/e2e/scale-out-child-node.ts) so one can be killed
// with SIGKILL: no shutdown, its claims left to expire. Receivers are real HTTP servers on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropTestState, testConfig } from '../helpers/gateway.js';
import { freePort } from '../helpers/sip-harness.js';
import { signatureValid, WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { Config } from '../../src/config/index.js';
import { createApiKey, createOrg, createPool, insertEvent, migrate, withTransaction, type Db, type WebhookEventType } from '../../src/store/index.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scale-out-child-node.ts');
const TIMEOUT_MS = 2000;

let base: Config;
let db: Db;
let rx: WebhookReceiver;
let orgId: string;
let key: string;
const children = new Set<ChildProcess>();

interface Node {
  child: ChildProcess;
  url: string;
}

async function startNode(nodeId: string): Promise<Node> {
  const httpPort = await freePort();
  const config = testConfig({
    nodeId,
    roles: ['api', 'worker'],
    httpPort,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    databaseSchema: base.databaseSchema,
    redisKeyPrefix: base.redisKeyPrefix,
    webhooks: { allowLoopbackHttp: true, timeoutMs: TIMEOUT_MS, retryScheduleSeconds: [0.2, 0.5, 1, 2], pollIntervalMs: 250 },
  });
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, VB_CHILD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve((JSON.parse(line) as { httpUrl: string }).httpUrl));
    child.once('exit', (code) => reject(new Error(`${nodeId} exited (${code}) before serving:\n${stderr}`)));
  });
  return { child, url };
}

async function kill9(node: Node): Promise<void> {
  const exited = new Promise((r) => node.child.once('exit', r));
  node.child.kill('SIGKILL');
  await exited;
}

async function stopNode(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = new Promise((r) => node.child.once('exit', r));
  node.child.kill('SIGTERM');
  await exited;
}

async function addEndpoint(node: Node, urlPath: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${node.url}/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: rx.url(urlPath), events }),
  });
  const body = (await res.json()) as { id: string; secret: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

const writeEvent = (type: WebhookEventType, data: Record<string, unknown>) => withTransaction(db, (c) => insertEvent(c, orgId, type, data));

beforeAll(async () => {
  base = testConfig();
  await migrate(base.databaseUrl, base.databaseSchema);
  db = createPool(base.databaseUrl, base.databaseSchema, undefined, 4);
  const org = await createOrg(db, { name: 'hooks', credits: 1000, maxConcurrentSessions: 100, rateLimit: 100_000, rateWindowSeconds: 60, features: [] });
  orgId = org.id;
  key = (await createApiKey(db, { orgId, environment: base.apiEnvironment, scopes: ['webhooks:manage', 'sessions:write', 'sessions:read'] })).key!;
  rx = await WebhookReceiver.start();
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rx?.close();
  await db?.end();
  await dropTestState(base);
});

describe('webhook delivery across nodes', () => {
  it('delivers, exactly as written, events a node held when it was killed (-9) and events written while it was down', async () => {
    let node = await startNode('node-a');
    const ep = await addEndpoint(node, '/crash', ['sessions', 'recordings']);
    // The first attempt hangs: node A has the delivery claimed and in flight when it dies.
    let hangFirst = true;
    rx.reply = (r) => (r.path === '/crash' && hangFirst ? ((hangFirst = false), 'hang') : 200);
    const inFlight = await writeEvent('session.ended', { id: 'sess_crash', object: 'session', status: 'ended', duration: 12.5, end_reason: 'hangup' });
    await rx.waitFor(() => rx.at('/crash').length >= 1, 30_000, 'the first attempt');
    await kill9(node);
    const whileDown = await writeEvent('recording.ready', {
      id: 'rec_down',
      object: 'recording',
      session_id: 'sess_crash',
      duration: 12.5,
      format: 'mp3',
      size: 1024,
    });

    node = await startNode('node-a');
    // The dead node's claim expires (deadline + 15 s lease margin), then the restarted node sends again.
    await rx.waitFor(
      () => rx.at('/crash').filter((r) => r.body.id === inFlight).length >= 2 && rx.at('/crash').some((r) => r.body.id === whileDown),
      60_000,
      'redelivery after restart',
    );
    for (const id of [inFlight, whileDown]) {
      const stored = (await db.query('SELECT type, api_version, data, created_at FROM webhook_events WHERE id = $1', [id])).rows[0];
      const delivered = rx
        .at('/crash')
        .filter((r) => r.body.id === id)
        .pop()!;
      expect(delivered.body).toEqual({
        id,
        type: stored.type,
        api_version: stored.api_version,
        created_at: stored.created_at.toISOString(),
        data: stored.data,
      });
      expect(signatureValid(delivered.headers['service-signature'], delivered.raw, ep.secret)).toBe(true);
    }
    await stopNode(node);
  }, 120_000);

  it('two gateway processes on one database deliver each event once per endpoint', async () => {
    const a = await startNode('node-a');
    const b = await startNode('node-b');
    await addEndpoint(a, '/two-1', ['transcripts', 'sessions']);
    await addEndpoint(b, '/two-2', ['sessions']);
    rx.reply = () => 200;
    const written: { id: string; type: string }[] = [];
    for (let i = 0; i < 200; i++) {
      const type: WebhookEventType = i % 2 ? 'transcript.ready' : 'session.started';
      written.push({ id: await writeEvent(type, { id: `sess_${i % 17}`, session_id: `sess_${i % 17}`, n: i }), type });
    }
    const sessionEvents = written.filter((w) => w.type === 'session.started').length;
    await rx.waitFor(() => rx.at('/two-1').length >= written.length && rx.at('/two-2').length >= sessionEvents, 60_000, 'all deliveries');
    // A quiet second for a duplicate still on its way (a negative check has no event to wait for).
    await new Promise((r) => setTimeout(r, 1000));
    const ids1 = rx.at('/two-1').map((r) => r.body.id);
    const ids2 = rx.at('/two-2').map((r) => r.body.id);
    expect(ids1.length).toBe(written.length);
    expect(new Set(ids1)).toEqual(new Set(written.map((w) => w.id)));
    expect(ids2.length).toBe(sessionEvents);
    expect(new Set(ids2)).toEqual(new Set(written.filter((w) => w.type === 'session.started').map((w) => w.id)));
    await Promise.all([stopNode(a), stopNode(b)]);
  }, 120_000);
});
