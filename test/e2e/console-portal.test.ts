// The developer portal's overview usage charts, the agent editor and adding numbers, in a real
// Chromium against a gateway on a free port with its own schema. Usage rows are written straight
// into the tables the overview aggregates (sessions days ago cannot be made any other way), with
// time-ordered ids matching their creation time, as the gateway's own ids are.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, type ConsoleGateway } from '../helpers/console-browser.js';
import { idFloor, type IdPrefix } from '../../src/ids.js';
import { createConnection } from '../../src/store/index.js';

let t: ConsoleGateway;
let browser: Browser;
let org: { orgId: string; key: string };
let other: { orgId: string; key: string };
const shots = process.env.CONSOLE_SCREENSHOTS_DIR;
const DAY = 86_400_000;

/** An id of this prefix created at `ms` (the gateway's ids are time-ordered the same way). */
const idAt = (prefix: IdPrefix, ms: number) => idFloor(prefix, ms).slice(0, -8) + randomBytes(4).toString('hex');
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const todayNoon = Math.floor(Date.now() / DAY) * DAY + 12 * 3600_000;
/** Noon UTC `n` days ago, or a minute ago for today (never in the future). */
const daysAgo = (n: number) => Math.min(Date.now() - 1000, todayNoon - n * DAY);

async function insertSession(orgId: string, at: number, o: { seconds?: number; endReason?: string } = {}): Promise<string> {
  const id = idAt('sess', at);
  await t.gw.db.query(
    `INSERT INTO sessions (id, org_id, status, mode, audio, voice, recording, created_at, started_at, ended_at, duration_seconds, end_reason)
     VALUES ($1, $2, 'ended', 'bidirectional_translation', '{}', '{}', '{"enabled":false}', $3, $3, $4, $5, $6)`,
    [id, orgId, new Date(at), new Date(at + (o.seconds ?? 60) * 1000), o.seconds ?? 60, o.endReason ?? 'api_request'],
  );
  return id;
}

