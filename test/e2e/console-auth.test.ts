// The console's sign-in in a real browser (Debian chromium): sign in, lockout after repeated
// failures, CSRF refusal, sign out everywhere, the cross-organization 404, and API keys created
// and revoked from the portal with their effect on /v1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn, startConsoleGateway, PASSWORD, type ConsoleGateway } from '../helpers/console-browser.js';

let t: ConsoleGateway;
let browser: Browser;
let org: { orgId: string; key: string };
let otherOrg: { orgId: string; key: string };

beforeAll(async () => {
  t = await startConsoleGateway({
    overrides: { console: { enabled: true, sessionTtlSeconds: 600, loginMaxFailures: 3, lockoutSeconds: 120, secureCookies: null } },
  });
  org = await t.createOrg(777);
  otherOrg = await t.createOrg();
  await t.addUser(org.orgId, 'owner@example.com', 'owner');
  await t.addUser(org.orgId, 'viewer@example.com', 'viewer');
  await t.addUser(org.orgId, 'locked@example.com', 'developer');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

async function bearer(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

describe('sign-in', () => {
  it('signs in with the form, shows the organization, and sets an httpOnly SameSite cookie', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    await expect(page.getByTestId('credits').textContent()).resolves.toBe('777');
    const cookie = (await context.cookies()).find((c) => c.name === 'vb_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });
    // The page's JavaScript cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain('vb_console');
    await context.close();
  });

  it('refuses a wrong password with a message, then locks the account out even for the right one', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.base}/console/`);
    for (let i = 0; i < 3; i++) {
      await page.getByLabel('Email').fill('locked@example.com');
      await page.getByLabel('Password').fill(`wrong-${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('alert').textContent({ timeout: 15_000 })).resolves.toMatch(/email or password is wrong/);
    }
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/Too many failed sign-ins/).waitFor({ timeout: 15_000 });
    const res = await fetch(`${t.base}/console/api/auth/sign_in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'LOCKED@example.com', password: PASSWORD }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await res.json()).error.code).toBe('sign_in_locked');
    await context.close();
  });

  it('refuses a state change without the CSRF token, on the console routes and on /v1', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    const results = await page.evaluate(async () => {
      const post = async (path: string, headers: Record<string, string>) => {
        const r = await fetch(path, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ environment: 'test', scopes: ['sessions:read'] }),
        });
        return { status: r.status, code: (await r.json()).error?.code };
      };
      return {
        keyNoToken: await post('/console/api/keys', {}),
        keyWrongToken: await post('/console/api/keys', { 'x-csrf-token': 'forged' }),
        sessionNoToken: await post('/v1/sessions', {}),
      };
    });
    expect(results.keyNoToken).toEqual({ status: 403, code: 'csrf_token_invalid' });
    expect(results.keyWrongToken).toEqual({ status: 403, code: 'csrf_token_invalid' });
    expect(results.sessionNoToken).toEqual({ status: 403, code: 'csrf_token_invalid' });
    await context.close();
  });

  it("reads only its own organization (another organization's session is a 404) and a viewer cannot write", async () => {
    const theirs = await bearer(otherOrg.key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    expect(theirs.status).toBe(201);
    const ours = await bearer(org.key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.base, 'viewer@example.com');
    const seen = await page.evaluate(
      async ([a, b]) => {
        const get = async (id: string) => (await fetch(`/v1/sessions/${id}`)).status;
        const me = await (await fetch('/console/api/auth/me')).json();
        const create = await fetch('/v1/sessions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrf_token },
          body: JSON.stringify({ mode: 'bidirectional_translation' }),
        });
        return { mine: await get(a), theirs: await get(b), create: create.status, createCode: (await create.json()).error.code };
      },
      [ours.body.id, theirs.body.id],
    );
    expect(seen).toEqual({ mine: 200, theirs: 404, create: 403, createCode: 'insufficient_permissions' });
    await context.close();
  });

  it('signs out everywhere: another browser signed in as the same user loses its sign-in', async () => {
    const a = await browser.newContext();
    const b = await browser.newContext();
    const pageA = await a.newPage();
    const pageB = await b.newPage();
    await signIn(pageA, t.base, 'owner@example.com');
    await signIn(pageB, t.base, 'owner@example.com');
    await pageA.getByRole('button', { name: 'Sign out everywhere' }).click();
    await pageA.getByRole('button', { name: 'Sign in' }).waitFor();
    const statusB = await pageB.evaluate(async () => (await fetch('/console/api/auth/me')).status);
    expect(statusB).toBe(401);
    await pageB.reload();
    await pageB.getByRole('button', { name: 'Sign in' }).waitFor();
    await a.close();
    await b.close();
  });
});

describe('API keys from the portal', () => {
  it('creates a key shown once that works on /v1, lists it by prefix, and revokes it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    await page.getByLabel('agents:write').uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent({ timeout: 15_000 }))!;
    expect(key).toMatch(/^sk_test_[0-9a-z]+$/);

    expect((await bearer(key, 'GET', '/v1/agents')).status).toBe(200);
    expect(await bearer(key, 'POST', '/v1/agents', { name: 'x' })).toMatchObject({ status: 403, body: { error: { code: 'insufficient_permissions' } } });

    // Listed by its hint, never in full after creation.
    const row = page.locator('tr', { hasText: key.slice(0, 12) });
    await row.waitFor();
    expect(await page.content()).toContain(key); // still the one-time panel…
    await page.reload();
    await page.locator('tr', { hasText: key.slice(0, 12) }).waitFor();
    expect(await page.content()).not.toContain(key); // …gone after a reload

    page.once('dialog', (d) => void d.accept());
    await page
      .locator('tr', { hasText: key.slice(0, 12) })
      .getByRole('button', { name: /Revoke/ })
      .click();
    await page
      .locator('tr', { hasText: key.slice(0, 12) })
      .getByText('revoked')
      .waitFor({ timeout: 15_000 });
    expect(await bearer(key, 'GET', '/v1/agents')).toMatchObject({ status: 401, body: { error: { code: 'api_key_revoked' } } });
    await context.close();
  });

  it("answers 404 for revoking another organization's key", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, t.base, 'owner@example.com');
    const other = await t.createOrg();
    const status = await page.evaluate(async (id) => {
      const me = await (await fetch('/console/api/auth/me')).json();
      const r = await fetch(`/console/api/keys/${id}/revoke`, { method: 'POST', headers: { 'x-csrf-token': me.csrf_token } });
      return { status: r.status, code: (await r.json()).error.code };
    }, other.keyId);
    expect(status).toEqual({ status: 404, code: 'api_key_not_found' });
    expect((await bearer(other.key, 'GET', '/v1/agents')).status).toBe(200);
    await context.close();
  });
});
