// The sessions list, the live sessions page and the pushed live transcript in a real browser, against
// GET /console/api/sessions and the console's Server-Sent Events stream. The transcript turns are written by a
// separate PostgreSQL connection pool, as another node's session would write them: the page hears of
// them only through the database's notifications.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { activateSession } from '../../src/sessions/index.js';
import { newId } from '../../src/ids.js';
import { createPool, insertTranscriptTurn, type Db } from '../../src/store/index.js';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';
import { defined } from '../helpers/defined.js';

let t: ConsoleGateway;
let browser: Browser;
let org: { orgId: string; key: string };
let otherNode: Db;
const ids: string[] = [];

async function bearer(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${org.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  t = await startConsoleGateway();
  org = await t.createOrg();
  await t.addUser(org.orgId, 'dev@example.com', 'developer');
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
  for (let i = 0; i < 27; i++) {
    const mode = i % 3 === 0 ? 'assistive_translation' : 'bidirectional_translation';
    const res = await bearer('POST', '/v1/sessions', { mode, source_language: 'en', target_language: 'es' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.id);
  }
  // Sessions 0..23 end; 24 goes live; 25 and 26 stay created.
  for (const id of ids.slice(0, 24)) expect((await bearer('POST', `/v1/sessions/${id}/end`)).status).toBe(200);
  await activateSession(t.gw.db, defined(ids[24], 'session 24'));
  otherNode = createPool(t.gw.config.databaseUrl, t.gw.config.databaseSchema, undefined, 2);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await otherNode?.end();
  await t?.stop();
});

async function signedIn(email = 'dev@example.com'): Promise<{ context: BrowserContext; cookie: string }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  await signIn(page, t.base, email);
  await page.close();
  const cookie = (await context.cookies()).find((c) => c.name === 'vb_console')!;
  return { context, cookie: `${cookie.name}=${cookie.value}` };
}

describe('sessions list', () => {
  it('pages through the sessions with Next/Previous and filters by status and mode', async () => {
    const { context } = await signedIn();
    const page = await context.newPage();
    await page.goto(`${t.base}/console/sessions`);
    const list = page.getByTestId('session-list');
    await list.waitFor({ timeout: 30_000 });
    expect(await list.locator('tbody tr').count()).toBe(25);
    expect(await list.textContent()).toContain(ids[0]);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => list.locator('tbody tr').count(), { timeout: 15_000 }).toBe(2);
    expect(await list.textContent()).toContain(ids[26]);
    expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => list.locator('tbody tr').count(), { timeout: 15_000 }).toBe(25);

    await page.getByLabel('Status').selectOption('active');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => list.locator('tbody tr').count(), { timeout: 15_000 }).toBe(1);
    expect(await list.textContent()).toContain(ids[24]);

    await page.getByLabel('Status').selectOption('ended');
    await page.getByLabel('Mode').selectOption('assistive_translation');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => list.locator('tbody tr').count(), { timeout: 15_000 }).toBe(8); // 0, 3, …, 21
    expect(await list.textContent()).not.toContain('bidirectional_translation');

    await page.getByLabel('Created from').fill('2001-01-01');
    await page.getByLabel('Created to').fill('2001-01-02');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No sessions match.').waitFor({ timeout: 15_000 });
    if (process.env.CONSOLE_SCREENSHOTS_DIR) {
      await page.getByLabel('Created from').fill('');
      await page.getByLabel('Created to').fill('');
      await page.getByLabel('Status').selectOption('');
      await page.getByLabel('Mode').selectOption('');
      await page.getByRole('button', { name: 'Filter' }).click();
      await list.waitFor();
      await page.screenshot({ path: `${process.env.CONSOLE_SCREENSHOTS_DIR}/console-sessions.png` });
    }
    await context.close();
  });

  it('lists the live sessions (active and created, not ended)', async () => {
    const { context } = await signedIn();
    const page = await context.newPage();
    await page.goto(`${t.base}/console/live`);
    const live = page.getByTestId('live-sessions');
    await live.waitFor({ timeout: 30_000 });
    expect(await live.locator('tbody tr').count()).toBe(3);
    const text = (await live.textContent())!;
    for (const id of ids.slice(24)) expect(text).toContain(id);
    expect(text).not.toContain(ids[0]);
    await context.close();
  });
});