async function api(path: string, init: RequestInit = {}, key = org.key): Promise<Response> {
  return fetch(`${t.base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}

/** A fetch from inside the signed-in page: the cookie, and the CSRF token unless `csrf` is false. */
async function pageFetch(page: Page, method: string, url: string, body?: unknown, csrf = true): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ({ method, url, body, csrf }) => {
      const me = await (await fetch('/console/api/auth/me')).json();
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (csrf) headers['x-csrf-token'] = me.csrf_token;
      const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: await r.json() };
    },
    { method, url, body, csrf },
  );
}

beforeAll(async () => {
  t = await startConsoleGateway();
  org = await t.createOrg(300);
  other = await t.createOrg(300);
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
  await t.addUser(org.orgId, 'dev@example.com', 'developer');
  await t.addUser(org.orgId, 'viewer@example.com', 'viewer');
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe('overview usage over time', () => {
  it('charts sessions, minutes, analyses and credits per day, the live count and recent errors, for this organization and period only', async () => {
    // Today: two ended sessions (90 s and 30 s), one of them lost with its node; an analysis that failed
    // and one that completed; two credits taken. Three days ago: one 10-minute session. Ten days
    // ago: one session (inside 14 days, outside 7). Twenty days ago: outside both. Another
    // organization's session today must not count.
    const s1 = await insertSession(org.orgId, daysAgo(0), { seconds: 90 });
    const lost = await insertSession(org.orgId, daysAgo(0), { seconds: 30, endReason: 'node_lost' });
    await insertSession(org.orgId, daysAgo(3), { seconds: 600 });
    await insertSession(org.orgId, daysAgo(10), { seconds: 120 });
    await insertSession(org.orgId, daysAgo(20), { seconds: 999 });
    await insertSession(other.orgId, daysAgo(0), { seconds: 300, endReason: 'node_lost' });
    for (const [status, error] of [
      ['completed', null],
      ['failed', 'transcript unreadable'],
    ] as const) {
      await t.gw.db.query(
        `INSERT INTO analyses (id, session_id, org_id, include, status, error, created_at, completed_at) VALUES ($1, $2, $3, '{summary}', $4, $5, $6, $6)`,
        [idAt('anl', daysAgo(0)), s1, org.orgId, status, error, new Date(daysAgo(0))],
      );
    }
    await t.gw.db.query(`INSERT INTO credit_ledger (org_id, delta, reason, created_at) VALUES ($1, -1, 'analysis', $2), ($1, -1, 'analysis', $2)`, [
      org.orgId,
      new Date(daysAgo(0)),
    ]);
    await t.gw.db.query(
      `INSERT INTO recordings (id, session_id, org_id, channel, status, error, created_at) VALUES ($1, $2, $3, 'mixed', 'failed', 'encoder crashed', $4)`,
      [idAt('rec', daysAgo(0)), s1, org.orgId, new Date(daysAgo(0))],
    );
    // A webhook delivery that gave up (its endpoint answered 500 every time).
    const wh = idAt('wh', daysAgo(1));
    const evt = idAt('evt', daysAgo(1));
    await t.gw.db.query(`INSERT INTO webhook_endpoints (id, org_id, url, secret_enc) VALUES ($1, $2, 'https://hooks.example/x', 'x')`, [wh, org.orgId]);
    await t.gw.db.query(`INSERT INTO webhook_events (id, org_id, type, data) VALUES ($1, $2, 'session.ended', $3)`, [evt, org.orgId, { id: s1 }]);
    await t.gw.db.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, org_id, event_type, ordering_key, status, attempts, last_status_code, event_created_at, finished_at)
       VALUES ($1, $2, $3, 'session.ended', $4, 'failed', 8, 500, $5, $5)`,
      [evt, wh, org.orgId, s1, new Date(daysAgo(1))],
    );
    // One live session (created through the API: the open-session count is kept by the database).
    const created = await api('/v1/sessions', { method: 'POST', body: JSON.stringify({ mode: 'bidirectional_translation' }) });
    expect(created.status).toBe(201);

    const context = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'viewer@example.com');
    await page.getByTestId('chart-sessions').waitFor({ timeout: 30_000 });
    const total = (id: string) => page.getByTestId(`chart-${id}-total`).textContent();
    expect(await total('sessions')).toBe('5'); // with the live one created just now
    expect(await total('minutes')).toBe('14'); // 90 + 30 + 600 + 120 seconds
    expect(await total('analyses')).toBe('2');
    expect(await total('credits')).toBe('2');
    expect(await page.getByTestId('chart-sessions').textContent()).toContain('(1 ended in error)');
    expect(await page.getByTestId('live-count').textContent()).toBe('1');
    // Per day: today's row in the sessions table (hidden under "Show numbers", still in the page).
    const today = page.getByTestId('chart-sessions-table').locator('tr', { hasText: dayOf(Date.now()) });
    expect(await today.locator('td').allTextContents()).toEqual([dayOf(Date.now()), '3', '1']);
    expect(await page.getByTestId('chart-sessions-table').locator('tbody tr').count()).toBe(14);

    const errors = page.getByTestId('recent-errors');
    const text = (await errors.textContent()) ?? '';
    expect(text).toContain('Session ended: node_lost');
    expect(text).toContain('Analysis failed: transcript unreadable');
    expect(text).toContain('Recording (mixed) failed: encoder crashed');
    expect(text).toContain(`Webhook session.ended to ${wh} failed after 8 attempts: HTTP 500`);
    expect(await errors.getByRole('link', { name: lost }).count()).toBe(1);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-overview-usage.png'), fullPage: true });

    // Seven days: the session ten days ago drops out.
    await page.getByLabel('Period').selectOption('7');
    await expect.poll(() => total('sessions'), { timeout: 15_000 }).toBe('4');
    expect(await page.getByTestId('chart-sessions-table').locator('tbody tr').count()).toBe(7);

    // The route itself: sign-in first, then the query is checked.
    expect((await pageFetch(page, 'GET', '/console/api/usage?days=0')).status).toBe(400);
    const anon = await fetch(`${t.base}/console/api/usage`);
    expect(anon.status).toBe(401);
    expect((await anon.json()).error.code).toBe('sign_in_required');
    await context.close();
  });

  it('shows an empty period as such', async () => {
    const fresh = await t.createOrg(10);
    await t.addUser(fresh.orgId, 'fresh@example.com', 'owner');
    const page = await browser.newPage();
    await signIn(page, t.base, 'fresh@example.com');
    await page.getByText('No sessions from').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('chart-sessions-total').textContent()).toBe('0');
    await page.getByText('No errors in the last 14 days.').waitFor();
    expect(await page.getByTestId('live-count').textContent()).toBe('0');
    await page.close();
  });
});

