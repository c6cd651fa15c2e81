// The operator view across nodes, in a real browser: node A (api, worker, console) in this process
// and node B (api, media, SIP) in its own process share PostgreSQL and Redis. A's operator view lists
// both from their heartbeats, shows the live quality of a leg B carries (a real SIPp callee), draws
// the call's captured SIP as a ladder, and shows B lost once it is killed; a node shut down cleanly
// disappears at once.
import dgram from 'node:dgram';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, PASSWORD, type ConsoleGateway } from '../helpers/console-browser.js';
import { testConfig } from '../helpers/gateway.js';
import { eventually, freePort, startSipp } from '../helpers/sip-harness.js';
import { getSipTrace, updateOrg } from '../../src/store/index.js';
import { startGateway } from '../../src/server.js';

const shots = process.env.CONSOLE_SCREENSHOTS_DIR;
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scale-out-child-node.ts');
const ENGINES_OFF = { stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } };
// Beats every 500 ms: a record expires 1.5 s after a node's last beat.
const HEARTBEAT = { nodeHeartbeatMs: 500 };

let a: ConsoleGateway;
let b: ChildProcess | undefined;
let bUrl: string;
let browser: Browser;
let org: { orgId: string; key: string };
let cookie: string;

/** Node B in its own process on A's schema and prefix (so the test can kill it); resolves with its HTTP URL. */
async function startNodeB(): Promise<string> {
  const httpPort = await freePort();
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  const config = testConfig({
    nodeId: 'node-b',
    roles: ['api', 'media'],
    httpPort,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    engines: ENGINES_OFF,
    databaseSchema: a.gw.config.databaseSchema,
    redisKeyPrefix: a.gw.config.redisKeyPrefix,
    sip: { enabled: true, transports: ['udp'], rtpPortMin: rtpBase, rtpPortMax: rtpBase + 98, rtpTimeoutSeconds: 60 },
    limits: HEARTBEAT,
  });
  b = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, VB_CHILD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  b.stderr!.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: b.stdout! });
  return new Promise((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { httpUrl: string }).httpUrl));
    b!.once('exit', (code) => reject(new Error(`node B exited (${code}) before serving:\n${stderr}`)));
  });
}

