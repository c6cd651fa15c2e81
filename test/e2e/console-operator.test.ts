// The operator view and the portal's other pages in a real browser: an operator (created as the
// admin CLI does) sees this node's health, finds calls, suspends an organization (whose API key is
// refused at once); organization users never reach operator routes. Pages degrade when a route is absent.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, PASSWORD, type ConsoleGateway } from '../helpers/console-browser.js';
import { runCli } from '../helpers/cli.js';

const shots = process.env.CONSOLE_SCREENSHOTS_DIR;

let t: ConsoleGateway;
let browser: Browser;
let org: { orgId: string; key: string };

beforeAll(async () => {
  t = await startConsoleGateway();
  org = await t.createOrg(250);
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

/** The real `voxbridge` command against the test's schema. */
async function cli(args: string[], stdin?: string) {
  const r = await runCli(t.gw.config, args, { stdin, env: { PUBLIC_URL: t.base } });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

describe('admin CLI', () => {
  it('adds an operator with --password-stdin and a user with a one-time set-password link that works once', async () => {
    const op = await cli(['admin', 'operator', 'add', '--email', 'ops@example.com', '--password-stdin'], `${PASSWORD}\n`);
    expect(op.code, op.err).toBe(0);
    expect(JSON.parse(op.out)).toMatchObject({ email: 'ops@example.com', role: 'operator', org_id: null, has_password: true });

    const dup = await cli(['admin', 'operator', 'add', '--email', 'OPS@example.com', '--password-stdin'], `${PASSWORD}\n`);
    expect(dup.code).toBe(2);
    expect(dup.err).toMatch(/already exists/);

    const user = await cli(['admin', 'user', 'add', '--org', org.orgId, '--email', 'new@example.com', '--role', 'viewer']);
    expect(user.code, user.err).toBe(0);
    const created = JSON.parse(user.out);
    expect(created).toMatchObject({ role: 'viewer', has_password: false });
    expect(created.set_password_url).toMatch(new RegExp(`^${t.base}/console/set-password#token=`));

    const page = await browser.newPage();
    await page.goto(created.set_password_url);
    await page.getByLabel(/New password/).fill('a fresh password');
    await page.getByLabel('Repeat it').fill('a fresh password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password set' }).waitFor();
    await signIn(page, t.base, 'new@example.com', 'a fresh password');
    await page.close();

    const token = new URL(created.set_password_url).hash.replace('#token=', '');
    const again = await fetch(`${t.base}/console/api/auth/set_password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password: 'another password' }),
    });
    expect(again.status).toBe(400);
    expect((await again.json()).error.code).toBe('set_password_token_invalid');

    const badRole = await cli(['admin', 'user', 'add', '--org', org.orgId, '--email', 'x@example.com', '--role', 'admin']);
    expect(badRole.code).toBe(2);
    // Four CLI processes (each a cold tsx start and a password hash) plus a browser page: on a
    // loaded 2-core machine this took up to a minute.
  }, 180_000);
});

describe('operator view', () => {
  it('shows the node, finds nothing for an unknown Call-ID, and suspends then resumes an organization', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'ops@example.com');
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const row = page.locator('tbody tr').first();
    expect(await row.textContent()).toContain(t.gw.config.nodeId);
    expect(await row.textContent()).toMatch(/\d+\.\d \/ \d+\.\d \/ \d+\.\d ms/);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-operator-nodes.png') });

    await page.getByRole('link', { name: 'Live calls' }).click();
    await page.getByLabel('Number, Call-ID or session').fill('no-such-call@example');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No call matches.').waitFor();

    await page.getByRole('link', { name: 'Organizations' }).click();
    const orgRow = page.locator(`tr[data-org-id="${org.orgId}"]`);
    await orgRow.getByRole('button', { name: 'Suspend' }).click();
    await orgRow.getByRole('button', { name: 'Resume' }).waitFor();
    const refused = await fetch(`${t.base}/v1/agents`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('organization_inactive');
    await orgRow.getByRole('button', { name: 'Resume' }).click();
    await orgRow.getByRole('button', { name: 'Suspend' }).waitFor();
    expect((await fetch(`${t.base}/v1/agents`, { headers: { authorization: `Bearer ${org.key}` } })).status).toBe(200);
    await context.close();
  });

  it('refuses operator routes to an organization owner', async () => {
    const page = await browser.newPage();
    await signIn(page, t.base, 'owner@example.com');
    const status = await page.evaluate(async () => {
      const r = await fetch('/console/api/operator/organizations');
      return { status: r.status, code: (await r.json()).error.code };
    });
    expect(status).toEqual({ status: 403, code: 'operator_only' });
    await page.close();
  });
});

describe('portal pages', () => {
  it('renders the overview, keys, users and webhooks pages (an owner invites a user), also at phone width', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    expect(await page.getByTestId('credits').textContent()).toBe('250');
    if (shots) await page.screenshot({ path: path.join(shots, 'console-overview.png') });
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.locator('tbody tr').first().waitFor();
    if (shots) await page.screenshot({ path: path.join(shots, 'console-keys.png') });
    // An owner invites a developer; the one-time link shown lets them choose a password and sign in.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Email').fill('invited@example.com');
    await page.getByLabel('Role').selectOption('developer');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = (await page.locator('.shown-once code').textContent({ timeout: 15_000 }))!;
    expect(link).toMatch(new RegExp(`^${t.base}/console/set-password#token=`));
    await page.locator('tr', { hasText: 'invited@example.com' }).getByRole('cell', { name: 'invited', exact: true }).waitFor();
    const invited = await browser.newPage();
    await invited.goto(link);
    await invited.getByLabel(/New password/).fill('invited password');
    await invited.getByLabel('Repeat it').fill('invited password');
    await invited.getByRole('button', { name: 'Set password' }).click();
    await invited.getByRole('heading', { name: 'Password set' }).waitFor();
    await signIn(invited, t.base, 'invited@example.com', 'invited password');
    await invited.close();

    await page.getByRole('link', { name: 'Webhooks' }).click();
    const webhooksRoute = await fetch(`${t.base}/v1/webhook_endpoints`, { headers: { authorization: `Bearer ${org.key}` } });
    if (webhooksRoute.status === 404) await page.getByText('Not available on this gateway').waitFor();
    else await page.getByRole('heading', { name: 'Add an endpoint' }).waitFor();
    await page.setViewportSize({ width: 390, height: 800 });
    await page.getByRole('link', { name: 'Try it' }).click();
    await page.getByRole('button', { name: 'Start talking' }).waitFor();
    // Nothing wider than the phone: the layout reflows instead of scrolling sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    if (shots) await page.screenshot({ path: path.join(shots, 'console-phone.png') });
    await context.close();
  });
});