describe('agent editor', () => {
  it("creates an agent field by field, showing each of the API's validation messages at its field, then edits it", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 1400 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'dev@example.com');
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByText('No agents yet.').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'New agent' }).click();

    await page.getByLabel('Name', { exact: true }).fill('Front desk');
    await page.getByLabel('Greeting').fill('Hello, this is the front desk.');
    await page.getByRole('button', { name: 'Add tool' }).click();
    await page.getByLabel('Tool name').fill('lookup_order');
    await page.getByLabel('Tool description').fill('Looks an order up.');
    await page.getByLabel('Webhook URL').fill('http://tools.example/lookup'); // not HTTPS
    await page.getByLabel('Parameters (JSON Schema)').fill('{"type": "string"}'); // not an object schema
    await page.getByRole('button', { name: 'Add intent' }).click();
    await page.getByLabel('Intent name').fill('order_status');
    await page.getByLabel('Example phrases (one per line)').fill('where is my order\nwhat is the status of my order');
    await page.getByLabel('Response').fill('Your order is on its way.');
    await page.getByLabel('Tool to call').selectOption('lookup_order');
    await page.getByLabel('Hand over to a human on request').check();
    await page.getByLabel('Escalation keywords (one per line)').fill('talk to a person\nhuman');
    await page.getByLabel('Transfer to').fill('the front office'); // neither E.164 nor a SIP URI
    await page.getByRole('button', { name: 'Add article' }).click();
    await page.getByLabel('Article title').fill('Opening hours');
    await page.getByLabel('Article text').fill('We are open from nine to five, Monday to Friday.');

    const save = page.getByRole('button', { name: 'Save agent' });
    /** Saves and returns the message shown at the field that is now marked invalid. */
    const refusedAt = async (label: string) => {
      await save.click();
      const field = page.getByLabel(label);
      await expect.poll(() => field.getAttribute('aria-invalid'), { timeout: 15_000 }).toBe('true');
      const described = (await field.getAttribute('aria-describedby'))!;
      // The keyboard is moved to the field the API named.
      await expect.poll(() => field.evaluate((el) => el === document.activeElement), { timeout: 15_000 }).toBe(true);
      return (await page.locator(`#${described}`).textContent()) ?? '';
    };
    expect(await refusedAt('Webhook URL')).toContain('tools.0.webhook_url');
    if (shots) await page.screenshot({ path: path.join(shots, 'console-agent-editor.png') });
    await page.getByLabel('Webhook URL').fill('https://tools.example/lookup');
    expect(await refusedAt('Transfer to')).toContain('escalation.transfer_to');
    await page.getByLabel('Transfer to').fill('+14155550100');
    // A rule JSON Schema cannot express, checked by the API's handler: the same message as for a key.
    const viaKey = await api('/v1/agents', {
      method: 'POST',
      body: JSON.stringify({ name: 'x', tools: [{ name: 't', description: 'd', parameters: { type: 'string' } }] }),
    });
    const keyMessage = (await viaKey.json()).error.message as string;
    expect(await refusedAt('Parameters (JSON Schema)')).toBe(keyMessage);
    await page.getByLabel('Parameters (JSON Schema)').fill('{"type": "object", "properties": {"order_id": {"type": "string"}}}');
    await save.click();
    await page.getByText(/^Saved agt_/).waitFor({ timeout: 15_000 });
    const row = page.getByTestId('agents').locator('tr', { hasText: 'Front desk' });
    expect(await row.locator('td').nth(2).textContent()).toBe('1');

    // What the API stored is what was typed, field by field.
    const list = await (await api('/v1/agents?limit=10')).json();
    expect(list.data).toHaveLength(1);
    const agent = list.data[0];
    expect(agent).toMatchObject({
      name: 'Front desk',
      greeting: 'Hello, this is the front desk.',
      language: 'en',
      brain: { provider: 'scripted' },
      intents: [
        { name: 'order_status', examples: ['where is my order', 'what is the status of my order'], reply: 'Your order is on its way.', tool: 'lookup_order' },
      ],
      tools: [
        { name: 'lookup_order', webhook_url: 'https://tools.example/lookup', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } },
      ],
      escalation: { keywords: ['talk to a person', 'human'], transfer_to: '+14155550100' },
      knowledge_base: [{ title: 'Opening hours', content: 'We are open from nine to five, Monday to Friday.' }],
    });

    // Edit: change the greeting and drop the escalation; the rest stays.
    await row.getByRole('button', { name: 'Edit Front desk' }).click();
    expect(await page.getByLabel('Example phrases (one per line)').inputValue()).toBe('where is my order\nwhat is the status of my order');
    await page.getByLabel('Greeting').fill('Good morning, front desk.');
    await page.getByLabel('Hand over to a human on request').uncheck();
    await save.click();
    await page.getByText(/^Saved agt_/).waitFor({ timeout: 15_000 });
    const after = await (await api(`/v1/agents/${agent.id}`)).json();
    expect(after).toMatchObject({ greeting: 'Good morning, front desk.', escalation: null, intents: agent.intents, tools: agent.tools });

    // "Talk to this agent" opens the softphone on an ai_agent session with this agent.
    await row.getByRole('link', { name: 'Talk to Front desk' }).click();
    expect(await page.getByLabel('Mode').inputValue()).toBe('ai_agent');
    await expect.poll(() => page.getByLabel('Agent', { exact: true }).inputValue(), { timeout: 15_000 }).toBe(agent.id);
    await page.getByText('You speak as the customer; the AI agent answers.').waitFor();
    await context.close();
  });

  it('gives viewers no editor, and the API refuses their writes', async () => {
    const page = await browser.newPage();
    await signIn(page, t.base, 'viewer@example.com');
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByTestId('agents').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    const refused = await pageFetch(page, 'POST', '/v1/agents', { name: 'Sneaky' });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'insufficient_permissions' } } });
    await page.close();
  });
});