beforeAll(async () => {
  a = await startConsoleGateway({ overrides: { nodeId: 'node-a', limits: HEARTBEAT } });
  org = await a.createOrg();
  await updateOrg(a.gw.db, org.orgId, { sipEnabled: true });
  await a.addUser(null, 'ops@example.com', 'operator');
  bUrl = await startNodeB();
  browser = await launchChromium();
  const res = await fetch(`${a.base}/console/api/auth/sign_in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ops@example.com', password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  cookie = res.headers.get('set-cookie')!.split(';')[0]!;
}, 90_000);
afterAll(async () => {
  if (b && b.exitCode === null && b.signalCode === null) b.kill('SIGKILL');
  await browser?.close();
  await a?.stop();
});

/** An operator route on node A, with the operator's cookie. */
async function operatorApi(route: string): Promise<any> {
  const res = await fetch(`${a.base}/console/api/operator/${route}`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return res.json();
}
const nodeOf = async (id: string) => ((await operatorApi('nodes')).data as Array<{ id: string; state: string; [k: string]: any }>).find((n) => n.id === id);

async function v1(base: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${org.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

/** The callee's RTP: one PCMU packet back (its own SSRC and sequence) for each packet received, to where it came from. */
async function calleeMedia(): Promise<{ port: number; close(): void }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  let seq = 0;
  socket.on('message', (_m, from) => {
    const p = Buffer.alloc(12 + 160, 0xff);
    p[0] = 0x80;
    p[1] = 0;
    p.writeUInt16BE(seq & 0xffff, 2);
    p.writeUInt32BE((seq * 160) >>> 0, 4);
    p.writeUInt32BE(0x5eed1234, 8);
    seq++;
    socket.send(p, from.port, from.address);
  });
  return { port: socket.address().port, close: () => socket.close() };
}

describe('operator view across two nodes', () => {
  it('lists both nodes, the live quality of a leg on the other node, and the call as a SIP ladder', async () => {
    const listed = await eventually(async () => {
      const { data } = await operatorApi('nodes');
      return data.length === 2 && data.every((n: { state: string }) => n.state === 'live') ? data : null;
    });
    const [nodeA, nodeB] = listed;
    expect(nodeA).toMatchObject({ id: 'node-a', answering: true, roles: ['api', 'worker'], url: a.base, sip: null, live_sessions: null, live_calls: null });
    expect(nodeB).toMatchObject({ id: 'node-b', answering: false, roles: ['api', 'media'], url: bUrl, live_sessions: 0, live_calls: 0, period_ms: 500 });
    expect(nodeB.sip).toMatchObject({ address: '127.0.0.1' });
    expect(nodeB.sip.port).toBeGreaterThan(0);
    expect(typeof nodeB.cpu_percent).toBe('number');
    // The media clock's admission: only a node with SIP has one (the tests' nodes run with it off).
    expect(nodeA.media_overload).toBeNull();
    expect(nodeB.media_overload).toEqual({ enabled: false, overloaded: false, late_percent: 0, loop_busy_percent: 0, overloads: 0 });

    // A leg on node B: the session is created through A, dialled on B (the node with SIP). The
    // callee's media is a socket here that answers each packet B sends with one of its own.
    const media = await calleeMedia();
    const callee = await startSipp({ scenario: 'uas-answer-media.xml', keys: { rtp_port: String(media.port) }, timeoutSeconds: 180 });
    const created = await v1(a.base, 'POST', '/v1/sessions', {
      mode: 'help_chat_voice',
      routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sessionId: string = created.body.id;
    const dial = await v1(bUrl, 'POST', `/v1/sessions/${sessionId}/dial`, { party: 'customer', ring_timeout_seconds: 10 });
    expect(dial.status, JSON.stringify(dial.body)).toBe(200);
    const callSid: string = dial.body.call_sid;

    // Node A has no telephony: the quality it shows comes from B's heartbeat, and it grows.
    const liveCall = async (more = 0) =>
      eventually(async () => {
        const c = (await operatorApi('calls')).data.find((x: { call_sid: string }) => x.call_sid === callSid);
        return c?.quality_live && c.quality.packets_sent > more && c.quality.packets_received > 0 ? c : null;
      });
    const first = await liveCall();
    expect(first).toMatchObject({ node: 'node-b', session_id: sessionId, party: 'customer', direction: 'outbound', ended_at: null });
    expect(typeof first.quality.mos).toBe('number');
    expect(first.quality).toHaveProperty('jitter_ms');
    expect(first.quality).toHaveProperty('loss_percent');
    await liveCall(first.quality.packets_sent + 10);
    await eventually(async () => (await nodeOf('node-b'))?.live_calls === 1);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, a.base, 'ops@example.com');
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const rowB = page.locator('tr[data-node-id="node-b"][data-state="live"]');
    await rowB.waitFor();
    await page.locator('tr[data-node-id="node-a"]', { hasText: '(this node)' }).waitFor();
    await rowB.getByText(`SIP 127.0.0.1:${nodeB.sip.port}`).waitFor();
    // exact: the row's latency cell ("… / 148.1 / 148.1 ms") can contain "1 / 1" too.
    await rowB.getByText('1 / 1', { exact: true }).waitFor();
    expect(await page.getByTestId('nodes-live').textContent()).toBe('2');
    if (shots) await page.screenshot({ path: path.join(shots, 'console-operator-two-nodes.png') });

    await page.getByRole('link', { name: 'Live calls' }).click();
    const callRow = page.locator(`tr[data-call-sid="${callSid}"]`);
    await callRow.getByText('node-b').waitFor();
    await callRow.getByText('(live)').waitFor();
    expect(await callRow.textContent()).toMatch(/\d+ sent/);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-operator-calls.png') });

    // The capture is written in batches off the call path: wait for the ACK before opening the ladder.
    await eventually(async () => (await getSipTrace(a.gw.db, callSid)).some((m) => m.method === 'ACK'), 20_000);
    await callRow.getByRole('link', { name: callSid }).click();
    await page.getByRole('heading', { name: 'SIP ladder' }).waitFor();
    expect(await page.getByTestId('ladder-call-id').textContent()).toBe(callSid);
    const invite = page.getByRole('button', { name: /^1\. INVITE \(SDP\), 127\.0\.0\.1:\d+ to 127\.0\.0\.1:\d+/ });
    await invite.waitFor();
    const raw = (text: RegExp) => page.getByTestId('sip-raw').filter({ hasText: text }).waitFor();
    await raw(/^INVITE sip:/);
    await page.getByRole('button', { name: /\. 200 OK \(SDP\), / }).click();
    await raw(/^SIP\/2\.0 200 OK/);
    await page.getByRole('button', { name: /\. ACK, / }).waitFor();
    // Keyboard: the first arrow takes focus and Enter shows its message.
    await invite.focus();
    expect(await invite.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await raw(new RegExp(`^INVITE sip:callee@127\\.0\\.0\\.1:${callee.port}`));
    if (shots) await page.screenshot({ path: path.join(shots, 'console-operator-sip-ladder.png') });

    // The captured-calls search finds it by session too.
    await page.getByRole('link', { name: '← Captured calls' }).click();
    await page.getByLabel('Call-ID, number or session').fill(sessionId);
    await page.getByRole('button', { name: 'Find captured calls' }).click();
    await page.getByRole('link', { name: callSid }).waitFor();

    const hang = await v1(bUrl, 'POST', `/v1/sessions/${sessionId}/hangup`, {});
    expect(hang.status).toBe(200);
    const done = await callee.done;
    expect(done.code, done.errors).toBe(0);
    media.close();
    // Ended: no live record any more; the row carries the final figures stored at the end.
    const ended = await eventually(async () => {
      const c = (await operatorApi(`calls?q=${encodeURIComponent(callSid)}`)).data[0];
      return c?.ended_at ? c : null;
    });
    expect(ended).toMatchObject({ quality_live: false, node: null });
    expect(ended.quality.packets_sent).toBeGreaterThan(first.quality.packets_sent);
    await context.close();
  }, 120_000);

  it('shows a killed node lost; a node shut down cleanly disappears at once', async () => {
    const exited = new Promise((r) => b!.once('exit', r));
    b!.kill('SIGKILL');
    await exited;
    await eventually(async () => (await nodeOf('node-b'))?.state === 'lost', 20_000);
    expect((await nodeOf('node-a'))?.state).toBe('live');

    const page = await browser.newPage();
    await signIn(page, a.base, 'ops@example.com');
    const rowB = page.locator('tr[data-node-id="node-b"]');
    await rowB.getByText('lost (no heartbeat)').waitFor();
    expect(await rowB.textContent()).toMatch(/Last heartbeat \d+(\.\d)? s ago/);
    expect(await page.getByTestId('nodes-live').textContent()).toBe('1');

    // Node C in this process, then shut down: its record goes with it, nothing is left to turn lost.
    const c = await startGateway(
      testConfig({
        nodeId: 'node-c',
        roles: ['api'],
        databaseSchema: a.gw.config.databaseSchema,
        redisKeyPrefix: a.gw.config.redisKeyPrefix,
        limits: HEARTBEAT,
      }),
      { migrate: false },
    );
    expect((await nodeOf('node-c'))?.state).toBe('live');
    await page.locator('tr[data-node-id="node-c"]').waitFor();
    await c.close();
    expect(await nodeOf('node-c')).toBeUndefined();
    await page.locator('tr[data-node-id="node-c"]').waitFor({ state: 'detached' });
    await page.close();
  }, 60_000);
});