describe('live transcript pushed over Server-Sent Events', () => {
  it('shows segments written elsewhere as they happen, then the end of the session, without polling', async () => {
    const { context } = await signedIn();
    const page = await context.newPage();
    const transcriptGets: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith(`/v1/sessions/${ids[24]}/transcript`)) transcriptGets.push(r.url());
    });
    await page.goto(`${t.base}/console/sessions/${ids[24]}`);
    await expect
      .poll(
        () =>
          page
            .getByTestId('live-feed')
            .textContent()
            .catch(() => ''),
        { timeout: 30_000 },
      )
      .toMatch(/^Live:/);
    await page.getByText('Nothing said yet.').waitFor({ timeout: 15_000 });
    const loads = transcriptGets.length;

    const turn = (sequence: number, text: string, translation: string) =>
      insertTranscriptTurn(otherNode, {
        sessionId: defined(ids[24], 'session 24'),
        orgId: org.orgId,
        sequence,
        speaker: 'customer',
        language: 'en',
        text,
        translation: { language: 'es', text: translation },
        confidence: 0.9,
        startTime: sequence,
        endTime: sequence + 1,
      });
    await turn(1, 'hello there', 'hola');
    const transcript = page.getByTestId('transcript');
    await expect.poll(() => transcript.textContent().catch(() => ''), { timeout: 15_000 }).toContain('hello there');
    await turn(2, 'how are you', 'cómo estás');
    await expect.poll(() => transcript.textContent(), { timeout: 15_000 }).toContain('cómo estás');
    expect(await transcript.locator('li').count()).toBe(2);
    // Pushed, not polled: no transcript request since the feed said ready.
    expect(transcriptGets.length).toBe(loads);

    expect((await bearer('POST', `/v1/sessions/${ids[24]}/end`)).status).toBe(200);
    await expect.poll(() => page.getByTestId('session-status').textContent(), { timeout: 15_000 }).toBe('ended');
    await context.close();
  });

  it('answers the event stream only to a signed-in user of the session organization', async () => {
    const { context, cookie } = await signedIn();
    const other = await t.createOrg();
    const foreign = await fetch(`${t.base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' }),
    }).then((r) => r.json());

    const anonymous = await fetch(`${t.base}/console/api/sessions/${ids[25]}/events`);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('sign_in_required');
    const cross = await fetch(`${t.base}/console/api/sessions/${foreign.id}/events`, { headers: { cookie } });
    expect(cross.status).toBe(404);
    expect((await cross.json()).error.code).toBe('session_not_found');

    const own = new AbortController();
    const res = await fetch(`${t.base}/console/api/sessions/${ids[25]}/events`, { headers: { cookie }, signal: own.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value);
    // An event of another organization's session is not on this stream, the own session's start is.
    await activateSession(otherNode, foreign.id);
    await activateSession(otherNode, defined(ids[25], 'session 25'));
    while (!text.includes('event: session.started')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain(`"id":"${ids[25]}"`);
    expect(text).not.toContain(foreign.id);
    own.abort();
    await context.close();
  });
});

describe('numbers and connections', () => {
  it('shows an owner the organization connections (no secrets) and numbers, read-only; others are refused', async () => {
    const conn = newId('pcon');
    await t.gw.db.query(
      `INSERT INTO provider_connections (id, org_id, provider, host, username, password_enc) VALUES ($1, $2, 'carrier_a', 'sip.carrier.example', 'acct', 'sealed-secret')`,
      [conn, org.orgId],
    );
    await t.gw.db.query('UPDATE organizations SET default_connection_id = $1 WHERE id = $2', [conn, org.orgId]);
    await t.gw.db.query(`INSERT INTO phone_numbers (id, org_id, number, connection_id) VALUES ($1, $2, '+14155550123', $3), ($4, $2, '+14155550124', NULL)`, [
      newId('pn'),
      org.orgId,
      conn,
      newId('pn'),
    ]);

    const { context, cookie } = await signedIn('owner@example.com');
    const page = await context.newPage();
    await page.goto(`${t.base}/console/`);
    await page.getByRole('link', { name: 'Numbers' }).click();
    const connections = page.getByTestId('connections');
    await connections.waitFor({ timeout: 30_000 });
    const row = (await connections.locator('tbody tr').first().textContent())!;
    expect(row).toContain(`${conn} (default)`);
    expect(row).toContain('sip.carrier.example:5060/udp');
    expect(row).toContain('set');
    const numbers = (await page.getByTestId('numbers').textContent())!;
    expect(numbers).toContain('+14155550123');
    expect(numbers).toContain('+14155550124');
    const raw = await fetch(`${t.base}/console/api/connections`, { headers: { cookie } }).then((r) => r.text());
    expect(raw).not.toContain('sealed-secret');
    expect(raw).not.toContain('acct');
    await context.close();

    const dev = await signedIn();
    expect((await fetch(`${t.base}/console/api/numbers`, { headers: { cookie: dev.cookie } })).status).toBe(403);
    const devPage = await dev.context.newPage();
    await devPage.goto(`${t.base}/console/`);
    await devPage.getByRole('link', { name: 'Sessions' }).waitFor({ timeout: 30_000 });
    expect(await devPage.getByRole('link', { name: 'Numbers' }).count()).toBe(0);
    await dev.context.close();
  });
});