describe('numbers', () => {
  it('lets an owner add a number to an existing connection, with validation and conflicts shown', async () => {
    const conn = await createConnection(t.gw.db, {
      orgId: org.orgId,
      provider: 'carrier_a',
      host: '192.0.2.10',
      port: 5060,
      transport: 'udp',
      inboundCidrs: [],
    });
    const foreign = await createConnection(t.gw.db, {
      orgId: other.orgId,
      provider: 'carrier_b',
      host: '192.0.2.20',
      port: 5060,
      transport: 'udp',
      inboundCidrs: [],
    });
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    await page.getByRole('link', { name: 'Numbers' }).click();
    await page.getByLabel('Connection').selectOption(conn.id);

    await page.getByLabel('Number (E.164)').fill('4155550123');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.getByRole('alert').filter({ hasText: 'must be E.164' }).waitFor({ timeout: 15_000 });
    expect(await page.getByLabel('Number (E.164)').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Number (E.164)').fill('+14155550123');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.getByText(`+14155550123 added to ${conn.id}.`).waitFor({ timeout: 15_000 });
    const row = page.getByTestId('numbers').locator('tr', { hasText: '+14155550123' });
    expect(await row.textContent()).toContain(conn.id);
    // Both lists reload after the add, in no set order: wait for the connection's count instead of reading it at once.
    const numbersOnConnection = page.getByTestId('connections').locator('tr', { hasText: conn.id }).locator('td').nth(5);
    await numbersOnConnection.filter({ hasText: /^1$/ }).waitFor({ timeout: 15_000 });
    if (shots) await page.screenshot({ path: path.join(shots, 'console-numbers.png'), fullPage: true });

    await page.getByLabel('Number (E.164)').fill('+14155550123');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.getByRole('alert').filter({ hasText: 'already a managed number' }).waitFor({ timeout: 15_000 });

    // Another organization's connection does not exist for this owner; a missing CSRF token is refused.
    expect(await pageFetch(page, 'POST', '/console/api/numbers', { number: '+14155550124', connection_id: foreign.id })).toMatchObject({
      status: 400,
      body: { error: { code: 'connection_not_found', param: 'connection_id' } },
    });
    expect(await pageFetch(page, 'POST', '/console/api/numbers', { number: '+14155550124', connection_id: conn.id }, false)).toMatchObject({
      status: 403,
      body: { error: { code: 'csrf_token_invalid' } },
    });
    const { rows } = await t.gw.db.query('SELECT number, org_id, connection_id FROM phone_numbers ORDER BY number');
    expect(rows).toEqual([{ number: '+14155550123', org_id: org.orgId, connection_id: conn.id }]);
    await context.close();
  });

  it('refuses a developer (403) and shows them no Numbers page', async () => {
    const page = await browser.newPage();
    await signIn(page, t.base, 'dev@example.com');
    expect(await page.getByRole('link', { name: 'Numbers' }).count()).toBe(0);
    const conn = await createConnection(t.gw.db, {
      orgId: org.orgId,
      provider: 'carrier_a',
      host: '192.0.2.11',
      port: 5060,
      transport: 'udp',
      inboundCidrs: [],
    });
    expect(await pageFetch(page, 'POST', '/console/api/numbers', { number: '+14155550125', connection_id: conn.id })).toMatchObject({
      status: 403,
      body: { error: { code: 'insufficient_permissions' } },
    });
    await page.goto(`${t.base}/console/numbers`);
    await page.getByRole('alert').filter({ hasText: 'Only organization owners' }).first().waitFor({ timeout: 15_000 });
    await page.close();
  });
});
