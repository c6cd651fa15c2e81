// A node that dies (a gateway in a child process, killed with SIGKILL: no shutdown, claims left to
// expire) leaves its live sessions to the survivors (DESIGN.md "Scale-out"): a session whose socket
// reconnects to a surviving node within the reconnect grace moves there; the others — active, or
// created but already opened live — are ended by the surviving worker with end_reason `node_lost`.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestGateway, testConfig, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { TestSocket } from '../helpers/stream.js';
import { freePort, eventually } from '../helpers/sip-harness.js';
import { ownerOf } from '../../src/coord/ownership.js';

const ENGINES_OFF = { stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } };
// Claims expire 1 s after the owner's last refresh; survivors get 10 s to take a session over.
const LIMITS = { ownerClaimTtlSeconds: 1, reconnectGraceSeconds: 10 };
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scale-out-child-node.ts');

let b: TestGateway;
let org: TestOrg;
let child: ChildProcess | undefined;
let childUrl: string;

/** Starts node C in its own process on the shared schema and prefix; resolves with its HTTP URL. */
async function startChildNode(): Promise<string> {
  const httpPort = await freePort();
  const config = testConfig({
    nodeId: 'node-c',
    roles: ['api', 'media'],
    httpPort,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    engines: ENGINES_OFF,
    databaseSchema: b.config.databaseSchema,
    redisKeyPrefix: b.config.redisKeyPrefix,
    sip: { enabled: false },
    limits: LIMITS,
  });
  child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, VB_CHILD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { httpUrl: string }).httpUrl));
    child!.once('exit', (code) => reject(new Error(`node C exited (${code}) before serving:\n${stderr}`)));
  });
}

beforeAll(async () => {
  const httpPort = await freePort();
  b = await startTestGateway({
    nodeId: 'node-b',
    httpPort,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    roles: ['api', 'media', 'worker'],
    engines: ENGINES_OFF,
    sip: { enabled: false },
    limits: LIMITS,
  });
  org = await b.createOrg();
  childUrl = await startChildNode();
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await b?.stop();
});

const FRAME = Buffer.alloc(160, 0xff).toString('base64'); // 20 ms of mu-law silence

async function createSession(): Promise<{ id: string; token: string }> {
  const res = await fetch(`${childUrl}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'help_chat_voice' }),
  });
  const body = (await res.json()) as { id: string; stream: { url: string; token: string } };
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(body.stream.url).toBe(`${childUrl.replace(/^http/, 'ws')}/v1/sessions/${body.id}/connect`);
  return { id: body.id, token: body.stream.token };
}

/** Opens the session live on node C (its socket); with `audio`, the first frame makes it active. */
async function liveOnChild(audio: boolean): Promise<{ id: string; socket: TestSocket }> {
  const { id, token } = await createSession();
  const socket = await TestSocket.open(`${childUrl.replace(/^http/, 'ws')}/v1/sessions/${id}/connect?token=${token}`);
  await socket.waitForType('session.ready');
  if (audio) {
    socket.send({ type: 'audio.input', speaker: 'customer', audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: FRAME } });
    await eventually(async () => (await b.db.query(`SELECT 1 FROM sessions WHERE id = $1 AND status = 'active'`, [id])).rowCount);
  }
  expect((await ownerOf(b.redis, id))?.node).toBe('node-c');
  return { id, socket };
}

const rowOf = async (id: string) => (await b.db.query('SELECT status, end_reason, owner_node FROM sessions WHERE id = $1', [id])).rows[0];

describe('a node that dies', () => {
  it('leaves its sessions to the survivors: a reconnect moves one, the rest end with node_lost', async () => {
    const active = await liveOnChild(true);
    const opened = await liveOnChild(false); // created, but opened live on C
    const moving = await liveOnChild(true);

    const exited = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGKILL');
    await exited;
    await active.socket.closed;

    // Once C's claim has expired, the API names the surviving node and the socket reconnects there.
    await eventually(async () => (await ownerOf(b.redis, moving.id)) === null);
    const seen = await b.api(org.key, 'GET', `/v1/sessions/${moving.id}`);
    expect(seen.body.stream.url).toBe(`${b.httpUrl.replace(/^http/, 'ws')}/v1/sessions/${moving.id}/connect`);
    const again = await TestSocket.open(`${seen.body.stream.url}?token=${seen.body.stream.token}`);
    await again.waitForType('session.ready');
    expect((await ownerOf(b.redis, moving.id))?.node).toBe('node-b');

    // Nobody took the other two within the grace: the surviving worker ends them.
    await eventually(async () => (await rowOf(active.id)).status === 'ended' && (await rowOf(opened.id)).status === 'ended', 40_000);
    expect(await rowOf(active.id)).toMatchObject({ end_reason: 'node_lost' });
    expect(await rowOf(opened.id)).toMatchObject({ end_reason: 'node_lost' });
    const { rows: events } = await b.db.query(`SELECT data FROM webhook_events WHERE type = 'session.ended' AND data->>'id' = ANY($1::text[])`, [
      [active.id, opened.id],
    ]);
    expect(events.map((e) => e.data.end_reason)).toEqual(['node_lost', 'node_lost']);

    // The session that moved lives on at B.
    expect(await rowOf(moving.id)).toMatchObject({ status: 'active', owner_node: 'node-b' });
    expect(again.isClosed).toBe(false);
    await b.api(org.key, 'POST', `/v1/sessions/${moving.id}/end`);
    expect((await again.closed).code).toBe(1000);
  }, 90_000);
});
